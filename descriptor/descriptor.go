package descriptor

import (
	"maps"
	"slices"
)

// DescriptorVersion is the only descriptor_version this package accepts. A
// descriptor may also leave descriptor_version out.
const DescriptorVersion = "aioc.agent_graph.v0"

// Descriptor is a loaded, materialized and checked agent harness descriptor.
// It is immutable: every accessor returns copies, and a Descriptor may be
// shared by any number of goroutines.
type Descriptor struct {
	source      string
	version     string
	metadata    map[string]any
	name        string
	metaVersion string
	entry       string
	maxTurns    int
	fields      []Field
	refs        map[string]Reference
	refList     []Reference
	tools       map[string]string
	catalog     map[string]string
	defaults    agentDefaults
	agents      map[string]*Agent
	agentIDs    []string
	declared    map[string]bool // every key under agents, valid or not (for checks)
	canon       []byte
	hash        string
}

// agentDefaults holds agent_defaults.
type agentDefaults struct {
	model    string
	settings map[string]any
	instr    *instructions
}

// Agent is one agent of a descriptor, with agent_defaults already applied:
// Model, ModelSettings and Instructions fall back to the defaults when the
// agent does not set them.
type Agent struct {
	id                 string
	name               string
	handoffDescription string
	model              string
	modelSettings      map[string]any
	tools              []string
	handoffs           []Handoff
	instr              *instructions
	ownInstr           bool
}

// Part is one block of an agent's materialized instructions. Text may hold
// {{context.PATH}} placeholders, rendered at resolution time. When Where is
// not empty, the block is included only if the run context holds exactly
// the boolean true at that path (normalized: segments trimmed, empty
// segments dropped; the descriptor and its hash keep the path as written).
type Part struct {
	Text  string
	Where string
}

// Field is a declared context field (context.fields). Only fields with a
// default contribute to NewContext; the others are information for the
// host application.
type Field struct {
	// Path is the field's key as written. NewContext splits it at dots and
	// skips empty segments ("a..b" places the default at a.b).
	Path string
	// Type is the declared type, a free-form string such as "string".
	Type string
	// Default is the default value (JSON data model) when HasDefault.
	Default any
	// HasDefault reports whether the field declares a default, even null.
	HasDefault bool
	// Optional, Mutable and Redact are the declared flags. Redact is
	// metadata only: this package does not redact anything.
	Optional, Mutable, Redact bool
}

// Reference is a context path that instruction templates may read
// (context.references). Paths are exact: a reference to "a" does not allow
// "a.b".
type Reference struct {
	// Path is the dot path in the run context, normalized: the key as
	// written, split at dots, segments trimmed and empty ones dropped.
	Path string
	// Type is the declared type, if any; where gates need "boolean".
	Type string
	// Optional references render as an empty string when missing; required
	// ones make resolution fail.
	Optional bool
}

// Metadata identifies the descriptor a run used, in a form meant to be
// attached to run or audit records.
type Metadata struct {
	Name              string `json:"name,omitempty"`
	Version           string `json:"version,omitempty"`
	DescriptorVersion string `json:"descriptor_version,omitempty"`
	DescriptorHash    string `json:"descriptor_hash"`
}

// Source is the path the descriptor was loaded from, or the empty string
// for data given to Parse.
func (d *Descriptor) Source() string { return d.source }

// DescriptorVersion is the descriptor_version field, or "" when absent.
func (d *Descriptor) DescriptorVersion() string { return d.version }

// Name is metadata.name, or "".
func (d *Descriptor) Name() string { return d.name }

// Version is metadata.version, or "".
func (d *Descriptor) Version() string { return d.metaVersion }

// Metadata returns the identity of the descriptor for run records.
func (d *Descriptor) Metadata() Metadata {
	return Metadata{
		Name:              d.name,
		Version:           d.metaVersion,
		DescriptorVersion: d.version,
		DescriptorHash:    d.hash,
	}
}

// RawMetadata returns a copy of the whole metadata object (nil when the
// descriptor has none), including keys other than name and version.
func (d *Descriptor) RawMetadata() map[string]any {
	if d.metadata == nil {
		return nil
	}
	return cloneValue(d.metadata).(map[string]any)
}

// EntryAgent is runtime.entry_agent, the id of the agent a run starts with.
func (d *Descriptor) EntryAgent() string { return d.entry }

// MaxTurns is runtime.max_turns, or 0 when the descriptor sets no limit.
func (d *Descriptor) MaxTurns() int { return d.maxTurns }

