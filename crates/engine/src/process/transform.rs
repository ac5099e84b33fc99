//! The spawn-time transform: the one step every start passes through
//! between the checks and the process — confined or not, on a terminal or
//! not, from a command's supervisor or from the git helper.
//!
//! Theory of operation: by the time a start reaches here, the policy and cwd
//! checks have passed on the argv the caller gave, so everything the caller
//! is told (refusals, `command` in a status) speaks of that argv. [`start`]
//! then turns the checked [`Request`] and its confinement plan into a
//! [`Route`] ([`route`]: which spawn creates the process, piped or on a
//! terminal, inside a namespace view or not), rewrites the request for it
//! (a confined start's private temp directory goes into its environment)
//! and runs that route. Every route keeps the shape the rest of the engine
//! relies on: no shell, no fork of the host (the clone-based spawn shares
//! its memory until the exec; only the standard route, which the standard
//! paths switch selects, lets `Command` fork), the leader heading its own
//! session and so its own group, created in its cgroup.
//!
//! Callers have two doors, both here: [`spawn`] for an unconfined start,
//! which runs [`start`] on the caller's own thread, and [`spawn_confined`]
//! for a confined one (SPEC §8), which hands the start to a confining
//! thread ([`super::confine`]) — the Landlock domain a command inherits is
//! its spawning thread's, so that thread restricts itself first and then
//! runs [`start`] with the plan. The thread differs; the step, and so the
//! choice of spawn, is the same.
//!
//! A platform adds its spawns as routes: Linux has all of them; macOS
//! starts through its own posix_spawn (pipes or a terminal, never a view);
//! Windows has one route, [`Route::Job`]: its own `CreateProcessW` into a
//! Job Object of the command's own (a terminal and confinement are refused
//! there before a start gets this far).
//!
//! What it costs: [`route`] is a `match` on values the request already
//! holds; nothing is allocated and no system call is added on the way to
//! the spawn.

use std::io;

use super::confine::{Deliver, Guard, Start};
#[cfg(not(windows))]
use super::launch::Input;
pub use super::launch::Request;
use super::launch::Spawned;
#[cfg(not(windows))]
use super::plan::Level;
use super::plan::Plan;

