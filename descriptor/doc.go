// Package descriptor loads, checks, hashes and evaluates Agent Harness
// Descriptors (RFC-0011, descriptor_version "aioc.agent_graph.v0").
//
// A descriptor is a YAML or JSON document that describes an agent graph as
// data: which agent a run starts with (runtime.entry_agent), the turn limit
// (runtime.max_turns), the agents with their model, logical tool ids and
// handoff targets (agent ids, or {agent, where} objects whose where gate
// makes the handoff conditional), defaults shared by agents
// (agent_defaults), logical tool
// ids mapped to registry targets (tools), context defaults (context.fields),
// the context paths instructions may read (context.references) and a
// catalog of reusable instruction blocks (instruction_parts). It contains no
// code, policies or credentials: the host binds tools and owns the run.
//
// # Loading
//
// Load and Parse (or a configured Loader) decode the document, replace the
// instruction sources of each agent and of agent_defaults by a
// materialized "instructions" value, and check the result:
//
//   - instructions_file: the file's content. It cannot be combined with
//     inline instructions or with instructions_files.
//   - instructions_files: the files' contents in order, then the inline
//     instructions string if any and not empty, joined with a blank line
//     ("\n\n").
//   - instructions_sequence: a list of items, each with exactly one of file,
//     ref (a key of instruction_parts) or text, and an optional
//     where: {context: PATH} gate. It becomes a list of {text, where} parts
//     and cannot be combined with any other instruction field.
//   - instructions: a string, or a list of {text, where} parts, is kept.
//
// Instruction paths are local, relative to the descriptor's directory, and
// must stay inside a root directory (by default that same directory): URLs,
// absolute paths, backslashes, glob characters, ".." that climbs out and
// symbolic links that lead out are all refused; files are read through an
// os.Root. A Loader may instead take the contents from a prompt map, for
// callers that load prompts themselves. Sizes are bounded: see
// MaxDescriptorSize, MaxInstructionFileSize and MaxInstructionsTotal.
//
// The checks cover the shape (unknown keys are refused in every object
// except the top level, metadata, modelSettings and context entries; extra
// top-level keys are kept and hashed, as aioc does), the entry agent, tool
// ids (declared under tools), handoff targets, placeholders and where
// gates. Every problem is reported, each prefixed by its location, for
// example:
//
//	agent "triage": tools[1]: unknown tool "x" (declare it under tools)
//
// Descriptor.Validate additionally checks tool targets against a Registry.
//
// # Templates
//
// Instruction text may contain {{context.PATH}} placeholders. Context paths
// (placeholders, where gates and context.references keys) are normalized
// as aioc does: split at dots, each segment trimmed, empty segments
// dropped, so "a..b" and " a . b " both name a.b; each remaining segment
// must be ASCII letters, digits, '_' and '-'. The descriptor and its hash
// keep the paths as written. PATH must be declared, exactly, under
// context.references: declaring "prompt" does not allow "prompt.label". A
// placeholder is what aioc reads as one: "{{", optional spaces, "context.",
// a path, optional spaces, "}}". One whose path is not a plain path (an
// expression, filter, default or call) is refused when the descriptor is
// loaded, even in parts that are gated off. Other text between double
// braces, such as {{input.message}}, stays literal text, as in aioc. A where gate, on an
// instruction part or on a handoff, must name a reference declared with
// type "boolean" (a bare true reference is refused, as aioc refuses it).
//
// # Hash
//
// Descriptor.Hash is "sha256:" followed by the 64 lowercase hex digits of
// the SHA-256 of the canonical JSON of the materialized descriptor: the
// whole document as written, except that instructions_file,
// instructions_files and instructions_sequence are replaced by the
// materialized instructions described above (a string, or a list of objects
// {"text": ..., "where": {"context": ...}} with "where" only when gated).
// Keys are kept as written, including null values and false references.
//
// The canonical JSON is the RFC 8785 (JCS) serialization of that value:
//
//   - no whitespace between tokens;
//   - object members sorted by key, comparing keys as sequences of UTF-16
//     code units (this is byte order except that characters above U+FFFF
//     sort before U+E000..U+FFFF);
//   - strings in double quotes with only these escapes: \" and \\, \b \f \n
//     \r \t for those controls, \u00xx (lowercase hex) for the other
//     characters below U+0020; every other character, non-ASCII included,
//     is written as raw UTF-8 (no HTML escaping, no \u for U+2028/U+2029);
//   - numbers are IEEE 754 doubles written as ECMAScript's
//     Number.prototype.toString does: the shortest digits that round-trip;
//     integers up to 1e21 without exponent or fraction (1.0 is "1", 1e20 is
//     "100000000000000000000"), fractions down to 1e-6 in plain notation
//     (0.000001), other magnitudes as d.ddde+N or d.ddde-N (1e21 is
//     "1e+21", 1e-7 is "1e-7"); -0 is "0"; NaN and infinities are refused;
//   - true, false and null as such.
//
// Two rules follow aioc's JSON.stringify rather than RFC 8785: keys that
// are array indexes ("0" to "4294967294" without leading zeros) come
// first, in numeric order, and a "__proto__" member is left out. NaN and
// infinities are written as null.
//
// YAML is read as aioc's js-yaml 4 (default schema) reads it, then reduced
// to the JSON data model: plain scalars resolve as null (~, null, empty),
// booleans (true/false only; yes and on stay strings), integers (0x, 0o,
// 0b, '_' separators, 017 is 17), floats (.inf, -.inf and .nan included)
// and timestamps, which become ISO-8601 UTC strings with milliseconds
// ("2026-05-19T10:00:00+02:00" is "2026-05-19T08:00:00.000Z"); numbers are
// doubles, so integers beyond 2^53 are rounded as in JavaScript; aliases
// and merge keys are expanded; scalar mapping keys become the strings
// JavaScript makes of them (1.0 becomes "1"). The same content therefore
// hashes the same whatever its key order and whether it is written in YAML
// or JSON, and the same as aioc 0.2.8 hashes it. MarshalCanonical exposes
// the encoding.
//
// # Context and instructions at run time
//
// NewContext builds a run context from the field defaults (dot paths build
// nested objects, empty segments skipped; a default that is exactly "{{input.message}}" or
// "{{runtime.now_iso}}" is replaced by the message or the current time) and
// merges application overrides. ResolveInstructions renders an agent's
// instructions against a context: gated parts are kept only when their
// path holds exactly true (a missing or non-boolean value is an error),
// missing required references are errors and missing optional ones render
// as "".
package descriptor
