//! Resource limits in the binding (SPEC §15): the `limits` field of a
//! policy and of one start's options.

use engine::errors::EngineError;
use engine::process::limits::LimitsInput;
use napi::bindgen_prelude::Object;

use super::convert::*;

/// `<what>.limits`: absent, or `{ memoryBytes?, processes?, cpuMs? }`.
pub fn limits_input(obj: &Object, what: &str) -> Result<Option<LimitsInput>, EngineError> {
    let v = field(obj, "limits", what)?;
    if absent(&v) {
        return Ok(None);
    }
    let name = format!("{what}.limits");
    let l = as_object(&v, &name).map_err(|_| {
        EngineError::BadInput(format!(
            "{name} must be an object like {{ memoryBytes: 536870912, processes: 64, cpuMs: 60000 }} (got {})",
            describe(&v)
        ))
    })?;
    Ok(Some(LimitsInput {
        memory_bytes: opt_number(&l, "memoryBytes", &name)?,
        processes: opt_number(&l, "processes", &name)?,
        cpu_ms: opt_number(&l, "cpuMs", &name)?,
    }))
}
