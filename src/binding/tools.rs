//! The model-facing tools' contract at the napi edge: the specs (schemas,
//! shapes, shared limits) as JSON text, and one call that checks and
//! normalises a tool call's params (engine/src/tools). lib/tools.js loops
//! over the first and hands the second's requests to the host functions.

use boundary::boundary;
use engine::errors::EngineError;
use engine::tools::{self, Given, PolicyView};
use napi::bindgen_prelude::Unknown;
use napi_derive::napi;
use serde_json::Value;

use super::convert;

/// The tools' contract as JSON text: `{ limits, tools: [{ name, family,
/// description, shape, readOnly, inputSchema }] }`, keys in the order
/// clients have always received them.
#[boundary]
#[napi]
pub fn tool_contract() -> String {
    tools::contract_json()
}

/// What run_command_bg needs of the host's policy.
#[napi(object)]
pub struct NativeToolPolicy {
    /// The sandbox root.
    pub cwd_root: String,
    /// The host's budget, in ms (absent: the default).
    pub default_timeout_ms: Option<f64>,
}

/// Check a tool call's params and return its normalised request, or throw
/// its refusal (`code` set). `params` is lib/tools.js' projection: `[key,
/// value]` pairs in the model's key order, or `null` when the params were
/// not an object (`shown` then says how JS writes them).
#[boundary]
#[napi(ts_return_type = "Record<string, any>")]
pub fn tool_request(
    name: String,
    params: Unknown,
    shown: Option<String>,
    policy: Option<NativeToolPolicy>,
) -> napi::Result<Value, crate::Code> {
    let value = convert::json(&params, "params").map_err(crate::js_err)?;
    let pairs: Option<Vec<(String, Given)>> = value.as_array().map(|items| {
        items
            .iter()
            .filter_map(|pair| {
                let key = pair.get(0)?.as_str()?.to_string();
                Some((key, pair.get(1).map_or(Given::Absent, Given::from_json)))
            })
            .collect()
    });
    let shown = shown.unwrap_or_else(|| "undefined".into());
    let params = match &pairs {
        Some(p) => Ok(p.as_slice()),
        None => Err(shown.as_str()),
    };
    let view = policy.map(|p| PolicyView {
        cwd_root: p.cwd_root,
        default_timeout_ms: p.default_timeout_ms,
    });
    tools::normalize(&name, params, view.as_ref()).map_err(|r| match r.code {
        "NLC_NO_POLICY" => crate::js_err(EngineError::NoPolicy),
        code => napi::Error::new(crate::Code(code), r.message),
    })
}

/// A value as every message of the package describes it (`the number 42`,
/// `the string "x"`, `an array`, `a symbol`), for the few checks only JS
/// makes, so they say it as the engine's own refusals do.
#[boundary]
#[napi]
pub fn describe_value(value: Unknown) -> String {
    convert::describe(&value)
}
