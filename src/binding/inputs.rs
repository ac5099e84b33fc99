//! The contract's input objects, converted to engine values with the
//! field-by-field checks of `convert`.

use engine::capture::Stream;
use engine::commands::StartOptions;
use engine::errors::EngineError;
use engine::gitrun::GitInput;
use engine::jobs::waits::{self, WaitRequest};
use engine::paging::Window;
use engine::policy::{Policy, PolicyInput};
use engine::record::{ArtifactRef, BankOutcome};
use engine::text::matching::Pattern;
use napi::bindgen_prelude::Unknown;

use super::convert::*;

type R<T> = Result<T, EngineError>;

/// `BackgroundCommandPolicy` (the `allowlist` hook is handled by the adapter).
pub fn policy(v: &Unknown) -> R<Policy> {
    let what = "policy";
    let obj = as_object(v, what)?;
    let allowed = field(&obj, "allowedExecutables", what)?;
    let allowed_executables = string_array(
        &allowed,
        "policy.allowedExecutables",
        "[\"/usr/bin/git\"]",
        MAX_LIST_ENTRIES,
    )?;
    let root = field(&obj, "cwdRoot", what)?;
    if absent(&root) {
        return Err(EngineError::BadInput(
            "policy.cwdRoot is required: the directory commands may run in (and below)".into(),
        ));
    }
    let cwd_root = as_string(&root, "policy.cwdRoot")?;
    let hook = field(&obj, "allowlist", what)?;
    if !absent(&hook) && kind(&hook) != napi::ValueType::Function {
        return Err(EngineError::BadInput(format!(
            "policy.allowlist must be a function (argv, cwd) => true | string (got {})",
            describe(&hook)
        )));
    }
    Policy::new(PolicyInput {
        allowed_executables,
        cwd_root,
        default_timeout_ms: opt_number(&obj, "defaultTimeoutMs", what)?,
        max_output_bytes: opt_number(&obj, "maxOutputBytes", what)?,
        kill_grace_ms: opt_number(&obj, "killGraceMs", what)?,
        confine: super::confine::policy_confine(&obj)?,
        idle_timeout_ms: opt_number(&obj, "idleTimeoutMs", what)?,
        input_wait_ms: opt_number(&obj, "inputWaitMs", what)?,
        limits: super::limits::limits_input(&obj, "policy")?,
    })
}

/// `BackgroundCommandOptions` (the `abortSignal` is handled by the adapter).
pub fn start_options(v: &Unknown) -> R<StartOptions> {
    let what = "options";
    let obj = as_object(v, what).map_err(|_| {
        EngineError::BadInput(format!(
            "options must be an object like {{ cwd: \"<directory inside cwdRoot>\" }} (got {})",
            describe(v)
        ))
    })?;
    let cwd = field(&obj, "cwd", what)?;
    if absent(&cwd) {
        return Err(EngineError::BadInput(
            "options.cwd is required: the directory to run in, inside the policy's cwdRoot (relative paths resolve against it)".into(),
        ));
    }
    let env = field(&obj, "env", what)?;
    Ok(StartOptions {
        cwd: as_string(&cwd, "options.cwd")?,
        timeout_ms: opt_number(&obj, "timeoutMs", what)?,
        max_output_bytes: opt_number(&obj, "maxOutputBytes", what)?,
        env: if absent(&env) {
            None
        } else {
            Some(string_map(&env, "options.env")?)
        },
        label: opt_string(&obj, "label", what)?,
        session_id: opt_string(&obj, "sessionId", what)?,
        confine: super::confine::options_confine(&obj)?,
        input: super::input::start_input(&obj)?,
        idle_timeout_ms: opt_number(&obj, "idleTimeoutMs", what)?,
        input_wait_ms: opt_number(&obj, "inputWaitMs", what)?,
        limits: super::limits::limits_input(&obj, "options")?,
    })
}

