//! Commands' settled output as artifacts: the host bank's answers and the
//! built-in bank's reads.

use boundary::boundary;
use engine::bank;
use engine::errors::EngineError;
use napi::bindgen_prelude::{PromiseRaw, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::convert::{self, describe, kind};
use super::inputs;
use super::outputs::*;
use crate::{blocking, js_err, promise, Code};

/// The host bank's answer for both streams: each a value the bank resolved
/// to, or the reason it failed.
#[boundary]
#[napi]
pub fn complete_banking(
    task_id: String,
    stdout: Unknown,
    stdout_error: Option<String>,
    stderr: Unknown,
    stderr_error: Option<String>,
) -> bool {
    let outcomes = [
        inputs::bank_outcome(&stdout, stdout_error),
        inputs::bank_outcome(&stderr, stderr_error),
    ];
    bank::complete_banking(&crate::eng().registry, &task_id, outcomes)
}

/// What a host bank call needs: `[label, sessionId, hostId]`.
#[boundary]
#[napi]
pub fn bank_request(task_id: String) -> napi::Result<(String, String, u32), Code> {
    let rec = crate::eng().registry.by_id(&task_id).ok_or_else(|| {
        js_err(EngineError::Other(format!(
            "No background command \"{task_id}\""
        )))
    })?;
    Ok((rec.label(), rec.session.to_string(), rec.host))
}

/// An `artifactId` argument as a string.
fn artifact_id(v: &Unknown) -> napi::Result<String, Code> {
    if kind(v) == ValueType::String {
        convert::as_string(v, "artifactId").map_err(js_err)
    } else {
        Err(js_err(EngineError::BadInput(format!(
            "artifactId must be a string (got {})",
            describe(v)
        ))))
    }
}

/// The whole text of a built-in artifact.
#[boundary]
#[napi(ts_return_type = "Promise<string>")]
pub fn read_artifact<'e>(
    env: &'e Env,
    artifact_id: Unknown,
) -> napi::Result<PromiseRaw<'e, String>, Code> {
    let id = self::artifact_id(&artifact_id)?;
    promise(
        env,
        blocking(move || bank::read_artifact(&crate::eng().registry, &id)),
    )
}

/// One page of a built-in artifact (`window` is `{ offset?, limit? }`);
/// with `host_id`, only of that host's commands (the `command_output` tool).
#[boundary]
#[napi(ts_return_type = "Promise<NativeArtifactPage>")]
pub fn retrieve_artifact<'e>(
    env: &'e Env,
    artifact_id: Unknown,
    window: Unknown,
    host_id: Option<u32>,
) -> napi::Result<PromiseRaw<'e, NativeArtifactPage>, Code> {
    let id = self::artifact_id(&artifact_id)?;
    let w = inputs::window_request(&window, "options").map_err(js_err)?;
    promise(
        env,
        blocking(move || {
            bank::retrieve_artifact(&crate::eng().registry, &id, w, host_id).map(|p| {
                NativeArtifactPage {
                    artifact_id: id,
                    offset: p.offset as f64,
                    limit: p.limit as f64,
                    total_size: p.total_size as f64,
                    has_more: p.has_more,
                    content: p.content.into(),
                }
            })
        }),
    )
}
