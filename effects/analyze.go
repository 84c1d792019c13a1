package effects

import (
	"fmt"
	"unsafe"
)

// Shell returns the effects of a shell script (bash syntax) run in ctx.
func Shell(script string, ctx Context) (out []Effect) {
	s := newState(ctx)
	defer func() { out = s.finish() }()
	defer s.recoverFailure()
	defer s.autorunUnread()
	s.shell(script)
	return s.out
}

// Code returns the effects of code in an interpreter's language ("python",
// "node", "perl", "ruby", "php", "sh") run in ctx.
func Code(lang, code string, ctx Context) (out []Effect) {
	s := newState(ctx)
	defer func() { out = s.finish() }()
	defer s.recoverFailure()
	defer s.autorunUnread()
	s.code(lang, code)
	return s.out
}

// recoverFailure turns a failure of a reader (a bug) into a limit Unknown:
// the action is one the analysis could not read, which the policy blocks,
// and the harness goes on serving.
func (s *state) recoverFailure() {
	if p := recover(); p != nil {
		s.full = false
		s.out = append(s.out, Effect{Kind: Unknown, Limit: true, Detail: &Detail{Reason: "the analysis failed on this input (a reader's fault); it is not read"}})
	}
}

// Payload returns the effects of a tool call: payload is a decoded
// pre_action payload ({"tool_name": ..., "arguments": {...}} and the shapes
// the hooks of Claude Code, Codex and Gemini CLI send). A payload whose tool
// is not one the analysis knows yields no effects.
func Payload(payload map[string]any, ctx Context) (out []Effect) {
	return PayloadInto(nil, payload, ctx)
}

// PayloadInto is Payload writing the effects into buf's array (from its
// start) when they fit, so that a caller reading one payload after another
// can reuse one buffer: the result shares buf's array, and buf must not be
// used for anything else while the result is.
func PayloadInto(buf []Effect, payload map[string]any, ctx Context) (out []Effect) {
	s := newState(ctx)
	s.out = buf[:0]
	defer func() { out = s.finish() }()
	defer s.recoverFailure()
	defer s.autorunUnread()
	s.payload(payload)
	return s.out
}

// finish ends the analysis and returns its effects, giving the arena's
// own chunks back to arenaPool. (The effects are left in the array they
// were gathered in: copying them out, exactly sized, into an array of their
// own would let that array be reused, but the copy and the clearing cost
// more than the collector's share of a fresh one.)
func (s *state) finish() []Effect {
	if a := s.mem; a != nil {
		s.mem = nil
		a.release()
	}
	return s.out
}

// state is one analysis in progress: the context, how deep nested code is,
// how many decode rounds were spent, and the effects found so far.
type state struct {
	ctx     Context
	depth   int
	decodes int
	via     string
	out     []Effect
	full    bool
	steps   int    // statements and commands read so far (the shell reader's work budget)
	mem     *arena // nil until a long script is read
	// onDisk counts the script files read from disk being read now (a
	// script the harness reads where it lies, not code in the action).
	onDisk int
	// autorunSeen holds the files developer tools run by themselves
	// whose content a reader read (autorun.go); texts the literal text
	// the action wrote to each file, for a copy of it.
	autorunSeen map[string]bool
	texts       map[string]string
	// dotglob is set once the script turned bash's dotglob on (shopt -s
	// dotglob, GLOBIGNORE): a glob's * and ? also match names with a
	// leading dot.
	dotglob bool
	// pyArgv is the arguments of the interpreter code being read (Python's
	// sys.argv; Perl's and Ruby's ARGV after its first element), when the
	// command line that runs it is known (python3 -c CODE ARG..., perl
	// x.pl ARG...); an element not known is argvUnknown.
	pyArgv    []string
	pyArgvSet bool
	// lowerMaps remembers, for the payload maps looked at so far, whether
	// every key is ASCII without a capital letter (fields).
	lowerMaps []lowerMap
	lowerBuf  [4]lowerMap
}

// lowerMap is one entry of state.lowerMaps.
type lowerMap struct {
	m     unsafe.Pointer
	lower bool
}

func newState(ctx Context) *state {
	s := &state{ctx: ctx, via: ""}
	s.lowerMaps = s.lowerBuf[:0]
	return s
}

// add records an effect (with the current reader chain in Via when the
// effect has none). Past MaxEffects it records one limit Unknown and drops
// the rest.
func (s *state) add(e Effect) {
	if s.full {
		return
	}
	if len(s.out) >= MaxEffects-1 {
		s.full = true
		s.out = append(s.out, Effect{Kind: Unknown, Limit: true, Via: s.via,
			Detail: &Detail{Reason: fmt.Sprintf("more than %d effects", MaxEffects-1)}})
		return
	}
	if e.Via == "" {
		e.Via = s.via
	}
	if e.Detail != nil && e.Detail.isZero() {
		e.Detail = nil // one nil for "no detail", whatever the literal said
	}
	s.out = append(s.out, e)
	s.lostRead(&e)
}

// unknown records what could not be read and why; limit marks a limit of
// the analysis.
func (s *state) unknown(limit bool, format string, args ...any) {
	s.add(Effect{Kind: Unknown, Limit: limit, Detail: &Detail{Reason: fmt.Sprintf(format, args...)}})
}

// opaque records code that runs but cannot be read: an Unknown whose Into
// names what runs it (an interpreter, "sh", or "program" for a program
// named only at run time) and whose Program names the program whose
// output is the code, when there is one ("ssh-agent" in eval "$(ssh-agent
// -s)", "base64" in ... | base64 -d | sh). Rules tell obfuscation from
// set-up scripts by those two fields.
func (s *state) opaque(into, from string, format string, args ...any) {
	s.add(Effect{Kind: Unknown, Detail: &Detail{Into: into, Reason: fmt.Sprintf(format, args...)}, Program: from})
}

// runsHidden records a command or program that runs while none of it is
// known before run time (os.system(input()), system($ARGV[0]),
// subprocess.run([sys.argv[1], ...])): code that runs unread, an opaque
// Unknown into into, as "$CMD" and eval "$X" are in the shell. In a script
// read from disk, whose functions may be called with values not known
// before run time (def run(cmd): subprocess.run(cmd, shell=True) called
// with sys.argv's words, or never called where the reader sees it),
// it is a plain Unknown, recorded, as a script the harness cannot see is.
func (s *state) runsHidden(into, format string, args ...any) {
	if s.onDisk > 0 {
		s.unknown(false, format, args...)
		return
	}
	s.opaque(into, "", format, args...)
}

// nested runs read one level deeper under reader name via (a shell inside
// python, a script given to sh -c, ...). Past MaxDepth it records a limit
// Unknown instead of reading.
func (s *state) nested(via string, read func()) {
	if s.depth >= MaxDepth {
		s.unknown(true, "code nested more than %d levels deep", MaxDepth)
		return
	}
	prevVia := s.via
	s.depth++
	if prevVia == "" {
		s.via = via
	} else {
		s.via = prevVia + ">" + via
	}
	read()
	s.via = prevVia
	s.depth--
}
