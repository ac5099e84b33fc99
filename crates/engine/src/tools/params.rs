//! A model's params → the request a tool makes, or its refusal. Every tool
//! refuses keys its schema does not name (its `additionalProperties: false`
//! is a promise), counts `null` as "not given", and checks each value
//! against its parameter's spec; the command tools clamp `timeoutMs` to the
//! host's budget, default `cwd` to the sandbox root and read a built-in
//! artifact id as its command and stream.
//!
//! Values arrive as JS hands them over ([`Given`]): JSON scalars as they
//! are, anything else as a marker carrying how JS spells it, since only JS
//! can describe a symbol, a bigint or a revoked Proxy.

use serde_json::{json, Map, Value};

use super::json::quote;
use super::limits::ARTIFACT_PREFIX;
use super::specs::{spec, Family, ToolSpec, KEYS};
use crate::errors::js_number;
use crate::policy::validate::DEFAULT_TIMEOUT_MS;
use crate::text::paging::MAX_LIMIT;

/// One param value as JS handed it over.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// `undefined` (the key exists, its value does not).
    Absent,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A finite number.
    Num(f64),
    /// A string.
    Str(String),
    /// An array: its items, and how JS writes the whole.
    Array(Vec<Given>, String),
    /// A plain object (one level down): its keys and values in order, and
    /// how JS writes the whole.
    Object(Vec<(String, Given)>, String),
    /// Anything JSON cannot hold as a scalar: how a refusal shows it
    /// (`shown`, e.g. `{}` or `NaN`) and names its kind (`kind`, e.g.
    /// "an object", "a bigint", "NaN").
    Other {
        /// The value as `JSON.stringify` (or `String`) writes it.
        shown: String,
        /// Its kind, as a git tool's refusal names it.
        kind: String,
    },
}

