//! Number checks shared by the policy's validation and its resource
//! limits: each refusal names the field and the unit it expects.

use crate::errors::{js_number, EngineError, EngineResult};

/// Refuse a number that is not positive and finite, naming the field.
pub fn positive(name: &str, value: f64) -> EngineResult<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(EngineError::BadInput(format!(
            "{name} must be a positive finite number of {} (got {})",
            if name.ends_with("Bytes") {
                "bytes"
            } else {
                "milliseconds"
            },
            js_number(value)
        )))
    }
}

/// A positive number or the default when absent.
pub fn positive_or(name: &str, value: Option<f64>, default: f64) -> EngineResult<f64> {
    value.map_or(Ok(default), |v| positive(name, v))
}

/// A byte count: positive, finite, rounded up to a whole byte.
pub fn bytes_or(name: &str, value: Option<f64>, default: u64) -> EngineResult<u64> {
    value.map_or(Ok(default), |v| positive(name, v).map(|v| v.ceil() as u64))
}