/// How one start is carried out, chosen by [`route`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'p> {
    /// stdin from /dev/null or a pipe, stdout and stderr piped, through the
    /// engine's own spawn: clone-based on Linux ([`super::vfork`]), its own
    /// posix_spawn on macOS ([`super::posix_spawn`]).
    Pipes,
    /// As [`Route::Pipes`], through `std::process::Command` (Linux, under
    /// the standard paths switch: [`super::std_spawn`]). Unconfined starts
    /// only: a confined one needs the engine's code between clone and exec.
    Standard,
    /// A new pseudo-terminal of this size, the controlling terminal of the
    /// command's new session.
    Terminal {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// As [`Route::Pipes`], inside the namespace view of a `"full"` plan
    /// (Linux: [`super::sandbox`]).
    View(&'p Plan),
    /// As [`Route::Terminal`], inside the namespace view of a `"full"` plan,
    /// the terminal the one node of its `/dev/pts`.
    TerminalInView {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
        /// The plan whose view the command runs in.
        plan: &'p Plan,
    },
    /// Windows: stdin from NUL or a pipe, stdout and stderr piped, the
    /// process created suspended in a Job Object of its own and then resumed
    /// (`process/windows/spawn.rs`). The only route there.
    Job,
}

/// The route of `req` under `confinement` (`None`: unconfined). A plan of
/// the `"landlock"` level takes the plain routes — its thread is restricted
/// already — but never the standard one.
pub fn route<'p>(req: &Request<'_>, confinement: Option<&'p Plan>) -> Route<'p> {
    #[cfg(windows)]
    {
        let _ = (req, confinement);
        Route::Job
    }
    #[cfg(not(windows))]
    route_unix(req, confinement)
}

#[cfg(not(windows))]
fn route_unix<'p>(req: &Request<'_>, confinement: Option<&'p Plan>) -> Route<'p> {
    let view = confinement.filter(|p| p.level == Level::Full);
    match (req.input, view) {
        (Input::Terminal { cols, rows }, None) => Route::Terminal { cols, rows },
        (Input::Terminal { cols, rows }, Some(plan)) => Route::TerminalInView { cols, rows, plan },
        (_, Some(plan)) => Route::View(plan),
        #[cfg(target_os = "linux")]
        _ if confinement.is_none() && super::std_spawn::enabled() => Route::Standard,
        _ => Route::Pipes,
    }
}

/// Start `req` under `confinement` (`None`: unconfined): the route
/// [`route`] chooses, with a confined start's private temp directory (from
/// its plan) given to it as `TMPDIR`, `TMP` and `TEMP`.
///
/// A confined start must call this on its confining thread, once that
/// thread has restricted itself (see the module's documentation).
pub fn start(req: &Request<'_>, confinement: Option<&Plan>) -> io::Result<Spawned> {
    let confined;
    let req = match confinement {
        Some(plan) => {
            confined = Request {
                tmp: plan.private_tmp.as_deref(),
                ..*req
            };
            &confined
        }
        None => req,
    };
    match route(req, confinement) {
        #[cfg(windows)]
        Route::Job => super::spawn::spawn(req),
        // Never chosen on Windows (see [`route`]).
        #[cfg(windows)]
        _ => Err(io::Error::from(io::ErrorKind::Unsupported)),
        // Never chosen off Windows (see [`route`]).
        #[cfg(not(windows))]
        Route::Job => Err(io::Error::from(io::ErrorKind::Unsupported)),
        #[cfg(not(windows))]
        Route::Pipes => super::spawn::spawn_pipes(req, None),
        #[cfg(target_os = "linux")]
        Route::Standard => super::std_spawn::spawn(req),
        #[cfg(not(windows))]
        Route::Terminal { cols, rows } => super::spawn::spawn_in_terminal(req, cols, rows, None),
        #[cfg(not(windows))]
        Route::View(plan) => super::spawn::spawn_pipes(req, Some(plan)),
        #[cfg(not(windows))]
        Route::TerminalInView { cols, rows, plan } => {
            super::spawn::spawn_in_terminal(req, cols, rows, Some(plan))
        }
        // Never chosen elsewhere (see [`route`]).
        #[cfg(all(unix, not(target_os = "linux")))]
        Route::Standard => super::spawn::spawn_pipes(req, None),
    }
}

/// Start the unconfined `launch` ([`start`] without a plan).
pub fn spawn(launch: Request<'_>) -> io::Result<Spawned> {
    start(&launch, None)
}

/// Start the confined `confined` (SPEC §8) without waiting: it is handed to
/// a confining thread, which restricts itself as the plan says and then
/// calls [`start`] with the plan; `guard` runs around that call there and
/// `deliver` gets its result (see
/// [`confine`](super::confine#theory-of-operation)).
pub fn spawn_confined(confined: Start, guard: Guard, deliver: Deliver) {
    super::confine::spawn_detached(confined, guard, deliver, start);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::path::PathBuf;

    fn plan(level: Level) -> Plan {
        Plan {
            system: Vec::new().into(),
            rules: Vec::new(),
            private_tmp: Some(PathBuf::from("/t/private")),
            network: false,
            protect: Vec::new(),
            level,
        }
    }

    #[test]
    fn each_start_gets_the_route_its_input_and_confinement_ask_for() {
        let dir = std::fs::File::open("/").unwrap();
        let argv = ["true".to_string()];
        let req = |input| Request {
            argv: &argv,
            dir: dir.as_fd(),
            env: None,
            input,
            tmp: None,
            cgroup: None,
        };
        let terminal = Input::Terminal { cols: 80, rows: 24 };
        let (full, landlock) = (plan(Level::Full), plan(Level::Landlock));
        // Unconfined: pipes (or the standard spawn, when switched on), or a
        // terminal whatever the switch says.
        let plain = if cfg!(target_os = "linux") && super::super::std_spawn::enabled() {
            Route::Standard
        } else {
            Route::Pipes
        };
        assert_eq!(route(&req(Input::Null), None), plain);
        assert_eq!(route(&req(Input::Pipe), None), plain);
        assert_eq!(
            route(&req(terminal), None),
            Route::Terminal { cols: 80, rows: 24 }
        );
        // Landlock only: the engine's own spawn, never the standard one.
        assert_eq!(route(&req(Input::Pipe), Some(&landlock)), Route::Pipes);
        assert_eq!(
            route(&req(terminal), Some(&landlock)),
            Route::Terminal { cols: 80, rows: 24 }
        );
        // "full": in the plan's view.
        assert_eq!(route(&req(Input::Null), Some(&full)), Route::View(&full));
        assert_eq!(
            route(&req(terminal), Some(&full)),
            Route::TerminalInView {
                cols: 80,
                rows: 24,
                plan: &full
            }
        );
    }
}
