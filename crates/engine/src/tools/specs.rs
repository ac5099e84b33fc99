//! Every tool the package offers, described once: its name, description,
//! the shape its refusals quote, and each parameter with its JSON Schema
//! facts. The schemas clients receive are generated here ([`ToolSpec::input_schema`]),
//! as the closed objects SPEC §3 asks for (no top-level combinators).

use super::json::Json;
use super::limits;
use crate::git::args as git_args;
use crate::text::{matching, paging};

/// Which set a tool belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// NeuroLink's four command tools (the default set).
    Command,
    /// A command tool added with `{ extra: [...] }`.
    Extra,
    /// One of the six read-only git tools.
    Git,
    /// A tool only the MCP server offers.
    Mcp,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Command => "command",
            Family::Extra => "extra",
            Family::Git => "git",
            Family::Mcp => "mcp",
        }
    }
}

/// A parameter's JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `"string"` (with `choices`: one of them).
    String,
    /// `"number"`: any finite number.
    Number,
    /// `"integer"`.
    Integer,
    /// `"boolean"`.
    Boolean,
    /// `"array"` of strings (with `choices`: each one of them).
    StringArray,
    /// `"object"` of the `properties` given, and nothing else.
    Object,
}

/// One parameter: everything its schema and its checks need.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// The name the model sends.
    pub name: &'static str,
    /// Its JSON type.
    pub kind: Kind,
    /// The allowed strings (of the value, or of each item of an array).
    pub choices: Vec<String>,
    /// Inclusive lower bound.
    pub minimum: Option<f64>,
    /// Exclusive lower bound.
    pub exclusive_minimum: Option<f64>,
    /// Inclusive upper bound.
    pub maximum: Option<f64>,
    /// The fewest items of an array.
    pub min_items: Option<u32>,
    /// What the model reads about it.
    pub description: Option<String>,
    /// An object's own params (`Kind::Object`).
    pub properties: Vec<Param>,
}

impl Param {
    fn new(name: &'static str, kind: Kind, description: &str) -> Param {
        Param {
            name,
            kind,
            choices: Vec::new(),
            minimum: None,
            exclusive_minimum: None,
            maximum: None,
            min_items: None,
            description: (!description.is_empty()).then(|| description.to_string()),
            properties: Vec::new(),
        }
    }
    fn string(name: &'static str, description: &str) -> Param {
        Param::new(name, Kind::String, description)
    }
    fn number(name: &'static str, description: &str) -> Param {
        Param::new(name, Kind::Number, description)
    }
    fn integer(name: &'static str, description: &str) -> Param {
        Param::new(name, Kind::Integer, description)
    }
    fn boolean(name: &'static str, description: &str) -> Param {
        Param::new(name, Kind::Boolean, description)
    }
    fn choices(mut self, names: &[&str]) -> Param {
        self.choices = names.iter().map(|s| s.to_string()).collect();
        self
    }
    fn min(mut self, n: f64) -> Param {
        self.minimum = Some(n);
        self
    }
    fn max(mut self, n: f64) -> Param {
        self.maximum = Some(n);
        self
    }

    /// The parameter's JSON Schema.
    pub fn schema(&self) -> Json {
        let mut out: Vec<(String, Json)> = Vec::new();
        let mut put = |k: &str, v: Json| out.push((k.to_string(), v));
        let type_name = match self.kind {
            Kind::String => "string",
            Kind::Number => "number",
            Kind::Integer => "integer",
            Kind::Boolean => "boolean",
            Kind::StringArray => "array",
            Kind::Object => "object",
        };
        put("type", Json::str(type_name));
        if self.kind == Kind::Object {
            let props: Vec<(&str, Json)> = self
                .properties
                .iter()
                .map(|q| (q.name, q.schema()))
                .collect();
            put("properties", Json::obj(props));
            put("additionalProperties", Json::Bool(false));
        }
        if self.kind == Kind::StringArray {
            let mut items = vec![("type", Json::str("string"))];
            if !self.choices.is_empty() {
                items.push(("enum", Json::strs(&self.choices)));
            }
            put("items", Json::obj(items));
        } else if !self.choices.is_empty() {
            put("enum", Json::strs(&self.choices));
        }
        if let Some(n) = self.min_items {
            put("minItems", Json::Num(f64::from(n)));
        }
        if let Some(n) = self.exclusive_minimum {
            put("exclusiveMinimum", Json::Num(n));
        }
        if let Some(n) = self.minimum {
            put("minimum", Json::Num(n));
        }
        if let Some(n) = self.maximum {
            put("maximum", Json::Num(n));
        }
        if let Some(d) = &self.description {
            put("description", Json::str(d.as_str()));
        }
        Json::Obj(out)
    }

