// Package effects says what an action does. From an event's payload (a shell
// command, interpreter code, a file or web tool call) and what is known of
// the agent (its working directory, home and user), it reads a list of
// effects: programs run, paths read, written or deleted, network
// connections, data sent, processes signalled, privileges changed, and what
// could not be read (Unknown, with why). It knows no policy and no CEL: the
// policy package exposes its result to rules, so that every rule reads one
// reading of every action.
package effects

// Kind names what an effect does.
type Kind string

// The effect kinds. docs/effects.md describes each and what sets it.
const (
	// Run: a program is started (Program is its resolved base name, Argv
	// its words after quote removal, Path the full path when one was given).
	Run Kind = "run"
	// Read: the content of Path is read (Recursive for a directory tree).
	Read Kind = "read"
	// Write: Path is written (created, truncated or, with Append, appended).
	Write Kind = "write"
	// Create: Path is created without content (a directory, an empty file,
	// a link: Dest is then what the link points to).
	Create Kind = "create"
	// Delete: Path is removed (Recursive for a tree).
	Delete Kind = "delete"
	// Move: Path is moved or renamed to Dest.
	Move Kind = "move"
	// Chmod: the mode of Path changes to Mode (Recursive for a tree).
	Chmod Kind = "chmod"
	// Chown: the owner or group of Path changes to Mode (Recursive for a tree).
	Chown Kind = "chown"
	// Connect: a network connection to Host:Port (or URL) is opened.
	Connect Kind = "connect"
	// Listen: a network port is listened on (Host may be empty for all).
	Listen Kind = "listen"
	// Send: local data (Source: a path, or "stdin", "output" for a
	// command's output, "data" for literal text) goes to a network
	// destination (Host, Port, URL).
	Send Kind = "send"
	// Download: data from a network source (URL, Host) is written to Path
	// or, with Into set, fed to an interpreter ("sh", "python", ...).
	Download Kind = "download"
	// Signal: a signal (Signal, e.g. "TERM", "KILL") is sent to processes
	// named by Targets (pids, names, patterns, "-1" for every process).
	Signal Kind = "signal"
	// Privilege: privileges change (Program says how: sudo, su, setuid
	// bits, capabilities, a new user).
	Privilege Kind = "privilege"
	// Unknown: part of the action could not be read; Reason says why and
	// Limit is true when a limit of the analysis (size, depth, decode
	// rounds) was reached rather than the code being unreadable.
	Unknown Kind = "unknown"
)

// Effect is one thing an action does. Only the fields that matter for its
// Kind are set; paths are absolute and cleaned when the working directory
// is known, and left relative (never resolved against the harness's own
// working directory) when it is not.
//
// The fields most effects leave empty (the mode, the network endpoint,
// the source of a send, the signal, the reason of an Unknown, ...) are in
// Detail, which is nil when all of them are: an analysis of a long script
// holds thousands of effects, and most are a run or a file. Read them
// through the methods of the same names (e.Host(), e.Targets()), which
// return the zero value when Detail is nil; set them through Detail. In
// JSON the effect is flat, with the fields in the order of their
// declaration, as if Detail's fields were Effect's own.
type Effect struct {
	Kind Kind `json:"kind"`
	// Program is the program (or interpreter, or tool) that has the
	// effect, as a base name: "rm", "python3", "Write".
	Program string `json:"program,omitempty"`
	// Argv is the whole command line of a Run, after quote removal.
	Argv []string `json:"argv,omitempty"`
	// Path is the file the effect is on (for Run, the program's path when
	// it was given with one).
	Path string `json:"path,omitempty"`
	// Dest is where a Move goes, or what a link created points to.
	Dest string `json:"dest,omitempty"`
	// Recursive marks an effect on a whole tree.
	Recursive bool `json:"recursive,omitempty"`
	// Append marks a Write that appends.
	Append bool `json:"append,omitempty"`
	// Detail holds the fields that only some kinds set; nil when none is.
	*Detail
	// Limit marks an Unknown caused by a limit of the analysis.
	Limit bool `json:"limit,omitempty"`
	// Via says which reader found the effect: "shell", "python", "node",
	// "tool", and for nested code the chain ("shell>python").
	Via string `json:"via,omitempty"`
}

// Detail is the part of an Effect that only some kinds set.
type Detail struct {
	// Mode is the new mode of a Chmod or the new owner of a Chown.
	Mode string `json:"mode,omitempty"`
	// Host, Port and URL name a network endpoint.
	Host string `json:"host,omitempty"`
	Port string `json:"port,omitempty"`
	URL  string `json:"url,omitempty"`
	// Source is what a Send sends: a path, "stdin", "output" or "data".
	Source string `json:"source,omitempty"`
	// Into is the interpreter a Download is fed to ("" when it is written
	// to Path).
	Into string `json:"into,omitempty"`
	// Targets are the processes a Signal goes to.
	Targets []string `json:"targets,omitempty"`
	// Signal is the signal sent ("TERM" when none is named).
	Signal string `json:"signal,omitempty"`
	// Remote is the host an effect happens on when it is not this one
	// (a command given to ssh).
	Remote string `json:"remote,omitempty"`
	// Reason says why an Unknown could not be read.
	Reason string `json:"reason,omitempty"`
}

