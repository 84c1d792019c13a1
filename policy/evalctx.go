package policy

import (
	"encoding/json"
	"path"
	"sync"

	"github.com/ahp-go/ahp/effects"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// evalCtx is the state of one evaluation and the CEL activation every rule
// of that evaluation reads its variables from. Everything is computed on
// first use and cached, so ten rules reading payload.tool_name decode it
// once. Contexts are pooled.
type evalCtx struct {
	set     *Set
	in      Input
	payload ref.Val // decoded payload, nil until read
	context ref.Val // decoded event context, nil until read
	toolSet bool    // slots[slotTool] holds payload.tool_name
	slots   [numSlots]ref.Val
	// frame is the CEL execution frame every program of this evaluation
	// runs in, created on first use: one frame instead of one per rule.
	frame *interpreter.ExecutionFrame
	// arena holds the first JSON objects decoded for this evaluation.
	arena objArena
	// acts holds the effects of the event's action once read (effectsRead).
	acts        []effects.Effect
	actsBuf     []effects.Effect // kept across evaluations for acts (payloadEffectsInto)
	effectsRead bool
	mask        kindMask
	bits        []kindMask // the kind bit of each of acts, with mask
	maskRead    bool
	// byKind holds the numbers of acts by kind (kindBucket), those of
	// kind k in byKind[kindStart[k]:kindStart[k+1]]; kindScratch is
	// ofKinds' room.
	byKind      []int32
	kindStart   [numKindBuckets + 1]int32
	kindScratch []int32
	// byNeed holds the numbers of acts by the effectNeeds they meet
	// (indexNeeds); candScratch is candidates' room.
	byNeed, needStart, needNext, candScratch []int32
	// valBuf holds the lists of effects narrowed exists() fold over
	// (narrowed), each a part of it, for this evaluation only.
	valBuf []ref.Val
	// pathMemo holds what pathMet found of each effect for each pathNeed.
	pathMemo []uint8
	// facts are what the rules' needs read of each effect (readFacts);
	// wordBuf holds their word sets.
	facts     []effectFacts
	wordBuf   []uint64
	factsRead bool
	// sp is what the self_protection functions read of the event
	// (readAction), kept here so that its lists keep their room across
	// evaluations; spUsed says it holds this evaluation's reading.
	sp     spAction
	spUsed bool
	// maps are the payload maps lent to the effect analysis, kept across
	// evaluations (payloadEffectsInto).
	maps nativeMaps
}

var ctxPool = sync.Pool{New: func() any { return new(evalCtx) }}

// release clears the context and returns it to the pool.
func (c *evalCtx) release() {
	if c.frame != nil {
		c.frame.Close()
	}
	if o, ok := c.payload.(*jsonObject); ok {
		o.ev, o.sp = nil, nil
	}
	bits, facts, words, acts := c.bits[:0], c.facts[:0], c.wordBuf[:0], c.actsBuf[:0]
	byKind, scratch := c.byKind[:0], c.kindScratch[:0]
	byNeed, needStart, needNext, cand := c.byNeed[:0], c.needStart[:0], c.needNext[:0], c.candScratch[:0]
	memo := c.pathMemo[:0]
	clear(c.valBuf) // no effect of this evaluation stays reachable
	vals := c.valBuf[:0]
	if cap(vals) > maxKeptVals {
		vals = nil
	}
	paths, raw := c.sp.keep()
	maps := c.maps
	*c = evalCtx{}
	c.bits, c.facts, c.wordBuf, c.actsBuf = bits, facts, words, acts
	c.byKind, c.kindScratch = byKind, scratch
	c.byNeed, c.needStart, c.needNext, c.candScratch = byNeed, needStart, needNext, cand
	c.valBuf = vals
	c.pathMemo = memo
	c.sp.paths, c.sp.raw = paths, raw
	c.maps = maps
	ctxPool.Put(c)
}

// activation returns what CEL programs evaluate against: the shared frame,
// or the context itself if no frame could be made.
func (c *evalCtx) activation() any {
	if c.frame == nil {
		f, err := interpreter.NewExecutionFrame(c)
		if err != nil {
			return c
		}
		c.frame = f
	}
	return c.frame
}

// emptyMap is the value of absent maps (event.metadata, context).
var emptyMap = types.NewRefValMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{})

