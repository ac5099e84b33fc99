'use strict'
// The model-facing tools' contract, defined once in the engine
// (crates/engine/src/tools): each tool's name, description, refusal shape
// and generated JSON Schema, and the limits and field lists the tools, the
// host API and the MCP server share. docs/tool-schemas.json is this text,
// committed; __test__/contract.test.ts fails when it is stale.

const { loadNative } = require('./load.js')
const native = loadNative(() => require('../binding.js'))

/** `{ limits, tools: [{ name, family, description, shape, readOnly, inputSchema }] }`, parsed once. */
const contract = JSON.parse(native.toolContract())

/** The shared limits and field lists (e.g. `maxPageChars`, `extraTools`, `policyFields`). */
const limits = contract.limits

/** Each tool's spec by name. */
const specs = Object.fromEntries(contract.tools.map((t) => [t.name, t]))

/** A fresh copy of a tool's inputSchema (hosts may change what they were given). */
function inputSchemaOf(name) {
  return JSON.parse(JSON.stringify(specs[name].inputSchema))
}

module.exports = { contract, limits, specs, inputSchemaOf, toolRequest: native.toolRequest }