impl Given {
    /// Read one value of the JS projection (lib/tools.js `projected`).
    pub fn from_json(v: &Value) -> Given {
        match v {
            Value::Null => Given::Null,
            Value::Bool(b) => Given::Bool(*b),
            Value::Number(n) => Given::Num(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Given::Str(s.clone()),
            Value::Array(items) => {
                Given::Array(items.iter().map(Given::from_json).collect(), v.to_string())
            }
            Value::Object(m) => {
                let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                if text("$js") == "undefined" {
                    return Given::Absent;
                }
                if let Some(props) = m.get("props").and_then(Value::as_array) {
                    let pairs = props
                        .iter()
                        .filter_map(|pair| {
                            let key = pair.get(0)?.as_str()?.to_string();
                            Some((key, Given::from_json(pair.get(1)?)))
                        })
                        .collect();
                    return Given::Object(pairs, text("shown"));
                }
                match m.get("items").and_then(Value::as_array) {
                    Some(items) => {
                        Given::Array(items.iter().map(Given::from_json).collect(), text("shown"))
                    }
                    None => Given::Other {
                        shown: text("shown"),
                        kind: text("$js"),
                    },
                }
            }
        }
    }

    /// Given at all: neither absent nor `null`.
    pub fn given(&self) -> bool {
        !matches!(self, Given::Absent | Given::Null)
    }

    /// The value in a refusal, as the tools have always shown it.
    pub fn shown(&self) -> String {
        match self {
            Given::Absent => "undefined".into(),
            Given::Null => "null".into(),
            Given::Bool(b) => b.to_string(),
            Given::Num(n) => js_number(*n),
            Given::Str(s) => quote(s),
            Given::Array(_, shown) | Given::Object(_, shown) | Given::Other { shown, .. } => {
                shown.clone()
            }
        }
    }

    /// The value's kind in a git tool's refusal.
    fn kind(&self) -> String {
        match self {
            Given::Num(n) => js_number(*n),
            Given::Array(..) => "an array".into(),
            Given::Object(..) => "an object".into(),
            Given::Other { kind, .. } => kind.clone(),
            other => other.shown(),
        }
    }

    fn json(&self) -> Option<Value> {
        match self {
            Given::Bool(b) => Some(json!(b)),
            Given::Num(n) => Some(json!(n)),
            Given::Str(s) => Some(json!(s)),
            _ => None,
        }
    }
}

/// run_command_bg's `limits`: absent or null is none; otherwise an object
/// of the spec's keys, each a number above 0 (whether they narrow the
/// host's limits is the start's check).
fn start_limits(spec: &ToolSpec, p: &Params) -> Result<Option<Value>, Refusal> {
    let Some(param) = spec.params.iter().find(|q| q.name == "limits") else {
        return Ok(None);
    };
    let pairs = match p.get("limits") {
        Given::Absent | Given::Null => return Ok(None),
        Given::Object(pairs, _) => pairs,
        v => {
            return Err(invalid(format!(
                "limits must be an object such as {{ \"memoryBytes\": 536870912 }} (got {})",
                v.shown()
            )))
        }
    };
    let known: Vec<&str> = param.properties.iter().map(|q| q.name).collect();
    let mut out = Map::new();
    for (key, v) in pairs {
        if !known.contains(&key.as_str()) {
            return Err(invalid(format!(
                "limits takes only {}: remove {}",
                known.join(", "),
                quote(key)
            )));
        }
        match v {
            Given::Absent | Given::Null => {}
            Given::Num(n) if *n > 0.0 => {
                out.insert(key.clone(), json!(n));
            }
            v => {
                return Err(invalid(format!(
                    "limits.{key} must be a number above 0 (got {})",
                    v.shown()
                )))
            }
        }
    }
    Ok(Some(Value::Object(out)))
}

/// A tool's refusal: its `NLC_*` code and the message, in the engine's
/// terms (lib/terms.js puts them in the tool's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The `NLC_*` code.
    pub code: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

fn invalid(message: String) -> Refusal {
    Refusal {
        code: "NLC_INVALID_ARGUMENT",
        message,
    }
}

/// What run_command_bg needs to know of the host's policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyView {
    /// The sandbox root, where a command without `cwd` runs.
    pub cwd_root: String,
    /// The host's budget (absent: the default).
    pub default_timeout_ms: Option<f64>,
}

/// The normalised request (what the JS adapter hands the host functions).
/// Params it leaves out (`argv`, `taskId`, a given `stream`, artifact_read's
/// window) go to the host function exactly as the model sent them, so the
/// host API's own checks and messages apply.
pub type Request = Value;

struct Params<'a> {
    pairs: &'a [(String, Given)],
}

impl Params<'_> {
    fn get(&self, key: &str) -> &Given {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&Given::Absent, |(_, v)| v)
    }
    fn given(&self, key: &str) -> bool {
        self.get(key).given()
    }
    /// An optional number passing `ok`, else refused with `what` it must be.
    fn number(
        &self,
        key: &str,
        what: &str,
        ok: impl Fn(f64) -> bool,
    ) -> Result<Option<f64>, Refusal> {
        match self.get(key) {
            Given::Absent | Given::Null => Ok(None),
            Given::Num(n) if ok(*n) => Ok(Some(*n)),
            v => Err(invalid(format!("{key} must be {what} (got {})", v.shown()))),
        }
    }
    fn boolean(&self, key: &str) -> Result<Option<bool>, Refusal> {
        match self.get(key) {
            Given::Absent | Given::Null => Ok(None),
            Given::Bool(b) => Ok(Some(*b)),
            v => Err(invalid(format!(
                "{key} must be true or false (got {})",
                v.shown()
            ))),
        }
    }
    fn string(&self, key: &str, what: &str) -> Result<Option<&str>, Refusal> {
        match self.get(key) {
            Given::Absent | Given::Null => Ok(None),
            Given::Str(s) => Ok(Some(s)),
            v => Err(invalid(format!(
                "{key} must be a string{what} (got {})",
                v.shown()
            ))),
        }
    }
}

