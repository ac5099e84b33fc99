//! Resource limits as a policy and a start give them (SPEC §15): checked,
//! and a start's narrowing the policy's. Enforcing them is
//! [`crate::process::limits`].

use crate::errors::{js_number, EngineError, EngineResult};
use crate::process::limits::{Limits, LimitsInput};

fn whole(name: &str, v: f64) -> EngineResult<u64> {
    if v.is_finite() && v >= 1.0 {
        Ok(v.ceil() as u64)
    } else {
        Err(EngineError::BadInput(format!(
            "{name} must be a finite number ≥ 1 (got {})",
            js_number(v)
        )))
    }
}

/// Validate `input` (`what`: `policy.limits` or `options.limits`).
pub fn validate(input: &LimitsInput, what: &str) -> EngineResult<Limits> {
    Ok(Limits {
        memory_bytes: input
            .memory_bytes
            .map(|v| whole(&format!("{what}.memoryBytes"), v))
            .transpose()?,
        processes: input
            .processes
            .map(|v| whole(&format!("{what}.processes"), v))
            .transpose()?,
        cpu_ms: input
            .cpu_ms
            .map(|v| super::numbers::positive(&format!("{what}.cpuMs"), v))
            .transpose()?,
    })
}

/// The limits a start runs under: the policy's, each narrowed by the
/// start's; a start's limit wider than the policy's is refused.
pub fn effective(policy: Option<&Limits>, options: Option<&LimitsInput>) -> EngineResult<Limits> {
    let pol = policy.copied().unwrap_or_default();
    let Some(opts) = options else {
        return Ok(pol);
    };
    let asked = validate(opts, "options.limits")?;
    let wider = |name: &str, got: f64, max: f64| {
        EngineError::BadInput(format!(
            "options.limits.{name} {} is wider than the policy's {}: a start may only narrow the policy's limits; give {} or less, or raise policy.limits.{name}",
            js_number(got),
            js_number(max),
            js_number(max)
        ))
    };
    fn narrow<T: Copy + PartialOrd>(
        asked: Option<T>,
        pol: Option<T>,
        err: impl FnOnce(T, T) -> EngineError,
    ) -> EngineResult<Option<T>> {
        match (asked, pol) {
            (Some(a), Some(p)) if a > p => Err(err(a, p)),
            (Some(a), _) => Ok(Some(a)),
            (None, p) => Ok(p),
        }
    }
    Ok(Limits {
        memory_bytes: narrow(asked.memory_bytes, pol.memory_bytes, |a, p| {
            wider("memoryBytes", a as f64, p as f64)
        })?,
        processes: narrow(asked.processes, pol.processes, |a, p| {
            wider("processes", a as f64, p as f64)
        })?,
        cpu_ms: narrow(asked.cpu_ms, pol.cpu_ms, |a, p| wider("cpuMs", a, p))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(m: Option<f64>, p: Option<f64>, c: Option<f64>) -> LimitsInput {
        LimitsInput {
            memory_bytes: m,
            processes: p,
            cpu_ms: c,
        }
    }

    #[test]
    fn a_start_only_narrows_the_policys_limits() {
        let pol = validate(&input(Some(1000.0), Some(10.0), None), "policy.limits").unwrap();
        let narrower = effective(Some(&pol), Some(&input(Some(500.0), None, Some(20.0)))).unwrap();
        assert_eq!(
            narrower,
            Limits {
                memory_bytes: Some(500),
                processes: Some(10),
                cpu_ms: Some(20.0)
            }
        );
        let e = effective(Some(&pol), Some(&input(None, Some(11.0), None))).unwrap_err();
        assert_eq!(e.code(), "NLC_INVALID_ARGUMENT");
        assert!(e.to_string().contains("wider than the policy's 10"), "{e}");
        // Equal is not wider; no policy limit means any is a narrowing.
        assert!(effective(Some(&pol), Some(&input(Some(1000.0), None, None))).is_ok());
        assert_eq!(effective(None, None).unwrap(), Limits::default());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = effective(None, Some(&input(Some(bad), None, None))).unwrap_err();
            assert!(e.to_string().contains("options.limits.memoryBytes"), "{e}");
        }
    }
}
