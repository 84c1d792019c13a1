package policy

import (
	"fmt"
	"math/bits"
	"path"
	"reflect"
	"slices"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/ahp-go/ahp/effects"
	"github.com/ahp-go/ahp/protocol"
)

// event.effects is the list of what the event's action does (package
// effects), read once per evaluation and shared by every rule. Each element
// is an ahp.Effect whose fields are typed, so a misspelt e.pth is an error
// when the policy is loaded.

// effectDef is the CEL struct type ahp.Effect.
var effectDef = func() *structDef {
	d := &structDef{typ: types.NewObjectType("ahp.Effect"), ftypes: map[string]*types.FieldType{}}
	str := func(name string, get func(*effects.Effect) string) {
		d.addField(name, types.StringType, func(e *effects.Effect) ref.Val { return types.String(get(e)) })
	}
	boolean := func(name string, get func(*effects.Effect) bool) {
		d.addField(name, types.BoolType, func(e *effects.Effect) ref.Val { return types.Bool(get(e)) })
	}
	list := func(name string, get func(*effects.Effect) []string) {
		d.addField(name, types.NewListType(types.StringType), func(e *effects.Effect) ref.Val {
			return types.NewStringList(types.DefaultTypeAdapter, get(e))
		})
	}
	// The kind, the field rules read most, is one of a few strings: each
	// is made a CEL value once, not at every read.
	kinds := make(map[effects.Kind]ref.Val, len(effectKinds))
	for _, k := range effectKinds {
		kinds[k] = types.String(k)
	}
	d.addField("kind", types.StringType, func(e *effects.Effect) ref.Val {
		if v, ok := kinds[e.Kind]; ok {
			return v
		}
		return types.String(e.Kind)
	})
	str("program", func(e *effects.Effect) string { return e.Program })
	list("argv", func(e *effects.Effect) []string { return e.Argv })
	str("path", func(e *effects.Effect) string { return e.Path })
	str("dest", func(e *effects.Effect) string { return e.Dest })
	boolean("recursive", func(e *effects.Effect) bool { return e.Recursive })
	boolean("append", func(e *effects.Effect) bool { return e.Append })
	str("mode", func(e *effects.Effect) string { return e.Mode() })
	str("host", func(e *effects.Effect) string { return e.Host() })
	str("port", func(e *effects.Effect) string { return e.Port() })
	str("url", func(e *effects.Effect) string { return e.URL() })
	str("source", func(e *effects.Effect) string { return e.Source() })
	str("into", func(e *effects.Effect) string { return e.Into() })
	list("targets", func(e *effects.Effect) []string { return e.Targets() })
	str("signal", func(e *effects.Effect) string { return e.Signal() })
	str("remote", func(e *effects.Effect) string { return e.Remote() })
	str("reason", func(e *effects.Effect) string { return e.Reason() })
	boolean("limit", func(e *effects.Effect) bool { return e.Limit })
	str("via", func(e *effects.Effect) string { return e.Via })
	return d
}()

// addField adds a field of ahp.Effect read by get.
func (d *structDef) addField(name string, typ *types.Type, get func(*effects.Effect) ref.Val) {
	d.names = append(d.names, name)
	d.ftypes[name] = &types.FieldType{
		Type: typ,
		IsSet: func(target any) bool {
			e := effectOf(target)
			return e != nil && isSet(get(e))
		},
		GetFrom: func(target any) (any, error) {
			e := effectOf(target)
			if e == nil {
				return nil, fmt.Errorf("policy: field %s read from %T", name, target)
			}
			return get(e), nil
		},
	}
}

// effectOf returns the effect a CEL field access reads from (the value
// itself or what its Value method returned), nil for anything else.
func effectOf(target any) *effects.Effect {
	switch v := target.(type) {
	case effectVal:
		return v.e
	case *effects.Effect:
		return v
	}
	return nil
}

func init() { structDefs[effectDef.typ.TypeName()] = effectDef }

// effectVal is the CEL value of one effect.
type effectVal struct{ e *effects.Effect }

// ConvertToNative implements ref.Val.
func (v effectVal) ConvertToNative(t reflect.Type) (any, error) {
	switch t {
	case reflect.TypeFor[any](), reflect.TypeFor[effects.Effect]():
		return *v.e, nil
	case reflect.TypeFor[*effects.Effect]():
		return v.e, nil
	}
	return nil, fmt.Errorf("policy: cannot convert ahp.Effect to %v", t)
}

// ConvertToType implements ref.Val.
func (v effectVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.TypeType:
		return effectDef.typ
	case effectDef.typ:
		return v
	}
	return types.NewErr("type conversion error from 'ahp.Effect' to '%s'", t)
}

// Equal implements ref.Val.
func (v effectVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(effectVal)
	return types.Bool(ok && reflect.DeepEqual(*o.e, *v.e))
}

// Type implements ref.Val.
func (v effectVal) Type() ref.Type { return effectDef.typ }

// Value implements ref.Val.
func (v effectVal) Value() any { return v.e }

// effectList makes the CEL list of ahp.Effect of a slice of effects once,
// its elements pointing into the slice, so that the rules that read it do
// not convert (and copy) an effect at every access.
func effectList(es []effects.Effect) ref.Val {
	vals := make([]ref.Val, len(es))
	for i := range es {
		vals[i] = effectVal{&es[i]}
	}
	return types.NewRefValList(effectAdapter{}, vals)
}

// effectAdapter turns the elements of an effect slice into effectVals.
type effectAdapter struct{}