/// Refuse the keys the schema does not name.
fn refuse_unknown(spec: &ToolSpec, pairs: &[(String, Given)]) -> Result<(), Refusal> {
    let unknown: Vec<&str> = pairs
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| spec.param(k).is_none())
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = unknown
        .iter()
        .take(10)
        .map(|k| {
            let units: Vec<u16> = k.encode_utf16().collect();
            if units.len() > 60 {
                quote(&format!("{}…", String::from_utf16_lossy(&units[..60])))
            } else {
                quote(k)
            }
        })
        .collect();
    let more = if unknown.len() > 10 {
        format!(" and {} more", unknown.len() - 10)
    } else {
        String::new()
    };
    let known: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
    let takes = if known.is_empty() {
        "no parameters".to_string()
    } else {
        format!("only {}", known.join(", "))
    };
    Err(invalid(format!(
        "unknown parameter{} {}{more}: this tool takes {takes}",
        if unknown.len() == 1 { "" } else { "s" },
        names.join(", ")
    )))
}

/// Check and normalise a call of tool `name` with `params` (`None`: the
/// params were not an object, `shown` as JS writes them). `policy` is the
/// host's, for run_command_bg (`None`: the host has none).
pub fn normalize(
    name: &str,
    params: Result<&[(String, Given)], &str>,
    policy: Option<&PolicyView>,
) -> Result<Request, Refusal> {
    let spec = spec(name).ok_or_else(|| invalid(format!("Unknown tool {}", quote(name))))?;
    let pairs = params.map_err(|shown| {
        invalid(format!(
            "params must be a JSON object of this shape (got {shown})"
        ))
    })?;
    refuse_unknown(&spec, pairs)?;
    let p = Params { pairs };
    if spec.family == Family::Git {
        return git(&spec, &p);
    }
    let max = MAX_LIMIT as f64;
    match name {
        "run_command_bg" => {
            let policy = policy.ok_or(Refusal {
                code: "NLC_NO_POLICY",
                message: "No background command policy is set for this host".into(),
            })?;
            let budget = policy.default_timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
            let requested = p.number("timeoutMs", "a positive number of milliseconds", |n| {
                n > 0.0
            })?;
            let cwd = match p.get("cwd") {
                Given::Absent | Given::Null => policy.cwd_root.clone(),
                Given::Str(s) => s.clone(),
                v => {
                    return Err(invalid(format!(
                        "cwd must be a string: a directory inside the sandbox root (got {})",
                        v.shown()
                    )))
                }
            };
            let mut options = Map::new();
            options.insert("cwd".into(), json!(cwd));
            if let Some(t) = requested {
                options.insert("timeoutMs".into(), json!(t.min(budget)));
            }
            let stdin = p.boolean("stdin")?;
            let terminal = p.boolean("terminal")?;
            if stdin == Some(true) {
                options.insert("stdin".into(), json!("pipe"));
            }
            if terminal == Some(true) {
                options.insert("terminal".into(), json!(true));
            }
            if let Some(limits) = start_limits(&spec, &p)? {
                options.insert("limits".into(), limits);
            }
            Ok(json!({ "op": "start", "options": options }))
        }
        "command_status" => {
            // null is "not given": a plain status, never an unbounded wait
            let wait = p.number(
                "waitMs",
                "a number of milliseconds ≥ 0 to wait at most",
                |n| n >= 0.0,
            )?;
            if let Some(pattern) = p.string("waitFor", ": the text to wait for")? {
                return Ok(
                    json!({ "op": "awaitOutput", "pattern": pattern, "timeoutMs": wait.unwrap_or(0.0) }),
                );
            }
            Ok(match wait {
                None => json!({ "op": "status" }),
                Some(t) => json!({ "op": "await", "timeoutMs": t }),
            })
        }
        "command_output" => output(&p, max),
        "command_kill" => Ok(json!({ "op": "kill" })),
        "command_input" => {
            let mut data = p.string("text", "")?.unwrap_or("").to_string();
            match p.get("keys") {
                Given::Absent | Given::Null => {}
                Given::Array(items, _) => {
                    for (i, k) in items.iter().enumerate() {
                        match k {
                            Given::Str(s) if KEYS.iter().any(|(n, _)| n == s) => {
                                data.push_str(
                                    KEYS.iter().find(|(n, _)| n == s).map_or("", |(_, b)| b),
                                );
                            }
                            _ => {
                                let names: Vec<&str> = KEYS.iter().map(|(n, _)| *n).collect();
                                return Err(Refusal {
                                    code: "NLC_INVALID_ARGUMENT",
                                    message: format!(
                                        "keys[{i}] {} is not a key name: use {}",
                                        k.shown(),
                                        names.join(", ")
                                    ),
                                });
                            }
                        }
                    }
                }
                v => {
                    return Err(invalid(format!(
                        "keys must be an array of key names (got {})",
                        v.shown()
                    )))
                }
            }
            let end = p.boolean("end")?;
            Ok(json!({ "op": "input", "data": data, "end": end == Some(true) }))
        }
        "command_list" => {
            let mut out = json!({ "op": "list" });
            if let Some(r) = p.boolean("running")? {
                out["running"] = json!(r);
            }
            Ok(out)
        }
        "artifact_read" => {
            let window: Vec<&str> = ["offset", "limit"]
                .into_iter()
                .filter(|k| p.given(k))
                .collect();
            Ok(json!({ "op": "artifact", "window": window }))
        }
        _ => Err(invalid(format!("Unknown tool {}", quote(name)))),
    }
}

