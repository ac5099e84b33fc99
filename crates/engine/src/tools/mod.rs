//! The model-facing tools' contract, defined once: every tool's name,
//! description, parameters (each described once, from which its JSON Schema
//! is generated), the limits the tools and the host API share, and the check
//! that turns a model's params into a normalised request (unknown keys
//! refused, `null` as "not given", timeouts clamped, artifact ids parsed).
//!
//! The JS adapter (lib/tools.js) and the MCP server loop over these specs
//! and only call the host functions; `docs/tool-schemas.json` is generated
//! from [`contract_json`] and a test fails when it is stale.

pub mod json;
pub mod limits;
pub mod params;
pub mod specs;

pub use params::{normalize, Given, PolicyView, Refusal, Request};
pub use specs::{contract_json, spec, specs, Family, Kind, Param, ToolSpec};
