//! Engine values → the JS objects of the contract. Optional fields are
//! absent (never `null`) when unknown.

use engine::commands::{Handle, ListEntry};
use engine::gitrun::{GitResult, GitSettings};
use engine::paging::Page;
use engine::record::{ArtifactRef, Status};
use engine::registry::Counts;
use std::ffi::CStr;

use napi::bindgen_prelude::{ToNapiValue, TypeName, Utf16String};
use napi::{sys, ValueType};
use napi_derive::napi;

use super::factory::{self, Shape};

/// Page text as JS receives it: a one-byte (Latin-1) string when every unit
/// fits in a byte, which V8 stores and copies at half the size, else a
/// two-byte string. Either way the same string, unit for unit.
pub struct PageText(pub Vec<u16>);

impl TypeName for PageText {
    fn type_name() -> &'static str {
        "String"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ToNapiValue for PageText {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let units = val.0;
        let mut out = std::ptr::null_mut();
        let status = if units.iter().all(|&u| u < 0x100) {
            let bytes: Vec<u8> = units.iter().map(|&u| u as u8).collect();
            // SAFETY: `bytes` is valid for `len` bytes for the duration of
            // the call, which copies them; `out` is a valid place for the result.
            unsafe {
                sys::napi_create_string_latin1(
                    env,
                    bytes.as_ptr().cast(),
                    bytes.len() as isize,
                    &mut out,
                )
            }
        } else {
            // SAFETY: as above, for `units`.
            unsafe {
                sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, &mut out)
            }
        };
        if status == sys::Status::napi_ok {
            Ok(out)
        } else {
            Err(napi::Error::new(
                napi::Status::from(status),
                "cannot create the page's string",
            ))
        }
    }
}

/// A banked stream.
#[napi(object, object_to_js = false)]
pub struct NativeArtifactRef {
    pub artifact_id: String,
    pub label: String,
    pub kind: String,
    pub size_bytes: f64,
    pub preview: String,
    pub read_back_hint: String,
}

impl From<ArtifactRef> for NativeArtifactRef {
    fn from(r: ArtifactRef) -> Self {
        NativeArtifactRef {
            artifact_id: r.artifact_id,
            label: r.label,
            kind: r.kind,
            size_bytes: r.size_bytes,
            preview: r.preview,
            read_back_hint: r.read_back_hint,
        }
    }
}

/// A command's status.
#[napi(object, object_to_js = false)]
pub struct NativeStatus {
    pub task_id: String,
    pub label: String,
    pub state: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub duration_ms: f64,
    pub stdout_bytes: f64,
    pub stderr_bytes: f64,
    pub stdout: Option<NativeArtifactRef>,
    pub stderr: Option<NativeArtifactRef>,
    pub tail_preview: String,
    pub error: Option<String>,
    pub confined: bool,
    #[napi(ts_type = "'tree' | 'group'")]
    pub containment: String,
    pub stdin_open: bool,
    pub waiting_for_input: Option<bool>,
    pub logs_removed: Option<bool>,
    /// What kernel confinement refused it (absent when nothing was).
    pub confinement_notes: Option<Vec<String>>,
    /// What its tree used (settled, where measurable).
    pub usage: Option<NativeUsage>,
    /// The resource limit that stopped it.
    #[napi(ts_type = "'memory' | 'processes' | 'cpu'")]
    pub limit: Option<String>,
    /// Recovered from an earlier host process's manifest.
    pub recovered: Option<bool>,
}

/// What a settled command's tree used.
#[napi(object)]
pub struct NativeUsage {
    /// CPU time of the whole tree, in ms.
    pub cpu_ms: f64,
    /// The tree's peak memory in bytes (where a memory cgroup measured it).
    pub peak_memory_bytes: Option<f64>,
}