// isZero reports whether no field of d is set.
func (d *Detail) isZero() bool {
	return d.Mode == "" && d.Host == "" && d.Port == "" && d.URL == "" && d.Source == "" && d.Into == "" &&
		len(d.Targets) == 0 && d.Signal == "" && d.Remote == "" && d.Reason == ""
}

// detail returns e's Detail, giving e one first when it has none.
func (e *Effect) detail() *Detail {
	if e.Detail == nil {
		e.Detail = &Detail{}
	}
	return e.Detail
}

// ownDetail gives e a Detail of its own (a copy of the one it shares, if
// any) and returns it: for changing an effect already in a list, whose
// Detail another effect may point to.
func (e *Effect) ownDetail() *Detail {
	d := &Detail{}
	if e.Detail != nil {
		*d = *e.Detail
	}
	e.Detail = d
	return d
}

// Mode returns Detail.Mode ("" without Detail).
func (e *Effect) Mode() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Mode
}

// Host returns Detail.Host ("" without Detail).
func (e *Effect) Host() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Host
}

// Port returns Detail.Port ("" without Detail).
func (e *Effect) Port() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Port
}

// URL returns Detail.URL ("" without Detail).
func (e *Effect) URL() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.URL
}

// Source returns Detail.Source ("" without Detail).
func (e *Effect) Source() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Source
}

// Into returns Detail.Into ("" without Detail).
func (e *Effect) Into() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Into
}

// Targets returns Detail.Targets (nil without Detail).
func (e *Effect) Targets() []string {
	if e.Detail == nil {
		return nil
	}
	return e.Detail.Targets
}

// Signal returns Detail.Signal ("" without Detail).
func (e *Effect) Signal() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Signal
}

// Remote returns Detail.Remote ("" without Detail).
func (e *Effect) Remote() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Remote
}

// Reason returns Detail.Reason ("" without Detail).
func (e *Effect) Reason() string {
	if e.Detail == nil {
		return ""
	}
	return e.Detail.Reason
}

// Context is what is known of the agent that acts.
type Context struct {
	// Cwd is the agent's working directory (hooks carry it as "cwd");
	// empty when unknown.
	Cwd string
	// Home is the agent user's home directory, for "~" and $HOME; empty
	// when unknown (then "~" paths stay as written).
	Home string
	// User is the agent's user name, for "~user" of itself; optional.
	User string
	// FS, when set, lets the analysis resolve globs and links and read
	// scripts run by their path where the harness can see them. Nil means
	// no file system: globs stay patterns.
	FS FS
}

// FS is the view of the file system the analysis may use. Every method
// must be safe for concurrent use.
type FS interface {
	// Glob returns the paths matching an absolute pattern (as
	// path/filepath.Glob), at most limit of them.
	Glob(pattern string, limit int) ([]string, error)
	// EvalSymlinks returns path with every link resolved (as
	// path/filepath.EvalSymlinks).
	EvalSymlinks(path string) (string, error)
	// ReadFile returns at most limit bytes of a file, and whether it was
	// longer.
	ReadFile(path string, limit int) (data []byte, truncated bool, err error)
}

// SourceEnvironment is the Source of a Send whose data comes from the
// process environment as a whole (Python's dict(os.environ),
// os.environ.copy()), where tokens and keys live; it names no file.
const SourceEnvironment = "(environment)"

// ShellSyntaxError begins the reason of the Unknown a shell command the
// parser does not accept gives (the parser's message follows). Nothing
// else is read from that script: bash runs the statements before the
// error, so a policy must not judge the action by what is left.
const ShellSyntaxError = "shell syntax not understood"

// Limits of the analysis. Reaching one yields an Unknown effect with Limit
// set, never silence; docs/effects.md lists them.
const (
	// MaxInput is the longest command or code text read (bytes).
	MaxInput = 256 << 10
	// MaxDepth is how deeply nested code is read again (sh -c inside
	// eval inside python -c ...).
	MaxDepth = 8
	// MaxDecodeRounds is how many encoded payloads (base64, hex, printf
	// escapes) are decoded and read again in one action.
	MaxDecodeRounds = 4
	// MaxEffects is the most effects one action yields.
	MaxEffects = 4096
	// MaxGlobMatches is the most paths one glob expands to.
	MaxGlobMatches = 256
	// MaxFuncCalls is the most calls of shell functions read in one
	// script (a function that calls another twice, ten deep, would
	// otherwise be read 1,024 times).
	MaxFuncCalls = 256
	// MaxScriptBytes is the largest script read from disk when a script
	// is run by its path.
	MaxScriptBytes = 64 << 10
)