    /// What its value must be, as a git tool's refusal says it.
    pub fn expected(&self) -> String {
        if !self.choices.is_empty() && self.kind == Kind::String {
            let quoted: Vec<String> = self.choices.iter().map(|c| super::json::quote(c)).collect();
            return format!("one of {}", quoted.join(", "));
        }
        match self.kind {
            Kind::Boolean => "true or false".into(),
            Kind::Number => "a number".into(),
            Kind::Object => "an object".into(),
            Kind::Integer => match (self.minimum, self.maximum) {
                (Some(lo), Some(hi)) => format!("an integer from {lo} to {hi}"),
                (lo, _) => format!("an integer ≥ {}", lo.unwrap_or(0.0)),
            },
            _ => "a string".into(),
        }
    }
}

/// One tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// Which set it belongs to.
    pub family: Family,
    /// What the model reads about it.
    pub description: String,
    /// The params shape its refusals quote, e.g. `{ taskId: string }`.
    pub shape: String,
    /// Its parameters, in schema order.
    pub params: Vec<Param>,
    /// The parameters it cannot do without (rules across parameters, such
    /// as "taskId or artifactId", live in the description and the checks).
    pub required: Vec<&'static str>,
    /// Whether it only reads (an MCP annotation).
    pub read_only: bool,
}

impl ToolSpec {
    /// The parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The tool's `inputSchema`: `{ type: "object", properties, required,
    /// additionalProperties: false }`.
    pub fn input_schema(&self) -> Json {
        Json::obj([
            ("type", Json::str("object")),
            (
                "properties",
                Json::Obj(
                    self.params
                        .iter()
                        .map(|p| (p.name.to_string(), p.schema()))
                        .collect(),
                ),
            ),
            ("required", Json::strs(&self.required)),
            ("additionalProperties", Json::Bool(false)),
        ])
    }

    /// The tool as JS receives it.
    pub fn to_json(&self) -> Json {
        Json::obj([
            ("name", Json::str(self.name)),
            ("family", Json::str(self.family.name())),
            ("description", Json::str(self.description.as_str())),
            ("shape", Json::str(self.shape.as_str())),
            ("readOnly", Json::Bool(self.read_only)),
            ("inputSchema", self.input_schema()),
        ])
    }
}

/// What each key name of command_input sends, as a terminal sends it.
pub const KEYS: [(&str, &str); 11] = [
    ("enter", "\r"),
    ("tab", "\t"),
    ("escape", "\x1b"),
    ("backspace", "\x7f"),
    ("up", "\x1b[A"),
    ("down", "\x1b[B"),
    ("right", "\x1b[C"),
    ("left", "\x1b[D"),
    ("ctrl-c", "\x03"),
    ("ctrl-d", "\x04"),
    ("ctrl-z", "\x1a"),
];

const TASK_ID: &str = "The taskId that run_command_bg returned.";

const GIT_COMMON: &str = " Values only, never flags: a ref or path starting with \"-\" is refused, and paths must stay inside the repository. \
git runs with a fixed read-only hardening prefix (no pager, colour, hooks, external diff or filter programs) that commandLine leaves out. \
The preview is the start of the output; output is the banked ref with all of it (its readBackHint says how to page it).";