impl From<Status> for NativeStatus {
    fn from(s: Status) -> Self {
        NativeStatus {
            task_id: s.task_id,
            label: s.label,
            state: s.state.as_str().to_string(),
            exit_code: s.exit_code,
            signal: s.signal,
            duration_ms: s.duration_ms,
            stdout_bytes: s.stdout_bytes,
            stderr_bytes: s.stderr_bytes,
            stdout: s.stdout.map(Into::into),
            stderr: s.stderr.map(Into::into),
            tail_preview: s.tail_preview,
            error: s.error,
            confined: s.confined,
            containment: s.containment.as_str().to_string(),
            stdin_open: s.stdin_open,
            waiting_for_input: s.waiting_for_input,
            logs_removed: s.logs_removed.then_some(true),
            confinement_notes: (!s.confinement_notes.is_empty()).then_some(s.confinement_notes),
            usage: s.usage.map(|u| NativeUsage {
                cpu_ms: u.cpu_ms,
                peak_memory_bytes: u.peak_memory_bytes.map(|b| b as f64),
            }),
            limit: s.limit.map(|k| k.as_str().to_string()),
            recovered: s.recovered.then_some(true),
        }
    }
}

/// What a start returns.
#[napi(object, object_to_js = false)]
pub struct NativeHandle {
    pub task_id: String,
    pub argv: Vec<String>,
    pub started_at: f64,
}

impl From<Handle> for NativeHandle {
    fn from(h: Handle) -> Self {
        NativeHandle {
            task_id: h.task_id,
            argv: h.argv,
            started_at: h.started_at,
        }
    }
}

/// `v` as a JS value of `env`.
///
/// # Safety
/// `env` is the live environment of the current call.
unsafe fn js<T: ToNapiValue>(env: sys::napi_env, v: T) -> napi::Result<Option<sys::napi_value>> {
    // SAFETY: the caller's contract.
    Ok(Some(unsafe { T::to_napi_value(env, v) }?))
}

/// `v` as a JS value of `env`, or `None` (the key left absent).
///
/// # Safety
/// As [`js`].
unsafe fn js_opt<T: ToNapiValue>(
    env: sys::napi_env,
    v: Option<T>,
) -> napi::Result<Option<sys::napi_value>> {
    // SAFETY: the caller's contract.
    v.map(|v| unsafe { T::to_napi_value(env, v) }).transpose()
}

/// `impl ToNapiValue` for an object built by the maker the adapter
/// registered for its shape ([`factory::make`]): one line per property, in
/// the order of the object's keys (and of the maker's arguments), naming the
/// key, `js` for a value always present or `js_opt` for one whose absence
/// leaves the key out, and the field.
/// Under the standard paths switch the object is its `plain` twin's,
/// built by napi-rs ([`super::plain`]).
macro_rules! built_by_maker {
    ($ty:ty, $plain:ty, $shape:expr, $what:literal, { $($key:literal: $kind:ident($field:ident)),* $(,)? }) => {
        impl ToNapiValue for $ty {
            unsafe fn to_napi_value(
                env: sys::napi_env,
                val: Self,
            ) -> napi::Result<sys::napi_value> {
                super::panic::converting(env, $what, || {
                    if engine::process::std_spawn::enabled() {
                        // SAFETY: as below; napi-rs's conversion of the twin.
                        return unsafe { <$plain>::to_napi_value(env, val.into()) };
                    }
                    let keys: [&CStr; _] = [$($key),*];
                    // SAFETY: napi-rs calls this with the live environment of
                    // the call, on its thread; every value below is made in it.
                    unsafe {
                        let values = [$($kind(env, val.$field)?),*];
                        factory::make(env, $shape, &keys, values)
                    }
                })
            }
        }
    };
}

