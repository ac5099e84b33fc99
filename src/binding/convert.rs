//! JS values → engine values. Every shape error becomes an `EngineError`
//! that says what was expected and what was given; nothing here panics on
//! odd input (Proxies, getters that throw, holes, symbols).

use engine::errors::EngineError;
use napi::bindgen_prelude::{JsObjectValue, JsValue, Object, Unknown};
use napi::{sys, ValueType};

type R<T> = Result<T, EngineError>;

fn bad(msg: String) -> EngineError {
    EngineError::BadInput(msg)
}

/// Why a napi call on a caller's value failed. When JS code ran and threw (a
/// getter, a Proxy trap, a revoked Proxy), the exception is still pending:
/// it is cleared here — otherwise it, not our message, would reach the
/// caller — and what was thrown is folded into the message.
pub fn thrown(env: sys::napi_env, e: &napi::Error) -> String {
    match take_exception(env) {
        Some(v) => format!("it threw {}", describe_thrown(&v)),
        None => e.reason.clone(),
    }
}

/// Clear a pending JS exception and return what was thrown.
fn take_exception<'a>(env: sys::napi_env) -> Option<Unknown<'a>> {
    let mut pending = false;
    // SAFETY: plain napi calls on the env of a live call.
    unsafe {
        if sys::napi_is_exception_pending(env, &mut pending) != sys::Status::napi_ok || !pending {
            return None;
        }
        let mut raw = std::ptr::null_mut();
        if sys::napi_get_and_clear_last_exception(env, &mut raw) != sys::Status::napi_ok
            || raw.is_null()
        {
            return None;
        }
        Some(Unknown::from_raw_unchecked(env, raw))
    }
}

/// A thrown value for a message: an Error's message (read without letting a
/// second throw escape), else the value described.
pub fn describe_thrown(v: &Unknown) -> String {
    if kind(v) == ValueType::Object {
        if let Ok(obj) = object(v) {
            match obj.get_named_property::<Unknown>("message") {
                Ok(m) if kind(&m) == ValueType::String => {
                    let text = string(&m).unwrap_or_default();
                    return format!("{:?}", engine::errors::clip(&text));
                }
                Ok(_) => {}
                Err(_) => {
                    take_exception(v.value().env);
                }
            }
        }
    }
    describe(v)
}

/// `Array.isArray(v)`; a revoked Proxy (whose check throws) is not an array.
fn is_array(v: &Unknown) -> bool {
    match v.is_array() {
        Ok(a) => a,
        Err(_) => {
            take_exception(v.value().env);
            false
        }
    }
}

/// The type of a value, treating a failure to ask as "unknown".
pub fn kind(v: &Unknown) -> ValueType {
    v.get_type().unwrap_or(ValueType::Unknown)
}

/// Whether a value is absent (`undefined` or `null`).
pub fn absent(v: &Unknown) -> bool {
    matches!(kind(v), ValueType::Undefined | ValueType::Null)
}

/// A short description of a value for messages: `the number 42`, `undefined`, `an array`.
pub fn describe(v: &Unknown) -> String {
    match kind(v) {
        ValueType::Undefined => "undefined".into(),
        ValueType::Null => "null".into(),
        ValueType::Boolean => format!("the boolean {}", v.coerce_to_bool().unwrap_or(false)),
        ValueType::Number => format!(
            "the number {}",
            engine::policy::js_number(number(v).unwrap_or(f64::NAN))
        ),
        ValueType::String => {
            let s = string(v).unwrap_or_default();
            let short: String = s.chars().take(40).collect();
            let more = if s.chars().count() > 40 { "…" } else { "" };
            format!("the string {short:?}{more}")
        }
        ValueType::Symbol => "a symbol".into(),
        ValueType::Function => "a function".into(),
        ValueType::BigInt => "a bigint".into(),
        ValueType::Object => {
            if is_array(v) {
                "an array".into()
            } else if v.is_promise().unwrap_or(false) {
                "a Promise".into()
            } else {
                "an object".into()
            }
        }
        _ => "a value of unknown type".into(),
    }
}

// The typed readers below coerce, which for a value already of that type
// (callers check the type first) returns it as it is and runs no JS code.

fn number(v: &Unknown) -> napi::Result<f64> {
    v.coerce_to_number()?.get_double()
}

fn string(v: &Unknown) -> napi::Result<String> {
    v.coerce_to_string()?.into_utf8()?.into_owned()
}

fn object<'a>(v: &Unknown<'a>) -> napi::Result<Object<'a>> {
    v.coerce_to_object()
}

/// A string, or an error naming `what`.
pub fn as_string(v: &Unknown, what: &str) -> R<String> {
    if kind(v) == ValueType::String {
        string(v).map_err(|e| bad(format!("{what} could not be read as a string: {e}")))
    } else {
        Err(bad(format!(
            "{what} must be a string (got {})",
            describe(v)
        )))
    }
}

/// A number (any, NaN included: ranges are the engine's business), or an error.
pub fn as_number(v: &Unknown, what: &str) -> R<f64> {
    if kind(v) == ValueType::Number {
        number(v).map_err(|e| bad(format!("{what} could not be read as a number: {e}")))
    } else {
        Err(bad(format!(
            "{what} must be a number (got {})",
            describe(v)
        )))
    }
}

