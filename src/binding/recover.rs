//! `recoverBackgroundCommands` in the binding (SPEC §15).

use boundary::boundary;
use engine::errors::EngineError;
use engine::jobs::recover::{self, Filter};
use napi::bindgen_prelude::{PromiseRaw, Unknown};
use napi::Env;
use napi_derive::napi;

use super::convert::*;

/// `{ sessionId?, sinceMs? }` (absent: every command).
fn filter(v: &Unknown) -> Result<Filter, EngineError> {
    if absent(v) {
        return Ok(Filter::default());
    }
    let what = "options";
    let obj = as_object(v, what).map_err(|_| {
        EngineError::BadInput(format!(
            "options must be an object like {{ sessionId: \"s1\", sinceMs: 1700000000000 }} (got {})",
            describe(v)
        ))
    })?;
    let since_ms = opt_number(&obj, "sinceMs", what)?;
    if since_ms.is_some_and(|s| !s.is_finite()) {
        return Err(EngineError::BadInput(
            "options.sinceMs must be a finite epoch time in milliseconds".into(),
        ));
    }
    Ok(Filter {
        session_id: opt_string(&obj, "sessionId", what)?,
        since_ms,
    })
}

/// Make the settled commands of ended processes of this user in the current
/// log base answerable again for `hostId`; resolves with how many.
#[boundary]
#[napi(ts_return_type = "Promise<number>")]
pub fn recover_commands<'e>(
    env: &'e Env,
    host_id: u32,
    options: Unknown,
    tmpdir: String,
) -> napi::Result<PromiseRaw<'e, u32>, crate::Code> {
    let f = filter(&options).map_err(crate::js_err)?;
    crate::promise(
        env,
        crate::blocking(move || {
            recover::recover(crate::eng(), host_id, &f, std::path::Path::new(&tmpdir))
        }),
    )
}