built_by_maker!(NativeStatus, super::plain::PlainStatus, Shape::Status, "status", {
    c"taskId": js(task_id),
    c"label": js(label),
    c"state": js(state),
    c"exitCode": js_opt(exit_code),
    c"signal": js_opt(signal),
    c"durationMs": js(duration_ms),
    c"stdoutBytes": js(stdout_bytes),
    c"stderrBytes": js(stderr_bytes),
    c"stdout": js_opt(stdout),
    c"stderr": js_opt(stderr),
    c"tailPreview": js(tail_preview),
    c"error": js_opt(error),
    c"confined": js(confined),
    c"containment": js(containment),
    c"stdinOpen": js(stdin_open),
    c"waitingForInput": js_opt(waiting_for_input),
    c"logsRemoved": js_opt(logs_removed),
    c"confinementNotes": js_opt(confinement_notes),
    c"usage": js_opt(usage),
    c"limit": js_opt(limit),
    c"recovered": js_opt(recovered),
});

built_by_maker!(NativeArtifactRef, super::plain::PlainArtifactRef, Shape::ArtifactRef, "artifactRef", {
    c"artifactId": js(artifact_id),
    c"label": js(label),
    c"kind": js(kind),
    c"sizeBytes": js(size_bytes),
    c"preview": js(preview),
    c"readBackHint": js(read_back_hint),
});

built_by_maker!(NativeHandle, super::plain::PlainHandle, Shape::Handle, "handle", {
    c"taskId": js(task_id),
    c"argv": js(argv),
    c"startedAt": js(started_at),
});

/// A page of output (content may hold half a surrogate pair, as `slice` would).
#[napi(object, object_from_js = false)]
pub struct NativePage {
    pub task_id: String,
    pub stream: String,
    #[napi(ts_type = "string")]
    pub content: PageText,
    pub offset: f64,
    pub limit: f64,
    pub total_size: f64,
    pub has_more: bool,
}

impl NativePage {
    /// Attach the page to a task and stream.
    pub fn new(task_id: &str, stream: &str, p: Page) -> Self {
        NativePage {
            task_id: task_id.to_string(),
            stream: stream.to_string(),
            content: PageText(p.content),
            offset: p.offset as f64,
            limit: p.limit as f64,
            total_size: p.total_size as f64,
            has_more: p.has_more,
        }
    }
}

/// A page of a built-in artifact.
#[napi(object)]
pub struct NativeArtifactPage {
    pub artifact_id: String,
    pub content: Utf16String,
    pub offset: f64,
    pub limit: f64,
    pub total_size: f64,
    pub has_more: bool,
}

/// `{ running, finished }`.
#[napi(object)]
pub struct NativeCounts {
    pub running: u32,
    pub finished: u32,
}

impl From<Counts> for NativeCounts {
    fn from(c: Counts) -> Self {
        NativeCounts {
            running: c.running,
            finished: c.finished,
        }
    }
}

/// One row of the list.
#[napi(object)]
pub struct NativeListEntry {
    pub task_id: String,
    pub label: String,
    pub argv: Vec<String>,
    pub cwd: String,
    pub state: String,
    pub started_at: f64,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub killed: bool,
    #[napi(ts_type = "'tree' | 'group'")]
    pub containment: String,
    pub waiting_for_input: Option<bool>,
}

impl From<ListEntry> for NativeListEntry {
    fn from(e: ListEntry) -> Self {
        NativeListEntry {
            task_id: e.task_id,
            label: e.label,
            argv: e.argv,
            cwd: e.cwd,
            state: e.state.as_str().to_string(),
            started_at: e.started_at,
            running: e.running,
            exit_code: e.exit_code,
            signal: e.signal,
            killed: e.killed,
            containment: e.containment.as_str().to_string(),
            waiting_for_input: e.waiting_for_input,
        }
    }
}

/// What `readNewBackgroundCommandOutput` returns.
#[napi(object)]
pub struct NativeNewOutput {
    pub task_id: String,
    pub stream: String,
    pub content: Utf16String,
    pub offset: f64,
    pub total_size: f64,
    pub has_more: bool,
    pub state: String,
    pub running: bool,
}

/// The git settings in force.
#[napi(object)]
pub struct NativeGitSettings {
    pub repo_root: String,
    pub timeout_ms: f64,
    pub max_output_bytes: f64,
    pub preview_chars: u32,
    pub git_executable: String,
    pub confined: bool,
    pub confined_why_not: Option<String>,
}