/// `BackgroundCommandPageRequest`: the stream and the window.
pub fn page_request(v: &Unknown) -> R<(Stream, Window)> {
    let what = "page";
    if absent(v) {
        return Err(EngineError::BadInput(
            "page must be an object like { stream: \"stdout\", offset: 0, limit: 50000 }".into(),
        ));
    }
    let obj = as_object(v, what)?;
    let stream = stream_name(opt_string(&obj, "stream", what)?.as_deref(), true)?;
    if let Some(t) = opt_number(&obj, "tail", what)? {
        if !t.is_finite() || t < 0.0 {
            return Err(EngineError::BadInput(format!(
                "page.tail must be a finite number ≥ 0: how many characters (UTF-16 units) to read from the end, clamped to 1..200000 (got {})",
                engine::policy::js_number(t)
            )));
        }
        if opt_number(&obj, "offset", what)?.is_some() {
            return Err(EngineError::BadInput(
                "page.tail reads the end of the stream, so it cannot be combined with page.offset: give one of them".into(),
            ));
        }
        return Ok((stream, Window::tail(t)));
    }
    Ok((stream, window(&obj, what)?))
}

/// `{ offset?, limit? }` (absent → the defaults).
pub fn window_request(v: &Unknown, what: &str) -> R<Window> {
    if absent(v) {
        return Ok(Window::new(None, None));
    }
    window(&as_object(v, what)?, what)
}

fn window(obj: &napi::bindgen_prelude::Object, what: &str) -> R<Window> {
    Ok(Window::new(
        opt_number(obj, "offset", what)?,
        opt_number(obj, "limit", what)?,
    ))
}

/// `"stdout"` / `"stderr"`; `required` refuses an absent one.
pub fn stream_name(s: Option<&str>, required: bool) -> R<Stream> {
    match s {
        None if !required => Ok(Stream::Stdout),
        None => Err(EngineError::BadInput(
            "page.stream is required: \"stdout\" or \"stderr\"".into(),
        )),
        Some(name) => Stream::parse(name).ok_or_else(|| {
            EngineError::BadInput(format!(
                "stream must be \"stdout\" or \"stderr\" (got {name:?})"
            ))
        }),
    }
}

/// `GitToolsetOptions`.
pub fn git_options(v: &Unknown) -> R<GitInput> {
    let what = "options";
    let obj = as_object(v, what)?;
    let root = opt_string(&obj, "repoRoot", what)?.ok_or_else(|| {
        EngineError::BadInput("options.repoRoot is required: the repository's working tree".into())
    })?;
    Ok(GitInput {
        repo_root: root,
        timeout_ms: opt_number(&obj, "timeoutMs", what)?,
        max_output_bytes: opt_number(&obj, "maxOutputBytes", what)?,
        preview_chars: opt_number(&obj, "previewChars", what)?,
        git_executable: opt_string(&obj, "gitExecutable", what)?,
        confine: opt_bool(&obj, "confine", what)?,
    })
}

/// What a host's `bankArtifact` resolved to: a ref, or why it is not one.
pub fn bank_outcome(value: &Unknown, error: Option<String>) -> BankOutcome {
    if let Some(e) = error {
        return BankOutcome::Failed(e);
    }
    match artifact_ref(value) {
        Ok(r) => BankOutcome::Ref(r),
        Err(why) => BankOutcome::Failed(why),
    }
}

fn artifact_ref(v: &Unknown) -> Result<ArtifactRef, String> {
    let not_ref = |why: String| {
        format!(
            "bankArtifact resolved to {} , which is not a BankedArtifactRef ({why})",
            describe(v)
        )
        .replace(" ,", ",")
    };
    let obj =
        as_object(v, "the bank's result").map_err(|_| not_ref("an object was expected".into()))?;
    let s = |name: &str| -> Result<String, String> {
        opt_string(&obj, name, "ref")
            .map_err(|e| not_ref(e.to_string()))?
            .ok_or_else(|| not_ref(format!("{name} is missing")))
    };
    let artifact_id = s("artifactId")?;
    if artifact_id.is_empty() {
        return Err(not_ref("artifactId is empty".into()));
    }
    let size = opt_number(&obj, "sizeBytes", "ref").map_err(|e| not_ref(e.to_string()))?;
    Ok(ArtifactRef {
        artifact_id,
        label: s("label")?,
        kind: s("kind")?,
        size_bytes: size.ok_or_else(|| not_ref("sizeBytes is missing".into()))?,
        preview: s("preview")?,
        read_back_hint: s("readBackHint")?,
    })
}