fn output(p: &Params, max: f64) -> Result<Request, Refusal> {
    // As the schema says: integers, offset ≥ 0, limit 1..200000 (the host
    // API is more forgiving: it counts a negative offset as 0 and clamps limit).
    let integer = |n: f64| n.fract() == 0.0;
    let offset = p.number("offset", "a character offset (an integer ≥ 0)", |n| {
        integer(n) && n >= 0.0
    })?;
    let limit = p.number(
        "limit",
        &format!("a number of characters (an integer from 1 to {max})"),
        |n| integer(n) && (1.0..=max).contains(&n),
    )?;
    let rest = |task: Option<(&str, &str)>| -> Result<Request, Refusal> {
        let mut out = Map::new();
        if let Some((task_id, stream)) = task {
            out.insert("taskId".into(), json!(task_id));
            out.insert("stream".into(), json!(stream));
        } else if !p.given("stream") {
            out.insert("stream".into(), json!("stdout"));
        }
        if let Some(pattern) = p.string("grep", ": the text to look for")? {
            out.insert("op".into(), json!("search"));
            out.insert("pattern".into(), json!(pattern));
            if let Some(o) = offset {
                out.insert("from".into(), json!(o));
            }
            return Ok(Value::Object(out));
        }
        let tail = p.number(
            "tail",
            &format!("a number of characters from the end (an integer from 0 to {max})"),
            |n| integer(n) && (0.0..=max).contains(&n),
        )?;
        out.insert("op".into(), json!("read"));
        let mut page = Map::new();
        if let Some(o) = offset {
            page.insert("offset".into(), json!(o));
        }
        if let Some(l) = limit {
            page.insert("limit".into(), json!(l));
        }
        if let Some(t) = tail {
            page.insert("tail".into(), json!(t));
        }
        out.insert("page".into(), Value::Object(page));
        Ok(Value::Object(out))
    };
    if p.given("artifactId") {
        if p.given("taskId") {
            return Err(invalid("give taskId or artifactId, not both".into()));
        }
        if p.given("stream") {
            return Err(invalid(
                "stream goes with taskId; an artifactId names one stream already".into(),
            ));
        }
        let id = p.string("artifactId", "")?.unwrap_or_default();
        if !p.given("tail") && !p.given("grep") {
            let mut window = Map::new();
            if let Some(o) = offset {
                window.insert("offset".into(), json!(o));
            }
            if let Some(l) = limit {
                window.insert("limit".into(), json!(l));
            }
            return Ok(json!({ "op": "artifact", "artifactId": id, "window": window }));
        }
        // tail and grep read the artifact's own log: JS first checks it is
        // this host's artifact (reading it refuses any other), then goes on
        // with `then` — its command and stream, or why it has none.
        let then = match command_of_artifact(id) {
            Some(task) => rest(Some(task))
                .unwrap_or_else(|r| json!({ "refusal": { "code": r.code, "message": r.message } })),
            None => json!({ "refusal": {
                "code": "NLC_UNKNOWN_ARTIFACT",
                "message": format!("artifact \"{id}\" is not a command's output: page it with offset and limit"),
            } }),
        };
        return Ok(json!({ "op": "artifactLog", "artifactId": id, "then": then }));
    }
    if !p.given("taskId") {
        return Err(invalid("taskId or artifactId is required".into()));
    }
    rest(None)
}