impl From<GitSettings> for NativeGitSettings {
    fn from(s: GitSettings) -> Self {
        NativeGitSettings {
            repo_root: s.repo_root.to_string_lossy().into_owned(),
            timeout_ms: s.timeout_ms,
            max_output_bytes: s.max_output_bytes as f64,
            preview_chars: s.preview_chars,
            git_executable: s.git_executable,
            confined: s.confined,
            confined_why_not: s.confined_why_not,
        }
    }
}

/// The result of one git run.
#[napi(object)]
pub struct NativeGitResult {
    pub command: Vec<String>,
    pub ok: bool,
    pub exit_code: Option<i32>,
    pub state: String,
    pub preview: String,
    pub output: NativeArtifactRef,
    pub read_back_hint: String,
    pub stderr_preview: Option<String>,
    pub command_line: String,
}

impl From<GitResult> for NativeGitResult {
    fn from(r: GitResult) -> Self {
        NativeGitResult {
            command: r.command,
            ok: r.ok,
            exit_code: r.exit_code,
            state: r.state.as_str().to_string(),
            preview: r.preview,
            output: r.output.into(),
            read_back_hint: r.read_back_hint,
            stderr_preview: r.stderr_preview,
            command_line: r.command_line,
        }
    }
}

/// What `awaitBackgroundCommandOutput` resolves to.
#[napi(object)]
pub struct NativeWaitResult {
    pub matched: bool,
    pub stream: Option<String>,
    pub offset: Option<f64>,
    pub line: Option<String>,
    pub status: NativeStatus,
}

impl From<engine::jobs::waits::WaitOutcome> for NativeWaitResult {
    fn from(o: engine::jobs::waits::WaitOutcome) -> Self {
        let (stream, hit) = match o.found {
            Some((s, h)) => (Some(s.name().to_string()), Some(h)),
            None => (None, None),
        };
        NativeWaitResult {
            matched: hit.is_some(),
            stream,
            offset: hit.as_ref().map(|h| h.offset as f64),
            line: hit.map(|h| h.line),
            status: o.status.into(),
        }
    }
}

/// The log settings in force (`configureLogs`).
#[napi(object)]
pub struct NativeLogSettings {
    pub dir: String,
    pub max_total_bytes: Option<f64>,
    pub max_age_ms: Option<f64>,
    pub remove_on_exit: bool,
    pub ended_retention_ms: f64,
}

impl From<engine::jobs::retention::LogSettings> for NativeLogSettings {
    fn from(s: engine::jobs::retention::LogSettings) -> Self {
        NativeLogSettings {
            dir: s.dir,
            max_total_bytes: s.max_total_bytes,
            max_age_ms: s.max_age_ms,
            remove_on_exit: s.remove_on_exit,
            ended_retention_ms: s.ended_retention_ms,
        }
    }
}

/// One matching line of a search.
#[napi(object)]
pub struct NativeLineMatch {
    pub line: f64,
    pub offset: f64,
    pub text: String,
}

/// What `searchBackgroundCommandOutput` resolves to.
#[napi(object)]
pub struct NativeSearchResult {
    pub matches: Vec<NativeLineMatch>,
    pub has_more: bool,
    pub scanned_to: f64,
}

impl From<engine::text::matching::SearchResult> for NativeSearchResult {
    fn from(r: engine::text::matching::SearchResult) -> Self {
        NativeSearchResult {
            matches: r
                .matches
                .into_iter()
                .map(|m| NativeLineMatch {
                    line: m.line as f64,
                    offset: m.offset as f64,
                    text: m.text,
                })
                .collect(),
            has_more: r.has_more,
            scanned_to: r.scanned_to as f64,
        }
    }
}

/// What a prune removed.
#[napi(object)]
pub struct NativePruneResult {
    pub removed: u32,
    pub freed_bytes: f64,
}