fn tool(
    name: &'static str,
    family: Family,
    description: String,
    shape: &str,
    params: Vec<Param>,
    required: &[&'static str],
) -> ToolSpec {
    ToolSpec {
        name,
        family,
        description,
        shape: shape.to_string(),
        params,
        required: required.to_vec(),
        read_only: !matches!(name, "run_command_bg" | "command_kill" | "command_input"),
    }
}

/// Every tool, in the order hosts register them.
pub fn specs() -> Vec<ToolSpec> {
    let max_page = paging::MAX_LIMIT as f64;
    let default_page = paging::DEFAULT_LIMIT;
    let key_names: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
    let page_sentence = format!(
        "offset and limit count characters (limit defaults to {default_page}, at most {max_page}); hasMore says whether to read on from offset + limit."
    );
    let offset = Param::integer("offset", "First character (default 0).").min(0.0);
    let limit = Param::integer(
        "limit",
        &format!("Characters to read (default {default_page})."),
    )
    .min(1.0)
    .max(max_page);
    let git = |name, description: &str, shape, params, required: &[&'static str]| {
        tool(
            name,
            Family::Git,
            format!("{description}{GIT_COMMON}"),
            shape,
            params,
            required,
        )
    };
    let (max_count, max_unified) = (git_args::MAX_MAX_COUNT, git_args::MAX_UNIFIED);
    vec![
        tool(
            "run_command_bg",
            Family::Command,
            "Start a command in the background and get its taskId at once; keep working and check on it later with command_status. \
There is NO shell: argv is [executable, ...args], each argument its own entry (no pipes, redirects, && or globbing), and the executable must be one the host allowlisted, spelled exactly. \
cwd defaults to the sandbox root and must stay inside it. timeoutMs may shorten the budget the host set, never lengthen it. \
Both output streams are kept in full: the status tail is orientation only; the banked stdout/stderr refs (and command_output) are the evidence.".into(),
            "{ argv: string[], cwd?: string, timeoutMs?: number, stdin?: boolean, terminal?: boolean }",
            vec![
                Param { min_items: Some(1), ..Param::new("argv", Kind::StringArray, "The executable and its arguments, e.g. [\"/usr/bin/pnpm\", \"run\", \"lint\"].") },
                Param::string("cwd", "Working directory inside the sandbox root (relative paths resolve against the root)."),
                Param { exclusive_minimum: Some(0.0), ..Param::number("timeoutMs", "A shorter budget than the host's, in milliseconds.") },
                Param::boolean("stdin", "Give the command an input to write to with command_input (default: none, it reads end of file)."),
                Param::boolean("terminal", "Run it in a terminal (80x24) for programs that need one (prompts, REPLs, TUIs); its input comes from command_input, its output (escape sequences included) is stdout."),
                Param {
                    properties: vec![
                        Param { exclusive_minimum: Some(0.0), ..Param::number("memoryBytes", "Memory the whole process tree may use, in bytes.") },
                        Param { exclusive_minimum: Some(0.0), ..Param::number("processes", "Processes the tree may hold at once.") },
                        Param { exclusive_minimum: Some(0.0), ..Param::number("cpuMs", "CPU time the whole tree may use, in milliseconds.") },
                    ],
                    ..Param::new("limits", Kind::Object, "Tighter resource limits than the host's (never wider); a command that goes over is stopped with state killed and limit naming which.")
                },
            ],
            &["argv"],
        ),
        tool(
            "command_status",
            Family::Command,
            "The live status of a background command: state (running, exited, killed, timeout, output-limit), exit code, byte counts and a short tail. \
With waitMs it waits up to that long for the command to settle first; with waitFor as well, it returns as soon as that text appears in either stream \
(waitMatched, and waitLine: the line holding it) — e.g. waitFor \"listening on\" for a server. Once settled, stdout/stderr are banked refs holding the complete output. \
running/finished count your session's commands (finished = settled and not looked at yet). \
waitingForInput: true (with a hint) means it is blocked on a prompt, reading its input: answer it with command_input.".into(),
            "{ taskId: string, waitMs?: number, waitFor?: string }",
            vec![
                Param::string("taskId", TASK_ID),
                Param::number("waitMs", "Wait at most this long for the command to settle (or for waitFor to appear).").min(0.0),
                Param::string("waitFor", "Text (a plain substring of one line) to wait for in stdout or stderr, up to waitMs; the result adds waitMatched and waitLine."),
            ],
            &["taskId"],
        ),
        tool(
            "command_output",
            Family::Command,
            format!("Read one page of a command's complete output, while it runs or after, by taskId (and stream), or of a banked artifact by the artifactId a readBackHint names: \
{page_sentence} \
Give taskId or artifactId, exactly one of them; stream goes with taskId only. \
tail reads the last characters instead (e.g. tail 5000 for the last screen). \
grep returns the lines holding that text instead of a page: {{ matches: [{{ line, offset, text }}], hasMore, scannedTo }} (search again from offset: scannedTo for more)."),
            "{ taskId: string, stream?: \"stdout\" | \"stderr\", offset?: number, limit?: number, tail?: number, grep?: string } | { artifactId: string, offset?: number, limit?: number, tail?: number, grep?: string }",
            vec![
                Param::string("taskId", TASK_ID),
                Param::string("artifactId", "An artifactId from a stdout/stderr ref or a git result (instead of taskId and stream)."),
                Param::string("stream", "Which stream of taskId (default stdout).").choices(&["stdout", "stderr"]),
                offset.clone(),
                limit.clone(),
                Param::integer("tail", "Read the last this many characters instead of from offset.").min(0.0).max(max_page),
                Param::string("grep", &format!("Return the lines holding this text (from offset, at most {}), not a page.", matching::DEFAULT_MAX_MATCHES)),
            ],
            &[],
        ),
        tool(
            "command_kill",
            Family::Command,
            "Stop a background command and its whole process group (SIGTERM, then SIGKILL after the grace period). Everything it printed stays banked and readable.".into(),
            "{ taskId: string }",
            vec![Param::string("taskId", TASK_ID)],
            &["taskId"],
        ),
        tool(
            "command_input",
            Family::Extra,
            format!("Write to a running command started with stdin: true or terminal: true: text is sent as is, then each of keys in order, as a terminal sends them \
({}). In a terminal a line is submitted with the enter key. end: true closes the input after (in a terminal: sends end of file, ctrl-d; ctrl-z and enter on Windows). \
Returns bytesWritten and the status (with nothing to write: 0 and the status); read what it printed with command_output.", key_names.join(", ")),
            "{ taskId: string, text?: string, keys?: string[], end?: boolean }",
            vec![
                Param::string("taskId", TASK_ID),
                Param::string("text", "Text to write as is."),
                Param::new("keys", Kind::StringArray, "Named keys to send after the text, in order.").choices(&key_names),
                Param::boolean("end", "Close the input afterwards (in a terminal: send end of file, ctrl-d; ctrl-z and enter on Windows)."),
            ],
            &["taskId"],
        ),
        tool(
            "command_list",
            Family::Extra,
            "Your session's background commands, oldest first: taskId, label, argv, state, exit code, and waitingForInput (true: it is blocked on a prompt; answer with command_input). running: true lists only those still running, false only settled ones.".into(),
            "{ running?: boolean }",
            vec![Param::boolean("running", "Only running (true) or only settled (false) commands.")],
            &[],
        ),
        git(
            "git_log",
            &format!("The commit log (read-only): newest first, at most maxCount commits (default {}), optionally from a ref, limited to a path or to commits since a date. format: oneline (default), full, stat or name-only.", git_args::DEFAULT_MAX_COUNT),
            &format!("{{ ref?: string, path?: string, maxCount?: number (1..{max_count}), since?: string, format?: \"oneline\" | \"full\" | \"stat\" | \"name-only\" }}"),
            vec![
                Param::string("ref", "A revision: branch, tag, commit, HEAD~2 … (never a flag)."),
                Param::string("path", "Only commits touching this path (inside the repository)."),
                Param::number("maxCount", &format!("How many commits (default {}); floored and clamped to 1..{max_count}.", git_args::DEFAULT_MAX_COUNT)),
                Param::string("since", "Only commits after this date, e.g. \"2 weeks ago\" or \"2024-01-31\"."),
                Param::string("format", "").choices(&["oneline", "full", "stat", "name-only"]),
            ],
            &[],
        ),
        git(
            "git_show",
            "One commit (read-only): its message and diff, or only the names of the files it changed; optionally limited to a path.",
            "{ ref: string, path?: string, nameOnly?: boolean }",
            vec![
                Param::string("ref", "The revision to show."),
                Param::string("path", "Only this path."),
                Param::boolean("nameOnly", "List changed file names instead of the diff."),
            ],
            &["ref"],
        ),
        git(
            "git_diff",
            "A diff (read-only): the working tree against the index with no revisions, against base with one, or base..head with both (head needs a base). nameOnly or stat summarise it; unified sets the context lines.",
            &format!("{{ base?: string, head?: string, path?: string, nameOnly?: boolean, stat?: boolean, unified?: number (0..{max_unified}) }}"),
            vec![
                Param::string("base", "The revision to compare from."),
                Param::string("head", "The revision to compare to (needs base)."),
                Param::string("path", "Only this path."),
                Param::boolean("nameOnly", ""),
                Param::boolean("stat", ""),
                Param::number("unified", &format!("Context lines; floored and clamped to 0..{max_unified}.")),
            ],
            &[],
        ),
        git(
            "git_blame",
            "Who last changed each line of a file (read-only), optionally at a revision and for a line range (a lone lineStart spans 100 lines; a lone lineEnd covers the 100 lines up to it).",
            "{ path: string, ref?: string, lineStart?: number, lineEnd?: number }",
            vec![
                Param::string("path", "The file, inside the repository."),
                Param::string("ref", "The revision to blame at."),
                Param::number("lineStart", "First line (floored; at least 1)."),
                Param::number("lineEnd", "Last line (floored; at least 1; not before lineStart)."),
            ],
            &["path"],
        ),
        git(
            "git_merge_base",
            "The best common ancestor of two revisions (read-only).",
            "{ base: string, head: string }",
            vec![Param::string("base", "One revision."), Param::string("head", "The other revision.")],
            &["base", "head"],
        ),
        git(
            "git_ls_files",
            "The files git tracks (read-only), optionally under a path.",
            "{ path?: string }",
            vec![Param::string("path", "Only files under this path.")],
            &[],
        ),
        tool(
            "artifact_read",
            Family::Mcp,
            format!("Read one page of a banked output (a git tool's \"output\" ref holds all of it; its result shows only the start): {page_sentence}"),
            "{ artifactId: string, offset?: number, limit?: number }",
            vec![Param::string("artifactId", "The artifactId of an output ref."), offset, limit],
            &["artifactId"],
        ),
    ]
}

/// The tool named `name`.
pub fn spec(name: &str) -> Option<ToolSpec> {
    specs().into_iter().find(|s| s.name == name)
}

/// The whole contract as JSON text: `{ limits, tools }` (indented, as the
/// committed docs/tool-schemas.json holds it).
pub fn contract_json() -> String {
    let tools = Json::Arr(specs().iter().map(ToolSpec::to_json).collect());
    let mut text = Json::obj([("limits", limits::limits_json()), ("tools", tools)]).pretty();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_a_closed_object_without_top_level_combinators() {
        for s in specs() {
            let Json::Obj(top) = s.input_schema() else {
                panic!("{}", s.name)
            };
            let keys: Vec<&str> = top.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(
                keys,
                ["type", "properties", "required", "additionalProperties"],
                "{}",
                s.name
            );
            for r in &s.required {
                assert!(
                    s.param(r).is_some(),
                    "{}: required {r} is a parameter",
                    s.name
                );
            }
        }
    }

    #[test]
    fn the_git_specs_name_the_params_the_git_validators_take() {
        for tool in crate::git::GitTool::ALL {
            let spec = spec(tool.name()).unwrap();
            let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            assert_eq!(names, tool.params(), "{}", tool.name());
        }
    }

    #[test]
    fn integer_bounds_read_as_the_refusals_say_them() {
        let out = spec("command_output").unwrap();
        assert_eq!(
            out.param("limit").unwrap().expected(),
            "an integer from 1 to 200000"
        );
        assert_eq!(out.param("offset").unwrap().expected(), "an integer ≥ 0");
        assert_eq!(
            spec("git_log").unwrap().param("format").unwrap().expected(),
            "one of \"oneline\", \"full\", \"stat\", \"name-only\""
        );
    }
}
