//! The numbers and names the tools, the host API and the MCP server share,
//! each defined once (most where the engine enforces it) and handed to JS by
//! [`limits_json`].

use super::json::Json;
use crate::git::{args as git_args, run as git_run};
use crate::jobs::bank;
use crate::policy::validate as policy;
use crate::text::{matching, paging};

/// The most entries a list the host passes (`allowedExecutables`, confine
/// paths) may have; the snapshot JS makes of a longer one stops reading it.
pub const MAX_LIST_ENTRIES: u32 = 65_536;

/// The tools `createBackgroundCommandTools(host, { extra })` can add (SPEC §3, §9).
pub const EXTRA_TOOLS: [&str; 2] = ["command_input", "command_list"];

/// The fields of a policy, each read once by the JS snapshot (SPEC §2).
pub const POLICY_FIELDS: [&str; 10] = [
    "allowedExecutables",
    "cwdRoot",
    "allowlist",
    "defaultTimeoutMs",
    "maxOutputBytes",
    "killGraceMs",
    "idleTimeoutMs",
    "confine",
    "inputWaitMs",
    "limits",
];

/// The policy fields a callback holds, so a JSON file (the MCP server's
/// `--config`) cannot.
pub const CALLBACK_FIELDS: [&str; 1] = ["allowlist"];

/// The fields of a start's options, each read once by the JS snapshot.
pub const START_OPTION_FIELDS: [&str; 13] = [
    "cwd",
    "timeoutMs",
    "maxOutputBytes",
    "env",
    "label",
    "sessionId",
    "abortSignal",
    "idleTimeoutMs",
    "confine",
    "stdin",
    "terminal",
    "inputWaitMs",
    "limits",
];

/// The fields of `configureGitTools`' options, each read once by the JS snapshot.
pub const GIT_OPTION_FIELDS: [&str; 6] = [
    "repoRoot",
    "timeoutMs",
    "maxOutputBytes",
    "previewChars",
    "gitExecutable",
    "confine",
];

/// The prefix of a built-in artifact id (`nlc-<taskId>-<stream>`).
pub use bank::PREFIX as ARTIFACT_PREFIX;

fn num(n: impl Into<f64>) -> Json {
    Json::Num(n.into())
}

/// Every shared limit and list, as the object `limits` of the contract.
pub fn limits_json() -> Json {
    Json::obj([
        ("defaultTimeoutMs", num(policy::DEFAULT_TIMEOUT_MS)),
        (
            "defaultMaxOutputBytes",
            num(policy::DEFAULT_MAX_OUTPUT_BYTES as f64),
        ),
        ("defaultKillGraceMs", num(policy::DEFAULT_KILL_GRACE_MS)),
        ("defaultInputWaitMs", num(policy::DEFAULT_INPUT_WAIT_MS)),
        ("defaultPageChars", num(paging::DEFAULT_LIMIT as f64)),
        ("maxPageChars", num(paging::MAX_LIMIT as f64)),
        (
            "defaultMaxMatches",
            num(matching::DEFAULT_MAX_MATCHES as f64),
        ),
        ("maxListEntries", num(MAX_LIST_ENTRIES)),
        ("bankPreviewChars", num(bank::PREVIEW_CHARS as f64)),
        ("artifactPrefix", Json::str(ARTIFACT_PREFIX)),
        ("gitDefaultTimeoutMs", num(git_run::DEFAULT_TIMEOUT_MS)),
        (
            "gitDefaultMaxOutputBytes",
            num(git_run::DEFAULT_MAX_OUTPUT_BYTES as f64),
        ),
        (
            "gitDefaultPreviewChars",
            num(git_run::DEFAULT_PREVIEW_CHARS),
        ),
        ("gitMaxPreviewChars", num(git_run::MAX_PREVIEW_CHARS)),
        (
            "gitStderrPreviewChars",
            num(git_run::STDERR_PREVIEW_CHARS as f64),
        ),
        ("gitDefaultMaxCount", num(git_args::DEFAULT_MAX_COUNT)),
        ("gitMaxMaxCount", num(git_args::MAX_MAX_COUNT)),
        ("gitMaxUnified", num(git_args::MAX_UNIFIED)),
        ("extraTools", Json::strs(&EXTRA_TOOLS)),
        ("policyFields", Json::strs(&POLICY_FIELDS)),
        ("callbackFields", Json::strs(&CALLBACK_FIELDS)),
        ("startOptionFields", Json::strs(&START_OPTION_FIELDS)),
        ("gitOptionFields", Json::strs(&GIT_OPTION_FIELDS)),
    ])
}