// NativeToValue implements types.Adapter.
func (effectAdapter) NativeToValue(v any) ref.Val {
	switch e := v.(type) {
	case effects.Effect:
		return effectVal{&e}
	case *effects.Effect:
		return effectVal{e}
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// effects reads the effects of the event's action on first use: the
// payload of a pre_action (or of any event whose payload names a tool) as
// package effects reads it, with the set's agent context and the event's
// own working directory (payload "cwd").
func (c *evalCtx) effects() []effects.Effect {
	if !c.effectsRead {
		c.effectsRead = true
		c.acts = payloadEffectsInto(c.actsBuf, c.payloadVal(), c.set.agent, &c.maps)
		if cap(c.acts) <= maxKeptEffects {
			c.actsBuf = c.acts[:0]
		}
	}
	return c.acts
}

// kindMask returns the kinds of the action's effects, read once, and
// keeps each effect's kind bit for meetsAny.
func (c *evalCtx) kindMask() kindMask {
	if !c.maskRead {
		c.maskRead = true
		es := c.effects()
		c.bits = c.bits[:0]
		var start [numKindBuckets + 1]int32
		for i := range es {
			b, _ := kindBit(string(es[i].Kind))
			c.bits = append(c.bits, b)
			c.mask |= b
			start[kindBucket(b)+1]++
		}
		// The effects' numbers by kind (a counting sort, so each kind's
		// numbers stay in order): a need of a few kinds looks at their
		// effects only (ofKinds).
		for k := 1; k <= numKindBuckets; k++ {
			start[k] += start[k-1]
		}
		c.kindStart = start
		if cap(c.byKind) < len(es) {
			c.byKind = make([]int32, len(es))
		}
		c.byKind = c.byKind[:len(es)]
		for i, b := range c.bits {
			k := kindBucket(b)
			c.byKind[start[k]] = int32(i)
			start[k]++
		}
	}
	return c.mask
}

// numKindBuckets is the number of effect kinds, plus one for an effect of
// a kind no rule names.
const numKindBuckets = 33

// kindBucket is where an effect of kind bit b is kept in byKind.
func kindBucket(b kindMask) int {
	if b == 0 {
		return numKindBuckets - 1
	}
	return bits.TrailingZeros32(uint32(b))
}

// ofKinds returns the numbers of the action's effects of the kinds of
// mask (not 0), in order; the slice is only good until the next call.
func (c *evalCtx) ofKinds(mask kindMask) []int32 {
	c.kindMask()
	var out []int32
	n := 0
	for m := uint32(mask); m != 0; m &= m - 1 {
		k := bits.TrailingZeros32(m)
		part := c.byKind[c.kindStart[k]:c.kindStart[k+1]]
		if len(part) == 0 {
			continue
		}
		n++
		if n == 1 {
			out = part
			continue
		}
		if n == 2 {
			out = append(c.kindScratch[:0], out...)
		}
		out = append(out, part...)
	}
	if n > 1 {
		slices.Sort(out)
		c.kindScratch = out
	}
	return out
}

// payloadEffects converts a decoded payload to plain Go values and reads
// its effects. A payload that is not an object has none; one that cannot be
// converted (too deep) is one Unknown effect.
func payloadEffects(payload ref.Val, agent effects.Context) []effects.Effect {
	return payloadEffectsInto(nil, payload, agent, nil)
}

// maxKeptEffects bounds the effect buffer a pooled evaluation context keeps
// for the next evaluation.
const maxKeptEffects = 256

// maxKeptVals bounds the room for narrowed lists (valBuf) a pooled
// evaluation context keeps for the next evaluation.
const maxKeptVals = 4096

// payloadEffectsInto is payloadEffects reusing buf's array (see
// effects.PayloadInto) and the maps of maps (nil: new maps). The effects
// package keeps nothing of the payload it is given but strings (an Effect
// holds no map), so the maps are taken back when it returns.
func payloadEffectsInto(buf []effects.Effect, payload ref.Val, agent effects.Context, maps *nativeMaps) []effects.Effect {
	obj, ok := payload.(*jsonObject)
	if !ok {
		return nil
	}
	defer maps.recycle()
	native, err := toNativeIn(obj, 0, maps)
	if err != nil {
		return []effects.Effect{{Kind: effects.Unknown, Limit: true, Detail: &effects.Detail{Reason: "payload: " + err.Error()}}}
	}
	m, _ := native.(map[string]any)
	if cwd, ok := m["cwd"].(string); ok && cwd != "" {
		agent.Cwd = cwd
	}
	// The agent's home and user name, as hook adapters send them, when the
	// harness's configuration gives none: "~" is then what the agent's
	// shell makes of it. A home that is not an absolute path is ignored.
	if home, ok := m["home"].(string); ok && agent.Home == "" && path.IsAbs(home) && path.Clean(home) != "/" {
		agent.Home = path.Clean(home)
		if user, ok := m["user"].(string); ok && agent.User == "" && user != "" && !strings.ContainsAny(user, "/ \t\n") {
			agent.User = user
		}
	}
	if agent.Home == "" {
		// Neither the configuration nor the event names the home: "~" is
		// still a home (UnknownHome), never a name the rules cannot place.
		agent.Home = UnknownHome
	}
	if fs, ok := agent.FS.(*effects.OSFS); ok && agent.Cwd != "" {
		agent.FS = fs.Within(agent.Cwd)
	}
	return effects.PayloadInto(buf, m, agent)
}

// Effects returns the effects of an event's action as the rules of s read
// them (event.effects): what `ahp explain` prints and what an approver is
// shown.
func (s *Set) Effects(ev *protocol.Event) []effects.Effect {
	if ev == nil || len(ev.Payload) == 0 {
		return nil
	}
	var arena objArena
	return payloadEffects(decodeValue(string(ev.Payload), 0, &arena), s.agent)
}