// ResolveName implements interpreter.Activation.
func (c *evalCtx) ResolveName(name string) (any, bool) {
	switch name {
	case "payload":
		return c.payloadVal(), true
	case "event":
		return structVal[eventKind]{c}, true
	case "session":
		return structVal[sessionKind]{c}, true
	case "principal":
		return structVal[principalKind]{c}, true
	case "context":
		return c.contextVal(), true
	case "config":
		return c.set.config, true
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (c *evalCtx) Parent() interpreter.Activation { return nil }

// payloadVal decodes the payload on first use.
func (c *evalCtx) payloadVal() ref.Val {
	if c.payload == nil {
		raw := c.in.Event.Payload
		if len(raw) == 0 {
			c.payload = types.NullValue
		} else {
			c.payload = decodeValue(string(raw), 0, &c.arena)
			if o, ok := c.payload.(*jsonObject); ok {
				o.ev = c
			}
		}
	}
	return c.payload
}

// toolName returns payload.tool_name, or "" when there is none.
func (c *evalCtx) toolName() string {
	s, _ := c.toolVal().(types.String)
	return string(s)
}

// toolVal returns payload.tool_name as the CEL value the payload already
// holds (no new allocation), or "".
func (c *evalCtx) toolVal() ref.Val {
	if !c.toolSet {
		c.toolSet = true
		c.slots[slotTool] = types.String("")
		if o, ok := c.payloadVal().(*jsonObject); ok {
			if v, found := o.lookup("tool_name"); found {
				if _, ok := v.(types.String); ok {
					c.slots[slotTool] = v
				}
			}
		}
	}
	return c.slots[slotTool]
}

// agentHome is the agent's home directory as the effects of this event are
// read with it: the configuration's, or else an absolute one the event's
// payload carries ("home", as the hook adapters send it), or else
// UnknownHome.
func (c *evalCtx) agentHome() string {
	if c.set != nil && c.set.agent.Home != "" {
		return c.set.agent.Home
	}
	if o, ok := c.payloadVal().(*jsonObject); ok {
		if v, found := o.lookup("home"); found {
			if h, ok := v.(types.String); ok && path.IsAbs(string(h)) && path.Clean(string(h)) != "/" {
				return path.Clean(string(h))
			}
		}
	}
	return UnknownHome
}

// contextVal decodes the event's context on first use.
func (c *evalCtx) contextVal() ref.Val {
	if c.context == nil {
		c.context = emptyMap
		if ctx := c.in.Event.Context; ctx != nil {
			if b, err := json.Marshal(ctx); err == nil {
				c.context = decodeValue(string(b), 0, &c.arena)
			} else {
				c.context = types.WrapErr(err)
			}
		}
	}
	return c.context
}

// field returns the value of a struct field slot, computing it once.
func (c *evalCtx) field(slot int) ref.Val {
	if v := c.slots[slot]; v != nil {
		return v
	}
	ev, in := c.in.Event, &c.in
	var v ref.Val
	switch slot {
	case slotEventType:
		v = types.String(ev.EventType)
	case slotSessionID:
		v = types.String(ev.SessionID)
	case slotAgentID:
		v = types.String(ev.AgentID)
	case slotTimestamp:
		v = types.String(ev.Timestamp)
	case slotDepth:
		v = types.Int(ev.Depth)
	case slotTool:
		v = c.toolVal()
	case slotCommand:
		v = shellCommandVal(c.payloadVal())
	case slotTransport:
		v = types.String(in.Transport)
	case slotMetadata:
		v = emptyMap
		if len(ev.Metadata) > 0 {
			if m, ok := decodeValue(string(ev.Metadata), 0, &c.arena).(*jsonObject); ok {
				v = m
			}
		}
	case slotPrincipalID:
		v = types.String(in.Principal.ID)
	case slotPrincipalRoles:
		v = types.NewStringList(types.DefaultTypeAdapter, in.Principal.Roles)
	case slotActions:
		v = types.Int(in.Session.Actions)
	case slotTokens:
		v = types.Int(in.Session.Tokens)
	case slotErrors:
		v = types.Int(in.Session.Errors)
	case slotRecentTools:
		v = types.NewStringList(types.DefaultTypeAdapter, in.Session.RecentTools)
	case slotRunStatus:
		v = types.String(in.Session.RunStatus)
	case slotEffects:
		v = effectList(c.effects())
	case slotHome:
		v = types.String(c.agentHome())
	default:
		v = types.NewErr("policy: unknown field slot %d", slot)
	}
	c.slots[slot] = v
	return v
}
