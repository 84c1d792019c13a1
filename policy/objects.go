package policy

import (
	"fmt"
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// The typed CEL variables event, principal and session are struct types of
// their own (ahp.Event, ahp.Principal, ahp.Session), so that a misspelt
// field such as session.actons is a type error when a policy is loaded, not
// a runtime error. Their values read from the evaluation context and cache
// each field for the rest of the evaluation.

// Field slots of the evaluation context, one per struct field.
const (
	slotEventType = iota
	slotSessionID
	slotAgentID
	slotTimestamp
	slotDepth
	slotTool
	slotCommand
	slotTransport
	slotMetadata
	slotPrincipalID
	slotPrincipalRoles
	slotActions
	slotTokens
	slotErrors
	slotRecentTools
	slotRunStatus
	slotEffects
	slotHome
	numSlots
)

// structField describes one field of a struct type.
type structField struct {
	name string
	typ  *types.Type
	slot int
}

// structDef describes one struct type exposed to CEL.
type structDef struct {
	typ    *types.Type
	fields []structField
	ftypes map[string]*types.FieldType
	names  []string
}

var (
	eventDef = newStructDef[eventKind]("ahp.Event", []structField{
		{"event_type", types.StringType, slotEventType},
		{"session_id", types.StringType, slotSessionID},
		{"agent_id", types.StringType, slotAgentID},
		{"timestamp", types.StringType, slotTimestamp},
		{"depth", types.IntType, slotDepth},
		{"tool", types.StringType, slotTool},
		{"command", types.StringType, slotCommand},
		{"transport", types.StringType, slotTransport},
		{"metadata", types.NewMapType(types.StringType, types.DynType), slotMetadata},
		{"effects", types.NewListType(types.NewObjectType("ahp.Effect")), slotEffects},
		{"home", types.StringType, slotHome},
	})
	principalDef = newStructDef[principalKind]("ahp.Principal", []structField{
		{"id", types.StringType, slotPrincipalID},
		{"roles", types.NewListType(types.StringType), slotPrincipalRoles},
	})
	sessionDef = newStructDef[sessionKind]("ahp.Session", []structField{
		{"actions", types.IntType, slotActions},
		{"tokens", types.IntType, slotTokens},
		{"errors", types.IntType, slotErrors},
		{"recent_tools", types.NewListType(types.StringType), slotRecentTools},
		{"run_status", types.StringType, slotRunStatus},
	})
	structDefs = map[string]*structDef{
		eventDef.typ.TypeName():     eventDef,
		principalDef.typ.TypeName(): principalDef,
		sessionDef.typ.TypeName():   sessionDef,
	}
)

// structKind ties a Go value type to its structDef.
type structKind interface {
	def() *structDef
}

type (
	eventKind     struct{}
	principalKind struct{}
	sessionKind   struct{}
)

func (eventKind) def() *structDef     { return eventDef }
func (principalKind) def() *structDef { return principalDef }
func (sessionKind) def() *structDef   { return sessionDef }

func newStructDef[K structKind](name string, fields []structField) *structDef {
	d := &structDef{typ: types.NewObjectType(name), fields: fields, ftypes: map[string]*types.FieldType{}}
	for _, f := range fields {
		slot := f.slot
		d.names = append(d.names, f.name)
		d.ftypes[f.name] = &types.FieldType{
			Type: f.typ,
			IsSet: func(target any) bool {
				v, ok := target.(structVal[K])
				return ok && isSet(v.c.field(slot))
			},
			GetFrom: func(target any) (any, error) {
				v, ok := target.(structVal[K])
				if !ok {
					return nil, fmt.Errorf("policy: field %s read from %T", name, target)
				}
				return v.c.field(slot), nil
			},
		}
	}
	return d
}

// isSet gives fields proto3-style presence: a field is set when it is not
// the zero value of its type.
func isSet(v ref.Val) bool {
	switch x := v.(type) {
	case types.String:
		return x != ""
	case types.Int:
		return x != 0
	}
	if s, ok := v.(interface{ Size() ref.Val }); ok {
		return s.Size() != types.Int(0)
	}
	return v != nil
}

// structVal is the CEL value of event, principal or session. It holds only
// a pointer, so converting it to an interface does not allocate.
type structVal[K structKind] struct{ c *evalCtx }

func (v structVal[K]) def() *structDef { var k K; return k.def() }

// ConvertToNative implements ref.Val.
func (v structVal[K]) ConvertToNative(t reflect.Type) (any, error) {
	if t == reflect.TypeFor[any]() || t == reflect.TypeFor[map[string]any]() {
		return v.asMap(0)
	}
	return nil, fmt.Errorf("policy: cannot convert %s to %v", v.def().typ.TypeName(), t)
}

// asMap returns the fields as a plain map.
func (v structVal[K]) asMap(depth int) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range v.def().fields {
		n, err := toNative(v.c.field(f.slot), depth+1)
		if err != nil {
			return nil, err
		}
		out[f.name] = n
	}
	return out, nil
}

// structValue is implemented by every structVal.
type structValue interface {
	asMap(depth int) (map[string]any, error)
}

// ConvertToType implements ref.Val.
func (v structVal[K]) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.TypeType:
		return v.def().typ
	case v.def().typ:
		return v
	}
	return types.NewErr("type conversion error from '%s' to '%s'", v.def().typ.TypeName(), t)
}

// Equal implements ref.Val: two values are equal when they describe the same
// evaluation.
func (v structVal[K]) Equal(other ref.Val) ref.Val {
	o, ok := other.(structVal[K])
	return types.Bool(ok && o.c == v.c)
}

// Type implements ref.Val.
func (v structVal[K]) Type() ref.Type { return v.def().typ }

// Value implements ref.Val.
func (v structVal[K]) Value() any { return v }

// provider adds the ahp.* struct types to the environment's type provider.
type provider struct {
	types.Provider
}

// FindStructType implements types.Provider.
func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if d, ok := structDefs[name]; ok {
		return types.NewTypeTypeWithParam(d.typ), true
	}
	return p.Provider.FindStructType(name)
}

// FindStructFieldNames implements types.Provider.
func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if d, ok := structDefs[name]; ok {
		return d.names, true
	}
	return p.Provider.FindStructFieldNames(name)
}

// FindStructFieldType implements types.Provider.
func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if d, ok := structDefs[name]; ok {
		ft, found := d.ftypes[field]
		return ft, found
	}
	return p.Provider.FindStructFieldType(name, field)
}

// NewValue implements types.Provider. The ahp.* types are read-only.
func (p *provider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := structDefs[name]; ok {
		return types.NewErr("%s values cannot be constructed in a policy", name)
	}
	return p.Provider.NewValue(name, fields)
}