/// A boolean, or an error.
pub fn as_bool(v: &Unknown, what: &str) -> R<bool> {
    if kind(v) == ValueType::Boolean {
        Ok(v.coerce_to_bool().unwrap_or(false))
    } else {
        Err(bad(format!(
            "{what} must be a boolean (got {})",
            describe(v)
        )))
    }
}

/// A plain object (not an array, not a function), or an error.
pub fn as_object<'a>(v: &Unknown<'a>, what: &str) -> R<Object<'a>> {
    if kind(v) == ValueType::Object && !is_array(v) {
        object(v).map_err(|e| bad(format!("{what}: {e}")))
    } else {
        Err(bad(format!(
            "{what} must be an object (got {})",
            describe(v)
        )))
    }
}

/// A property of an object (a throwing getter or Proxy trap becomes an error).
pub fn field<'a>(obj: &Object<'a>, name: &str, what: &str) -> R<Unknown<'a>> {
    obj.get_named_property::<Unknown>(name).map_err(|e| {
        bad(format!(
            "reading {what}.{name} failed ({}): pass a plain object whose properties can be read",
            thrown(obj.value().env, &e)
        ))
    })
}

/// An optional string property.
pub fn opt_string(obj: &Object, name: &str, what: &str) -> R<Option<String>> {
    let v = field(obj, name, what)?;
    if absent(&v) {
        Ok(None)
    } else {
        as_string(&v, &format!("{what}.{name}")).map(Some)
    }
}

/// An optional number property.
pub fn opt_number(obj: &Object, name: &str, what: &str) -> R<Option<f64>> {
    let v = field(obj, name, what)?;
    if absent(&v) {
        Ok(None)
    } else {
        as_number(&v, &format!("{what}.{name}")).map(Some)
    }
}

/// An optional boolean property.
pub fn opt_bool(obj: &Object, name: &str, what: &str) -> R<Option<bool>> {
    let v = field(obj, name, what)?;
    if absent(&v) {
        Ok(None)
    } else {
        as_bool(&v, &format!("{what}.{name}")).map(Some)
    }
}

/// The most entries an argv may have (SPEC §2).
pub const MAX_ARGV_ENTRIES: u32 = 1_048_576;
/// The most entries an `allowedExecutables` or git `args` array may have (SPEC §2).
pub use engine::tools::limits::MAX_LIST_ENTRIES;

/// An array of strings of at most `max` entries (holes and non-strings
/// refused, naming the index). The array is read element by element: its
/// `length` never decides an allocation, so a sparse array with a huge
/// length is refused, not allocated.
pub fn string_array(v: &Unknown, what: &str, example: &str, max: u32) -> R<Vec<String>> {
    if !is_array(v) {
        return Err(bad(format!(
            "{what} must be an array of strings, e.g. {example} (got {})",
            describe(v)
        )));
    }
    let arr = object(v).map_err(|e| bad(format!("{what}: {e}")))?;
    let env = v.value().env;
    let len = arr.get_array_length().map_err(|e| {
        bad(format!(
            "{what} must be a plain array of strings, e.g. {example}; its length could not be read ({})",
            thrown(env, &e)
        ))
    })?;
    if len > max {
        return Err(bad(format!(
            "{what} has {len} entries, more than the {max} allowed: pass a plain array of at most {max} strings, e.g. {example}"
        )));
    }
    // Grow as elements are read (each is a real string), never by `len`.
    let mut out = Vec::with_capacity((len as usize).min(64));
    for i in 0..len {
        let item: Unknown = arr.get_element(i).map_err(|e| {
            bad(format!(
                "reading {what}[{i}] failed ({}): pass a plain array of strings, e.g. {example}",
                thrown(env, &e)
            ))
        })?;
        if kind(&item) != ValueType::String {
            return Err(bad(format!(
                "{what} must be an array of strings, e.g. {example}, but {what}[{i}] is {}",
                describe(&item)
            )));
        }
        out.push(string(&item).map_err(|e| bad(format!("{what}[{i}]: {e}")))?);
    }
    Ok(out)
}

/// A `Record<string, string>`.
pub fn string_map(v: &Unknown, what: &str) -> R<Vec<(String, String)>> {
    let obj = as_object(v, what)?;
    let keys = Object::keys(&obj).map_err(|e| {
        bad(format!(
            "{what} must be a plain object mapping names to strings; its keys could not be read ({})",
            thrown(obj.value().env, &e)
        ))
    })?;
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        if k.contains('\0') {
            return Err(bad(format!(
                "{what} key {:?} contains a NUL character, which no name can hold: remove it",
                engine::errors::clip(&k)
            )));
        }
        let val = field(&obj, &k, what)?;
        if kind(&val) != ValueType::String {
            return Err(bad(format!(
                "{what} must map names to strings, but {what}[{k:?}] is {}",
                describe(&val)
            )));
        }
        let text = string(&val).map_err(|e| bad(format!("{what}[{k:?}]: {e}")))?;
        out.push((k, text));
    }
    Ok(out)
}

/// Deserialize a value already checked to be an object (serde, through napi's
/// safe `from_js_value`).
pub fn json(v: &Unknown, what: &str) -> R<serde_json::Value> {
    napi::Env::from_raw(v.value().env)
        .from_js_value::<serde_json::Value, _>(*v)
        .map_err(|e| bad(format!("{what}: {}", thrown(v.value().env, &e))))
}