/// The pattern fields shared by waits and searches: `pattern` (a non-empty
/// string), `regex?`, `from?`, and the stream (`any` allowed for waits).
fn pattern_fields(
    obj: &napi::bindgen_prelude::Object,
    what: &str,
    allow_any: bool,
) -> R<(Pattern, Option<Stream>, u64)> {
    let p = field(obj, "pattern", what)?;
    if kind(&p) != napi::ValueType::String {
        return Err(EngineError::BadInput(format!(
            "{what}.pattern must be a string: the text (or, with regex: true, the regular expression) to look for (got {})",
            describe(&p)
        )));
    }
    let pattern = as_string(&p, &format!("{what}.pattern"))?;
    let regex = opt_bool(obj, "regex", what)?.unwrap_or(false);
    let stream = match opt_string(obj, "stream", what)?.as_deref() {
        None if allow_any => None,
        None => Some(Stream::Stdout),
        Some("any") if allow_any => None,
        Some(name) => Some(Stream::parse(name).ok_or_else(|| {
            EngineError::BadInput(format!(
                "{what}.stream must be {} (got {name:?})",
                if allow_any {
                    "\"stdout\", \"stderr\" or \"any\""
                } else {
                    "\"stdout\" or \"stderr\""
                }
            ))
        })?),
    };
    let from = waits::offset_arg(&format!("{what}.from"), opt_number(obj, "from", what)?)?;
    Ok((Pattern::new(&pattern, regex)?, stream, from))
}

/// `{ pattern, regex?, stream?, from?, timeoutMs? }` of a wait.
pub fn wait_request(v: &Unknown) -> R<WaitRequest> {
    let what = "options";
    if absent(v) {
        return Err(EngineError::BadInput(
            "options must be an object like { pattern: \"listening on\", timeoutMs: 30000 }".into(),
        ));
    }
    let obj = as_object(v, what)?;
    let (pattern, stream, from) = pattern_fields(&obj, what, true)?;
    let timeout_ms = waits::wait_ms_arg("options.timeoutMs", opt_number(&obj, "timeoutMs", what)?)?;
    Ok(WaitRequest {
        pattern,
        stream,
        from,
        timeout_ms,
    })
}

/// `{ pattern, regex?, stream?, from?, maxMatches? }` of a search:
/// `(pattern, stream, from, maxMatches)`.
pub fn search_request(v: &Unknown) -> R<(Pattern, Stream, u64, usize)> {
    let what = "options";
    if absent(v) {
        return Err(EngineError::BadInput(
            "options must be an object like { pattern: \"FAIL\", stream: \"stdout\" }".into(),
        ));
    }
    let obj = as_object(v, what)?;
    let (pattern, stream, from) = pattern_fields(&obj, what, false)?;
    let max = waits::max_matches_arg(opt_number(&obj, "maxMatches", what)?)?;
    Ok((pattern, stream.unwrap_or(Stream::Stdout), from, max))
}

/// One `configureLogs` field: absent (keep), `null` (back to the default),
/// or a value converted by `f`. Read once.
fn setting<T>(
    obj: &napi::bindgen_prelude::Object,
    name: &str,
    f: impl FnOnce(&Unknown, &str) -> R<T>,
) -> R<Option<Option<T>>> {
    let v = field(obj, name, "options")?;
    match kind(&v) {
        napi::ValueType::Undefined => Ok(None),
        napi::ValueType::Null => Ok(Some(None)),
        _ => f(&v, &format!("options.{name}")).map(|t| Some(Some(t))),
    }
}

/// `configureLogs` options: `{ dir?, maxTotalBytes?, maxAgeMs?, removeOnExit? }`.
pub fn log_options(v: &Unknown) -> R<engine::jobs::retention::LogOptions> {
    if absent(v) {
        return Ok(Default::default());
    }
    let obj = as_object(v, "options")?;
    Ok(engine::jobs::retention::LogOptions {
        dir: setting(&obj, "dir", as_string)?,
        max_total_bytes: setting(&obj, "maxTotalBytes", as_number)?,
        max_age_ms: setting(&obj, "maxAgeMs", as_number)?,
        remove_on_exit: setting(&obj, "removeOnExit", as_bool)?.map(|b| b.unwrap_or(false)),
        ended_retention_ms: setting(&obj, "endedRetentionMs", as_number)?,
    })
}

/// `pruneBackgroundCommandLogs` options: `{ olderThanMs?, keepBytes? }`.
pub fn prune_options(v: &Unknown) -> R<engine::jobs::retention::PruneOptions> {
    if absent(v) {
        return Ok(Default::default());
    }
    let obj = as_object(v, "options")?;
    Ok(engine::jobs::retention::PruneOptions {
        older_than_ms: opt_number(&obj, "olderThanMs", "options")?,
        keep_bytes: opt_number(&obj, "keepBytes", "options")?,
    })
}
