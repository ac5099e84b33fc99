//! The standard path of the objects made on every start and settle: under
//! `NEUROLINK_COMMANDS_STANDARD_PATHS=1` a status, a handle and an artifact
//! reference are built by napi-rs's own `#[napi(object)]` conversion of
//! these twins instead of by the adapter's makers ([`super::factory`]).
//! Same keys, same values, absent when unknown; napi-rs defines the keys
//! that are always present first and adds the optional ones after them, so
//! only the order of the keys differs from the fast path.

use napi_derive::napi;

use super::outputs::{NativeArtifactRef, NativeHandle, NativeStatus, NativeUsage};

/// A command's status, as napi-rs builds it (the standard path of
/// `NativeStatus`).
#[napi(object, object_from_js = false)]
pub struct PlainStatus {
    pub task_id: String,
    pub label: String,
    pub state: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub duration_ms: f64,
    pub stdout_bytes: f64,
    pub stderr_bytes: f64,
    pub stdout: Option<PlainArtifactRef>,
    pub stderr: Option<PlainArtifactRef>,
    pub tail_preview: String,
    pub error: Option<String>,
    pub confined: bool,
    #[napi(ts_type = "'tree' | 'group'")]
    pub containment: String,
    pub stdin_open: bool,
    pub waiting_for_input: Option<bool>,
    pub logs_removed: Option<bool>,
    pub confinement_notes: Option<Vec<String>>,
    pub usage: Option<NativeUsage>,
    #[napi(ts_type = "'memory' | 'processes' | 'cpu'")]
    pub limit: Option<String>,
    pub recovered: Option<bool>,
}

/// A banked stream, as napi-rs builds it.
#[napi(object, object_from_js = false)]
pub struct PlainArtifactRef {
    pub artifact_id: String,
    pub label: String,
    pub kind: String,
    pub size_bytes: f64,
    pub preview: String,
    pub read_back_hint: String,
}

/// What a start returns, as napi-rs builds it.
#[napi(object, object_from_js = false)]
pub struct PlainHandle {
    pub task_id: String,
    pub argv: Vec<String>,
    pub started_at: f64,
}

impl From<NativeArtifactRef> for PlainArtifactRef {
    fn from(r: NativeArtifactRef) -> Self {
        PlainArtifactRef {
            artifact_id: r.artifact_id,
            label: r.label,
            kind: r.kind,
            size_bytes: r.size_bytes,
            preview: r.preview,
            read_back_hint: r.read_back_hint,
        }
    }
}

impl From<NativeHandle> for PlainHandle {
    fn from(h: NativeHandle) -> Self {
        PlainHandle {
            task_id: h.task_id,
            argv: h.argv,
            started_at: h.started_at,
        }
    }
}

impl From<NativeStatus> for PlainStatus {
    fn from(s: NativeStatus) -> Self {
        PlainStatus {
            task_id: s.task_id,
            label: s.label,
            state: s.state,
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
            containment: s.containment,
            stdin_open: s.stdin_open,
            waiting_for_input: s.waiting_for_input,
            logs_removed: s.logs_removed,
            confinement_notes: s.confinement_notes,
            usage: s.usage,
            limit: s.limit,
            recovered: s.recovered,
        }
    }
}