// AgentIDs returns the ids of all agents, sorted.
func (d *Descriptor) AgentIDs() []string { return slices.Clone(d.agentIDs) }

// Agent returns the agent with the given id.
func (d *Descriptor) Agent(id string) (*Agent, bool) {
	a, ok := d.agents[id]
	return a, ok
}

// ToolIDs returns the logical tool ids declared under tools, sorted.
func (d *Descriptor) ToolIDs() []string { return slices.Sorted(maps.Keys(d.tools)) }

// ToolTarget returns the registry target a logical tool id is bound to.
func (d *Descriptor) ToolTarget(id string) (string, bool) {
	t, ok := d.tools[id]
	return t, ok
}

// ContextFields returns the declared context fields, sorted by path.
func (d *Descriptor) ContextFields() []Field {
	out := make([]Field, len(d.fields))
	for i, f := range d.fields {
		f.Default = cloneValue(f.Default)
		out[i] = f
	}
	return out
}

// ContextReferences returns the context paths instructions may read,
// sorted by path. References declared as false are not included.
func (d *Descriptor) ContextReferences() []Reference { return slices.Clone(d.refList) }

// InstructionPart returns an entry of the instruction_parts catalog.
func (d *Descriptor) InstructionPart(name string) (string, bool) {
	t, ok := d.catalog[name]
	return t, ok
}

// Hash is "sha256:" followed by the lowercase hex SHA-256 of the canonical
// JSON of the materialized descriptor (see the package documentation).
func (d *Descriptor) Hash() string { return d.hash }

// CanonicalJSON returns the canonical JSON of the materialized descriptor,
// the exact bytes Hash is computed over.
func (d *Descriptor) CanonicalJSON() []byte { return slices.Clone(d.canon) }

// MarshalJSON encodes the materialized descriptor as canonical JSON.
func (d *Descriptor) MarshalJSON() ([]byte, error) { return d.CanonicalJSON(), nil }

// ID is the agent's key under agents; handoffs and entry_agent use it.
func (a *Agent) ID() string { return a.id }

// Name is the agent's display name; it defaults to the id.
func (a *Agent) Name() string { return a.name }

// HandoffDescription is the agent's handoffDescription, or "".
func (a *Agent) HandoffDescription() string { return a.handoffDescription }

// Model is the agent's model, or the default model, or "".
func (a *Agent) Model() string { return a.model }

// ModelSettings returns a copy of the agent's modelSettings, or of the
// default ones when the agent sets none (the two are not merged), or nil.
func (a *Agent) ModelSettings() map[string]any {
	if a.modelSettings == nil {
		return nil
	}
	return cloneValue(a.modelSettings).(map[string]any)
}

// Tools returns the logical tool ids the agent may call, in descriptor
// order.
func (a *Agent) Tools() []string { return slices.Clone(a.tools) }

// Handoffs returns the ids of the agents this agent may hand off to, in
// descriptor order, gated or not (see HandoffRules for the gates).
func (a *Agent) Handoffs() []string {
	ids := make([]string, len(a.handoffs))
	for i, h := range a.handoffs {
		ids[i] = h.Agent
	}
	return ids
}

// HasTool reports whether the agent declares the logical tool id.
func (a *Agent) HasTool(id string) bool { return slices.Contains(a.tools, id) }

// CanHandoffTo reports whether the agent declares a handoff to agent id,
// gated or not. Descriptor.HandoffAllowed also evaluates the gate.
func (a *Agent) CanHandoffTo(id string) bool {
	return slices.ContainsFunc(a.handoffs, func(h Handoff) bool { return h.Agent == id })
}

// HasInstructions reports whether the agent has instructions, its own or
// inherited from agent_defaults.
func (a *Agent) HasInstructions() bool { return a.instr != nil }

// InheritsInstructions reports whether the agent's instructions come from
// agent_defaults.
func (a *Agent) InheritsInstructions() bool { return a.instr != nil && !a.ownInstr }

// Instructions returns the agent's materialized instruction parts, before
// placeholder rendering and where gates, or nil when it has none. Plain
// string instructions are a single part without a gate.
func (a *Agent) Instructions() []Part {
	if a.instr == nil {
		return nil
	}
	out := make([]Part, len(a.instr.parts))
	for i, p := range a.instr.parts {
		out[i] = Part{Text: p.text, Where: p.gate}
	}
	return out
}
