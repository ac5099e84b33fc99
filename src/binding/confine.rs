//! Kernel confinement in the binding (SPEC §8): the `confine` field of a
//! policy and of one start's options, and `confinementSupport()`.

use boundary::boundary;
use engine::errors::EngineError;
use engine::policy::confine::{ConfinementInput, ReadInput, Tmp};
use engine::process::confine::Level;
use napi::bindgen_prelude::{Object, Unknown};
use napi::ValueType;
use napi_derive::napi;

use super::convert::*;

type R<T> = Result<T, EngineError>;

/// `policy.confine`: absent or `false` = unconfined, else a `Confinement`.
pub fn policy_confine(obj: &Object) -> R<Option<ConfinementInput>> {
    let v = field(obj, "confine", "policy")?;
    if absent(&v) {
        return Ok(None);
    }
    if kind(&v) == ValueType::Boolean {
        if as_bool(&v, "policy.confine")? {
            return Err(EngineError::BadInput(
                "policy.confine must be false or a Confinement object like { write: [cwdRoot], network: false } (true is not a confinement: use {} for the defaults)".into(),
            ));
        }
        return Ok(None);
    }
    confinement(&v, "policy.confine").map(Some)
}

/// `options.confine`: absent, or a `Confinement` that narrows the policy's.
pub fn options_confine(obj: &Object) -> R<Option<ConfinementInput>> {
    let v = field(obj, "confine", "options")?;
    if absent(&v) {
        return Ok(None);
    }
    if kind(&v) == ValueType::Boolean {
        return Err(EngineError::BadInput(
            "options.confine must be a Confinement object that narrows the policy's (it cannot switch confinement off: only the policy's confine: false does)".into(),
        ));
    }
    confinement(&v, "options.confine").map(Some)
}

fn trees(obj: &Object, name: &str, what: &str) -> R<Option<Vec<String>>> {
    let v = field(obj, name, what)?;
    if absent(&v) {
        return Ok(None);
    }
    string_array(
        &v,
        &format!("{what}.{name}"),
        "[\"/home/me/project\"]",
        MAX_LIST_ENTRIES,
    )
    .map(Some)
}

fn confinement(v: &Unknown, what: &str) -> R<ConfinementInput> {
    let obj = as_object(v, what)?;
    let read = field(&obj, "read", what)?;
    let read = if absent(&read) {
        None
    } else if kind(&read) == ValueType::String {
        match as_string(&read, &format!("{what}.read"))?.as_str() {
            "system" => Some(ReadInput::System),
            "all" => Some(ReadInput::All),
            other => {
                return Err(EngineError::BadInput(format!(
                "{what}.read must be \"system\", \"all\" or a list of directories (got {other:?})"
            )))
            }
        }
    } else {
        Some(ReadInput::Trees(string_array(
            &read,
            &format!("{what}.read"),
            "[\"/home/me/.config/tool\"]",
            MAX_LIST_ENTRIES,
        )?))
    };
    let tmp = match opt_string(&obj, "tmp", what)?.as_deref() {
        None => None,
        Some("private") => Some(Tmp::Private),
        Some("shared") => Some(Tmp::Shared),
        Some(other) => {
            return Err(EngineError::BadInput(format!(
                "{what}.tmp must be \"private\" or \"shared\" (got {other:?})"
            )))
        }
    };
    let level = match opt_string(&obj, "level", what)?.as_deref() {
        None => None,
        Some("full") => Some(Level::Full),
        Some("landlock") => Some(Level::Landlock),
        Some(other) => {
            return Err(EngineError::BadInput(format!(
                "{what}.level must be \"full\" or \"landlock\" (got {other:?})"
            )))
        }
    };
    let protect = field(&obj, "protect", what)?;
    let protect = if absent(&protect) {
        None
    } else {
        Some(string_array(
            &protect,
            &format!("{what}.protect"),
            "[\".npmrc\", \".vscode\"]",
            MAX_LIST_ENTRIES,
        )?)
    };
    Ok(ConfinementInput {
        write: trees(&obj, "write", what)?,
        read,
        exec: trees(&obj, "exec", what)?,
        network: opt_bool(&obj, "network", what)?,
        tmp,
        protect,
        level,
    })
}

/// What this kernel can enforce.
#[napi(object)]
pub struct NativeConfinementSupport {
    pub landlock_abi: u32,
    pub filesystem: bool,
    pub network: bool,
    pub signals: bool,
    pub seccomp: bool,
    pub namespaces: bool,
    pub namespaces_why_not: Option<String>,
}

/// What kernel confinement this machine supports (measured once).
#[boundary]
#[napi]
pub fn confinement_support() -> NativeConfinementSupport {
    let s = engine::process::confine::support();
    NativeConfinementSupport {
        landlock_abi: s.landlock_abi,
        filesystem: s.filesystem,
        network: s.network,
        signals: s.signals,
        seccomp: s.seccomp,
        namespaces: s.namespaces,
        namespaces_why_not: engine::process::confine::namespaces_why_not(),
    }
}
