//! What this kernel can enforce, measured once, and what a confined start
//! at a level would lack.

use std::sync::OnceLock;

use super::plan::Level;

/// The Landlock ABI confinement needs: file rights with truncation (3), TCP
/// rules (4), signal and abstract-socket scopes (6).
pub const NEEDED_ABI: u32 = 6;

/// Test-only: caps the Landlock ABI the engine believes the kernel offers
/// (read once per process). Used by the test suites to show the fail-closed
/// refusal on a kernel that does have Landlock; never set it in production.
pub const TEST_ABI_VAR: &str = "NEUROLINK_COMMANDS_TEST_LANDLOCK_ABI";
/// Test-only: `0` makes the engine believe the kernel has no seccomp filters.
pub const TEST_SECCOMP_VAR: &str = "NEUROLINK_COMMANDS_TEST_SECCOMP";

/// What this kernel can enforce (`confinementSupport()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: u32,
    /// Files can be confined (ABI ≥ 3: including truncation).
    pub filesystem: bool,
    /// TCP connect/bind can be refused (ABI ≥ 4).
    pub network: bool,
    /// Signals and abstract unix sockets are scoped (ABI ≥ 6).
    pub signals: bool,
    /// seccomp filters are available (for the socket-family filter).
    pub seccomp: bool,
    /// The engine can start a command in new user, mount and PID (and
    /// network) namespaces: the `"full"` level's sandbox.
    pub namespaces: bool,
}

/// This kernel's support, measured once.
pub fn support() -> Support {
    static S: OnceLock<Support> = OnceLock::new();
    *S.get_or_init(|| {
        let mut abi = kernel_abi();
        if let Some(cap) = std::env::var(TEST_ABI_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
        {
            abi = abi.min(cap);
        }
        let seccomp = kernel_seccomp() && std::env::var(TEST_SECCOMP_VAR).as_deref() != Ok("0");
        Support {
            landlock_abi: abi,
            filesystem: abi >= 3,
            network: abi >= 4,
            signals: abi >= 6,
            seccomp,
            namespaces: namespaces_available().is_ok(),
        }
    })
}

/// Why the namespace sandbox cannot be made here (`None`: it can).
pub fn namespaces_why_not() -> Option<String> {
    namespaces_available().err()
}

/// Test-only: `0` makes the engine believe user namespaces are refused.
pub const TEST_NAMESPACES_VAR: &str = "NEUROLINK_COMMANDS_TEST_NAMESPACES";

/// Whether this host lets the engine make the namespaces a `"full"`
/// confinement needs, measured once by starting a child that does all of
/// it but the exec; the reason when it does not.
fn namespaces_available() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        static R: OnceLock<Result<(), String>> = OnceLock::new();
        R.get_or_init(namespaces_probe).clone()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err("namespaces are a Linux feature".into())
    }
}

/// The probe of [`namespaces_available`]: the namespace sandbox's view of
/// the program trees, entered by the clone-based spawn running `true`.
/// Here, above both, so that neither the sandbox nor the spawn needs the
/// other to be measured.
#[cfg(target_os = "linux")]
fn namespaces_probe() -> Result<(), String> {
    use super::plan::{Grant, Plan};
    use std::os::fd::AsFd;
    use std::path::PathBuf;
    if std::env::var(TEST_NAMESPACES_VAR).as_deref() == Ok("0") {
        return Err(format!(
            "user namespaces are switched off for this process ({TEST_NAMESPACES_VAR}=0)"
        ));
    }
    let dir = std::fs::File::open("/usr").map_err(|e| e.to_string())?;
    let plan = Plan {
        system: [
            "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
        ]
        .iter()
        .map(|t| (PathBuf::from(t), Grant::Read))
        .collect(),
        rules: Vec::new(),
        private_tmp: None,
        network: false,
        protect: Vec::new(),
        level: Level::Full,
    };
    let view =
        super::sandbox::View::prepare(&plan, dir.as_fd(), None).map_err(|e| e.to_string())?;
    match super::vfork::probe(&view, dir.as_fd()) {
        Ok(()) => Ok(()),
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSPC) => "user namespaces are refused on this host (user.max_user_namespaces is 0 in the host's user namespace)".to_string(),
            Some(libc::EPERM) | Some(libc::EACCES) => format!(
                "user namespaces are refused on this host ({e}: kernel.unprivileged_userns_clone, an AppArmor restriction or a container's seccomp profile)"
            ),
            Some(libc::EINVAL) | Some(libc::ENOSYS) => format!(
                "this kernel (or an emulator such as qemu-user) does not create user, mount and PID namespaces for a new process ({e})"
            ),
            _ => format!("the namespace sandbox could not be set up on this host ({e})"),
        }),
    }
}

/// What this kernel lacks to enforce a `"full"` confinement (with or
/// without network), phrased for a refusal; `None` when it can enforce all
/// of it.
pub fn missing(network: bool) -> Option<String> {
    missing_at(network, Level::Full)
}

/// What this kernel or host lacks to enforce a confinement of `level`.
pub fn missing_at(network: bool, level: Level) -> Option<String> {
    let base = missing_landlock(network);
    if level == Level::Landlock || cfg!(not(target_os = "linux")) {
        return base;
    }
    // Landlock's own absence is told first: without it nothing runs
    // confined, whatever the level.
    if base.is_some() {
        return base;
    }
    namespaces_available().err().map(|why| {
        format!(
            "{why}. The \"full\" level runs every confined command in its own user, mount and PID namespaces; without them the start is refused. Ways out: allow user namespaces (sysctl user.max_user_namespaces, kernel.apparmor_restrict_unprivileged_userns=0, or the container's seccomp profile), set confine.level: \"landlock\" in the policy (Landlock and seccomp only, with the gaps the documentation lists), or confine: false"
        )
    })
}

fn missing_landlock(network: bool) -> Option<String> {
    if cfg!(not(target_os = "linux")) {
        return Some(format!(
            "kernel confinement (Landlock and seccomp) is available on Linux only, and this is {}",
            std::env::consts::OS
        ));
    }
    let s = support();
    let mut lacks = Vec::new();
    if s.landlock_abi < NEEDED_ABI {
        lacks.push(format!(
            "Landlock ABI {NEEDED_ABI} (files, TCP and signal scoping; Linux 6.12 or later with Landlock enabled) is needed, this kernel offers {}",
            if s.landlock_abi == 0 {
                "none (ABI 0)".to_string()
            } else {
                format!("ABI {}", s.landlock_abi)
            }
        ));
    }
    if !s.seccomp {
        lacks.push(
            if network {
                "seccomp filters (to refuse BPF, perf events, keyrings, device nodes and terminal input injection) are not available"
            } else {
                "seccomp filters (to refuse BPF, perf events, keyrings, device nodes, terminal input injection, and UDP and non-unix sockets under network: false) are not available"
            }
            .to_string(),
        );
    }
    (!lacks.is_empty()).then(|| lacks.join("; "))
}

#[cfg(target_os = "linux")]
fn kernel_abi() -> u32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only asks for the ABI version; it reads no memory and creates nothing.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if v > 0 {
        v as u32
    } else {
        0
    }
}

#[cfg(target_os = "linux")]
fn kernel_seccomp() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Seccomp_filters:")))
        .unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
fn kernel_abi() -> u32 {
    0
}

#[cfg(not(target_os = "linux"))]
fn kernel_seccomp() -> bool {
    false
}
