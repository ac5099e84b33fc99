//! The read-only git toolset's exports: settings, runs and tool args.

use std::path::PathBuf;

use boundary::boundary;
use engine::errors::EngineError;
use engine::gitrun;
use engine::record::BankMode;
use napi::bindgen_prelude::{PromiseRaw, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::convert::{self, absent, describe, kind};
use super::inputs;
use super::outputs::*;
use crate::{js_err, promise, Code};

/// Validate and store a host's git settings.
#[boundary]
#[napi]
pub fn configure_git(host_id: u32, options: Unknown) -> napi::Result<NativeGitSettings, Code> {
    let input = inputs::git_options(&options).map_err(js_err)?;
    gitrun::configure(crate::eng(), host_id, input)
        .map(Into::into)
        .map_err(js_err)
}

/// Run git with the hardened prefix, the replaced environment and the
/// host's git settings; resolves once it settled. In order: the host must
/// have configured git, `args` must be strings without NUL, `session_id`
/// a string when given; the session follows the session rule (the
/// given id, then `context_session`, then the host's default).
#[boundary]
#[napi(ts_return_type = "Promise<NativeGitResult>")]
#[allow(clippy::too_many_arguments)]
pub fn run_git<'e>(
    env: &'e Env,
    host_id: u32,
    args: Unknown,
    session_id: Option<Unknown>,
    context_session: Option<String>,
    tmpdir: String,
    host_banks: bool,
) -> napi::Result<PromiseRaw<'e, NativeGitResult>, Code> {
    gitrun::settings(crate::eng(), host_id).map_err(js_err)?;
    let args = convert::string_array(
        &args,
        "args",
        "[\"log\", \"--oneline\"]",
        convert::MAX_LIST_ENTRIES,
    )
    .map_err(js_err)?;
    if let Some(i) = args.iter().position(|s| s.contains('\0')) {
        return Err(js_err(EngineError::BadInput(format!(
            "args[{i}] contains a NUL character: remove it"
        ))));
    }
    let session = match session_id.filter(|s| kind(s) != ValueType::Undefined) {
        Some(v) if kind(&v) == ValueType::String => {
            Some(convert::as_string(&v, "sessionId").map_err(js_err)?)
        }
        Some(v) => {
            return Err(js_err(EngineError::BadInput(format!(
                "sessionId must be a string (got {})",
                describe(&v)
            ))))
        }
        None => None,
    };
    let session = Some(
        crate::eng()
            .registry
            .choose_session(host_id, [session.as_deref(), context_session.as_deref()]),
    );
    let bank = if host_banks {
        BankMode::Host
    } else {
        BankMode::BuiltIn
    };
    promise(env, async move {
        gitrun::run(
            crate::eng(),
            host_id,
            args,
            session,
            PathBuf::from(tmpdir),
            bank,
        )
        .await
        .map(Into::into)
    })
}

/// Build a git tool's args from a model's params (values, never flags).
#[boundary]
#[napi]
pub fn git_tool_args(
    host_id: u32,
    tool: String,
    params: Unknown,
) -> napi::Result<Vec<String>, Code> {
    let settings = gitrun::settings(crate::eng(), host_id).map_err(js_err)?;
    let tool_kind = engine::git::GitTool::from_name(&tool)
        .ok_or_else(|| js_err(EngineError::BadInput(format!("Unknown git tool {tool:?}"))))?;
    let value = if absent(&params) {
        serde_json::Value::Object(Default::default())
    } else {
        convert::as_object(&params, "params").map_err(js_err)?;
        convert::json(&params, "params").map_err(js_err)?
    };
    engine::git::tool_args(tool_kind, &value, &settings.repo_root)
        .map_err(|e| js_err(EngineError::BadInput(e.to_string())))
}
