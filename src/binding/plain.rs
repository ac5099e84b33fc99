//! The standard path of the objects made on every start and settle: under
//! `NEUROLINK_COMMANDS_STANDARD_PATHS=1` a status, a handle and an artifact
//! reference are these twins converted by napi-rs's serde support
//! (`Env::to_js_value`) instead of built by the adapter's makers
//! ([`super::factory`]). Same keys in the same order, same values, a key
//! absent when its value is unknown: the same objects. (napi-rs's
//! `#[napi(object)]` conversion would define the keys always present first
//! and the optional ones after them — a different key order, which
//! `JSON.stringify` of a status would show and `objects.test.ts` asserts.)

use napi::bindgen_prelude::{JsValue, ToNapiValue};
use napi::{sys, Env};
use serde::Serialize;

use super::outputs::{NativeArtifactRef, NativeHandle, NativeStatus};

/// `v` converted by napi-rs's serde support.
///
/// # Safety
/// `env` is the live environment of the current call, on its own thread.
pub unsafe fn to_js<T: Serialize>(env: sys::napi_env, v: &T) -> napi::Result<sys::napi_value> {
    Env::from_raw(env).to_js_value(v).map(|u| u.raw())
}

/// A command's status on the standard path (`NativeStatus`'s twin).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlainStatus {
    pub task_id: String,
    pub label: String,
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub duration_ms: f64,
    pub stdout_bytes: f64,
    pub stderr_bytes: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout: Option<PlainArtifactRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<PlainArtifactRef>,
    pub tail_preview: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub confined: bool,
    pub containment: String,
    pub stdin_open: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logs_removed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confinement_notes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<PlainUsage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<bool>,
}

/// What a settled command's tree used, on the standard path.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlainUsage {
    pub cpu_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<f64>,
}

/// A banked stream on the standard path.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlainArtifactRef {
    pub artifact_id: String,
    pub label: String,
    pub kind: String,
    pub size_bytes: f64,
    pub preview: String,
    pub read_back_hint: String,
}

/// What a start returns, on the standard path.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
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
            usage: s.usage.map(|u| PlainUsage {
                cpu_ms: u.cpu_ms,
                peak_memory_bytes: u.peak_memory_bytes,
            }),
            limit: s.limit,
            recovered: s.recovered,
        }
    }
}

/// `ToNapiValue` of a twin: its serde conversion.
macro_rules! through_serde {
    ($($ty:ty),*) => {$(
        impl ToNapiValue for $ty {
            unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
                // SAFETY: napi-rs calls this with the live environment of the call.
                unsafe { to_js(env, &val) }
            }
        }
    )*};
}

through_serde!(PlainStatus, PlainArtifactRef, PlainHandle);
