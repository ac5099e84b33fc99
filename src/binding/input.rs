//! Interactive commands at the napi edge: the `stdin` and `terminal` start
//! options, and the input and resize verbs. Values are checked here; the
//! bytes go to the engine, whose supervisor writes them.

use boundary::boundary;
use engine::commands;
use engine::errors::EngineError;
use engine::spawn::Input;
use napi::bindgen_prelude::{FromNapiValue, Object, PromiseRaw, Uint8Array, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use super::convert::*;

type R<T> = Result<T, EngineError>;

/// The default terminal size.
const COLS: u16 = 80;
const ROWS: u16 = 24;

/// A window dimension: an integer from 1 to 65535.
fn dimension(obj: &Object, name: &str, what: &str, default: Option<u16>) -> R<u16> {
    let v = opt_number(obj, name, what)?;
    match (v, default) {
        (None, Some(d)) => Ok(d),
        (Some(n), _) if n.fract() == 0.0 && (1.0..=65535.0).contains(&n) => Ok(n as u16),
        (got, _) => Err(EngineError::BadInput(format!(
            "{what}.{name} must be a positive integer number of {} from 1 to 65535 (got {})",
            if name == "cols" { "columns" } else { "rows" },
            got.map_or("nothing".to_string(), engine::policy::js_number)
        ))),
    }
}

/// `options.stdin` and `options.terminal` as one input mode.
pub fn start_input(obj: &Object) -> R<Input> {
    let stdin = field(obj, "stdin", "options")?;
    let pipe = if absent(&stdin) {
        false
    } else {
        match as_string(&stdin, "options.stdin").as_deref() {
            Ok("pipe") => true,
            Ok("ignore") => false,
            _ => {
                return Err(EngineError::BadInput(format!(
                    "options.stdin must be \"ignore\" (the default: /dev/null) or \"pipe\" (write to it with writeBackgroundCommandInput) (got {})",
                    describe(&stdin)
                )))
            }
        }
    };
    let terminal = field(obj, "terminal", "options")?;
    if absent(&terminal) {
        return Ok(if pipe { Input::Pipe } else { Input::Null });
    }
    if kind(&terminal) == ValueType::Boolean {
        return Ok(match (as_bool(&terminal, "options.terminal")?, pipe) {
            (true, _) => Input::Terminal {
                cols: COLS,
                rows: ROWS,
            },
            (false, true) => Input::Pipe,
            (false, false) => Input::Null,
        });
    }
    let size = as_object(&terminal, "options.terminal").map_err(|_| {
        EngineError::BadInput(format!(
            "options.terminal must be true, false or {{ cols?, rows? }} (positive integers; default 80×24) (got {})",
            describe(&terminal)
        ))
    })?;
    Ok(Input::Terminal {
        cols: dimension(&size, "cols", "options.terminal", Some(COLS))?,
        rows: dimension(&size, "rows", "options.terminal", Some(ROWS))?,
    })
}

/// What `writeBackgroundCommandInput` resolves with.
#[napi(object)]
pub struct NativeWritten {
    pub bytes_written: f64,
}

/// Write a string (as UTF-8) or bytes to a command's input; the promise
/// resolves once the last byte is in its pipe or terminal. `options.end`
/// closes a pipe afterwards (a terminal gets ctrl-d after the data instead).
/// In order: the task id, the data, the options; then the engine's checks.
#[boundary]
#[napi(ts_return_type = "Promise<NativeWritten>")]
pub fn write_command_input<'env>(
    env: &'env Env,
    host_id: u32,
    task_id: Unknown,
    data: Unknown,
    options: Option<Unknown>,
) -> napi::Result<PromiseRaw<'env, NativeWritten>, crate::Code> {
    let rec = crate::task(host_id, &task_id)?;
    let bytes = input_bytes(&data).map_err(crate::js_err)?;
    let end = match options.filter(|o| !absent(o)) {
        None => false,
        Some(o) => {
            let obj = as_object(&o, "options")
                .map_err(|_| {
                    EngineError::BadInput(format!(
                        "options must be an object like {{ end: true }} (got {})",
                        describe(&o)
                    ))
                })
                .map_err(crate::js_err)?;
            let e = field(&obj, "end", "options").map_err(crate::js_err)?;
            if absent(&e) {
                false
            } else {
                as_bool(&e, "options.end").map_err(crate::js_err)?
            }
        }
    };
    let id = rec.task_id();
    crate::promise(env, async move {
        commands::write_input(crate::eng(), host_id, &id, bytes, end)
            .await
            .map(|n| NativeWritten {
                bytes_written: n as f64,
            })
    })
}

/// A string's UTF-8 bytes or a Uint8Array's (a Buffer is one) bytes.
fn input_bytes(data: &Unknown) -> R<Vec<u8>> {
    if kind(data) == ValueType::String {
        return as_string(data, "data").map(String::into_bytes);
    }
    let refuse = || {
        EngineError::BadInput(format!(
            "data must be a string (written as UTF-8) or a Uint8Array of bytes (got {})",
            describe(data)
        ))
    };
    if kind(data) != ValueType::Object {
        return Err(refuse());
    }
    Uint8Array::from_unknown(*data)
        .map(|a| a.to_vec())
        .map_err(|_| refuse())
}

/// Change a terminal command's window size (it gets SIGWINCH).
#[boundary]
#[napi]
pub fn resize_command_terminal(
    host_id: u32,
    task_id: Unknown,
    size: Unknown,
) -> napi::Result<(), crate::Code> {
    let rec = crate::task(host_id, &task_id)?;
    let obj = as_object(&size, "size")
        .map_err(|_| {
            EngineError::BadInput(format!(
                "size must be {{ cols, rows }} (positive integers) (got {})",
                describe(&size)
            ))
        })
        .map_err(crate::js_err)?;
    let cols = dimension(&obj, "cols", "size", None).map_err(crate::js_err)?;
    let rows = dimension(&obj, "rows", "size", None).map_err(crate::js_err)?;
    commands::resize_terminal(crate::eng(), host_id, &rec.task_id(), cols, rows)
        .map_err(crate::js_err)
}