/// The command and stream a built-in artifact id names (`nlc-<taskId>-<stream>`).
pub fn command_of_artifact(id: &str) -> Option<(&str, &str)> {
    let (task, stream) = id.strip_prefix(ARTIFACT_PREFIX)?.rsplit_once('-')?;
    (!task.is_empty() && matches!(stream, "stdout" | "stderr")).then_some((task, stream))
}

/// A git tool's params as JSON scalars (the engine's git validators check
/// the rest); a value JSON cannot hold as a scalar is refused here.
fn git(spec: &ToolSpec, p: &Params) -> Result<Request, Refusal> {
    let mut out = Map::new();
    for param in &spec.params {
        let v = p.get(param.name);
        if !v.given() {
            continue;
        }
        match v.json() {
            Some(j) => {
                out.insert(param.name.to_string(), j);
            }
            None => {
                return Err(invalid(format!(
                    "{}: {} must be {}, not {}",
                    spec.name,
                    param.name,
                    param.expected(),
                    v.kind()
                )))
            }
        }
    }
    Ok(json!({ "op": "git", "params": out }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, pairs: &[(&str, Given)]) -> Result<Request, Refusal> {
        let owned: Vec<(String, Given)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let policy = PolicyView {
            cwd_root: "/root".into(),
            default_timeout_ms: Some(1000.0),
        };
        normalize(name, Ok(&owned), Some(&policy))
    }

    #[test]
    fn a_timeout_narrows_the_budget_never_widens_it_and_cwd_defaults_to_the_root() {
        let r = call("run_command_bg", &[("timeoutMs", Given::Num(5000.0))]).unwrap();
        assert_eq!(r["options"], json!({ "cwd": "/root", "timeoutMs": 1000.0 }));
        let r = call(
            "run_command_bg",
            &[
                ("timeoutMs", Given::Num(10.0)),
                ("cwd", Given::Str("sub".into())),
            ],
        )
        .unwrap();
        assert_eq!(r["options"], json!({ "cwd": "sub", "timeoutMs": 10.0 }));
        let e = call("run_command_bg", &[("timeoutMs", Given::Num(-5.0))]).unwrap_err();
        assert_eq!(
            e.message,
            "timeoutMs must be a positive number of milliseconds (got -5)"
        );
    }

    #[test]
    fn unknown_keys_are_refused_for_every_family() {
        for tool in ["run_command_bg", "git_log", "artifact_read"] {
            let e = call(tool, &[("shell", Given::Bool(true))]).unwrap_err();
            assert!(
                e.message
                    .starts_with("unknown parameter \"shell\": this tool takes only "),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn an_artifact_id_names_its_command_and_stream() {
        assert_eq!(
            command_of_artifact("nlc-a-b-1-stderr"),
            Some(("a-b-1", "stderr"))
        );
        assert_eq!(command_of_artifact("nlc-x-stdin"), None);
        assert_eq!(command_of_artifact("other-x-stdout"), None);
    }
}
