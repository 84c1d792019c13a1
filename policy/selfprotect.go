package policy

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/internal/loopback"
)

// The self_protection pack keeps a supervised agent from switching its
// supervisor off: reading or changing the harness's files, running its
// administrative commands, calling its admin API, stopping its process, or
// editing the hook settings that route the agent through it. Its functions
// read the event the way the shell and the file tools would act on it, with
// paths resolved against the event's working directory and, on this
// machine, through symbolic links. It is a guard rail against the obvious
// ways out; docs/security.md says what it cannot stop.

// Parameters of the self_protection pack (config.NAME); SelfProtection
// fills them from a running configuration.
const (
	paramSPPaths    = "self_protection_paths"
	paramSPCwd      = "self_protection_cwd"
	paramSPAdmin    = "self_protection_admin"
	paramSPPids     = "self_protection_pids"
	paramSPNames    = "self_protection_names"
	paramSPCmdlines = "self_protection_cmdlines"
	paramSPUnits    = "self_protection_units"
	paramSPExes     = "self_protection_executables"
)

// SelfProtection describes what the self_protection pack protects: the
// harness's own files, addresses and process. Params turns it into the
// pack's parameters.
type SelfProtection struct {
	// Paths are the harness's files and directories: data directory,
	// configuration, policy files, descriptor, credentials, TLS files,
	// socket paths. Relative paths are taken relative to Cwd.
	Paths []string
	// Cwd is the harness's working directory, against which relative paths
	// of the configuration and of events without a cwd are resolved.
	Cwd string
	// AdminAddrs are the admin API's addresses (http://HOST:PORT or
	// HOST:PORT).
	AdminAddrs []string
	// PIDs are the harness's process id and process group id.
	PIDs []int
	// Names are the harness's process names (ahp and the executable's
	// name).
	Names []string
	// Cmdlines are the harness's command lines, as pkill -f sees them.
	Cmdlines []string
	// Units are the systemd units the harness runs as.
	Units []string
	// Executables are the programs the installed hooks run and the
	// harness's own executable (ahp, ahp-hook): protected like Paths,
	// except that running one is not touching it (the admin_command rule
	// judges what it is run for).
	Executables []string
}

// Params returns the pack parameters for sp. Each path is listed as given
// (made absolute) and, when it differs, as its real path with symbolic
// links resolved, so that both spellings are recognised.
func (sp SelfProtection) Params() map[string]any {
	paths := sp.absPaths(sp.Paths)
	exes := sp.absPaths(sp.Executables)
	pids := make([]string, 0, len(sp.PIDs))
	for _, pid := range sp.PIDs {
		if pid > 0 {
			pids = append(pids, itoa(pid))
		}
	}
	names := append([]string{"ahp"}, sp.Names...)
	cmdlines := append([]string{"ahp serve"}, sp.Cmdlines...)
	units := append([]string{"ahp", "ahp.service"}, sp.Units...)
	return map[string]any{
		paramSPPaths:    nonNil(paths),
		paramSPCwd:      sp.Cwd,
		paramSPAdmin:    nonNil(sp.AdminAddrs),
		paramSPPids:     nonNil(pids),
		paramSPNames:    dedupe(names),
		paramSPCmdlines: dedupe(cmdlines),
		paramSPUnits:    dedupe(units),
		paramSPExes:     nonNil(exes),
	}
}

// absPaths makes each path absolute against sp.Cwd and adds its real path
// (symbolic links resolved) when that differs.
func (sp SelfProtection) absPaths(in []string) []string {
	var paths []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, p := range in {
		if p == "" {
			continue
		}
		abs := absAgainst(expandHome(p), sp.Cwd)
		add(abs)
		add(realPath(abs))
	}
	return paths
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dedupe(in []string) []string {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// guard is the self_protection configuration of one policy set, read from
// its parameters.
type guard struct {
	paths    [][]string // protected paths, as cleaned components
	exes     [][]string // protected executables, as cleaned components
	local    []string   // names the hosts file gives loopback addresses
	cwd      string
	home     string
	admin    []hostPort
	pids     map[string]bool
	names    []string
	cmdlines []string
	units    []string
}

type hostPort struct{ host, port string }

// guardCache holds the guard of the configuration last seen. The cached
// value keeps its configuration alive, so a pointer comparison is sound.
type guardCache struct {
	config ref.Val
	g      *guard
}

var lastGuard atomic.Pointer[guardCache]

// guardFor returns the guard of a set's configuration, parsed once per
// configuration in the common case.
func guardFor(config ref.Val) *guard {
	// Only a configuration held by pointer is cached, so the comparison
	// of the two interfaces is one of dynamic types and pointers (it
	// cannot panic on an incomparable value): no reflection per call.
	if c := lastGuard.Load(); c != nil && c.config == config {
		return c.g
	}
	g := parseGuard(config)
	if reflect.ValueOf(config).Kind() == reflect.Pointer {
		lastGuard.Store(&guardCache{config: config, g: g})
	}
	return g
}

func parseGuard(config ref.Val) *guard {
	g := &guard{pids: map[string]bool{}}
	g.home, _ = os.UserHomeDir()
	m, ok := config.(traits.Mapper)
	if !ok {
		return g
	}
	list := func(name string) []string {
		v, found := m.Find(types.String(name))
		if !found {
			return nil
		}
		return stringsOf(v)
	}
	if cwd := list(paramSPCwd); len(cwd) == 1 && filepath.IsAbs(cwd[0]) {
		g.cwd = filepath.Clean(cwd[0])
	}
	for _, p := range list(paramSPPaths) {
		p = absAgainst(expandHomeWith(p, g.home), g.cwd)
		if filepath.IsAbs(p) {
			g.paths = append(g.paths, components(p))
		}
	}
	for _, p := range list(paramSPExes) {
		p = absAgainst(expandHomeWith(p, g.home), g.cwd)
		if filepath.IsAbs(p) {
			g.exes = append(g.exes, components(p))
		}
	}
	for _, a := range list(paramSPAdmin) {
		if hp, ok := parseHostPort(a); ok {
			g.admin = append(g.admin, hp)
		}
	}
	if len(g.admin) > 0 {
		g.local = hostsLoopbackNames()
	}
	for _, pid := range list(paramSPPids) {
		g.pids[strings.TrimSpace(pid)] = true
	}
	g.names = list(paramSPNames)
	g.cmdlines = list(paramSPCmdlines)
	g.units = list(paramSPUnits)
	return g
}

// selfProtectionFunctions are the CEL functions of the self_protection
// pack. Each takes the payload and the configuration (config).
func selfProtectionFunctions() []cel.EnvOption {
	fn := func(name string, check spCheck) cel.EnvOption {
		return cel.Function(name, cel.Overload(name+"_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType,
			cel.BinaryBinding(func(payload, config ref.Val) ref.Val {
				return types.Bool(readAction(payload, guardFor(config)).check(check))
			})))
	}
	return []cel.EnvOption{
		fn("touches_harness_files", spCheckFiles),
		fn("changes_agent_hooks", spCheckHooks),
		fn("runs_harness_admin", spCheckAdmin),
		fn("calls_harness_admin_api", spCheckAPI),
		fn("stops_harness", spCheckStop),
		// self_protection_limit names the limit of the analysis the event
		// reached ("" when none): the pack blocks such an event rather
		// than trust a reading that stopped part way.
		cel.Function("self_protection_limit", cel.Overload("self_protection_limit_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.StringType,
			cel.BinaryBinding(func(payload, config ref.Val) ref.Val {
				return types.String(readAction(payload, guardFor(config)).limitReached())
			}))),
	}
}

// hostsLoopbackNames returns the names /etc/hosts gives this machine's
// loopback addresses (localhost.localdomain, the machine's own name on
// Debian's 127.0.1.1 line).
func hostsLoopbackNames() []string {
	f, err := os.Open("/etc/hosts")
	if err != nil {
		return nil
	}
	defer f.Close()
	return loopback.LoopbackNames(io.LimitReader(f, 1<<20), 256)
}

// expandHome replaces a leading ~ with the home directory.
func expandHome(p string) string {
	home, _ := os.UserHomeDir()
	return expandHomeWith(p, home)
}

func expandHomeWith(p, home string) string {
	for _, v := range []string{"${HOME}", "$HOME"} {
		if p == v || strings.HasPrefix(p, v+"/") {
			p = "~" + p[len(v):]
		}
	}
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + p[1:]
	}
	return p
}

// absAgainst makes p absolute against dir (when dir is known) and cleans it.
func absAgainst(p, dir string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		if dir == "" {
			return p
		}
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// realPath resolves the symbolic links of an absolute path on this machine.
// A path that does not exist (yet) keeps its missing tail after its longest
// existing, resolved prefix.
func realPath(p string) string {
	// os.Stat fails exactly where EvalSymlinks would (a missing component,
	// a dangling or looping link, no permission) at the cost of one system
	// call, where EvalSymlinks makes one or two per component: the longest
	// existing prefix is found with Stat, and resolved once.
	return resolveLongestPrefix(p, func(prefix string) (string, bool) {
		if prefix == "/" {
			return "/", true // the root is never a link
		}
		return resolveWhole(prefix)
	})
}

// resolveWhole is realPath's resolve of one prefix: its links resolved
// when it exists.
func resolveWhole(prefix string) (string, bool) {
	if !pathExists(prefix) {
		return "", false
	}
	real, err := filepath.EvalSymlinks(prefix)
	return real, err == nil
}

// resolveLongestPrefix resolves the longest prefix of the absolute path p
// that resolve accepts, trying ever shorter ones, and appends the rest of
// p to it; p is returned as it is when it is relative or nothing resolves.
func resolveLongestPrefix(p string, resolve func(prefix string) (string, bool)) string {
	if !filepath.IsAbs(p) {
		return p
	}
	// The prefixes are cut off by name, not cleaned: "link/.." is the
	// link target's parent to the kernel, and only resolve may say so.
	rest := ""
	cur := strings.TrimRight(p, "/")
	for range 128 {
		if cur == "" {
			cur = "/"
		}
		if r, ok := resolve(cur); ok {
			if rest == "" {
				return r
			}
			return joinResolved(r, rest)
		}
		if cur == "/" {
			break
		}
		i := strings.LastIndexByte(cur, '/')
		base := cur[i+1:]
		cur = strings.TrimRight(cur[:i], "/")
		switch {
		case base == "" || base == ".":
		case rest == "":
			rest = base
		default:
			rest = base + "/" + rest
		}
	}
	return filepath.Clean(p)
}

// joinResolved is filepath.Join(r, rest) for a resolved prefix r and a
// non-empty rest: one allocation where Join, given "/" and a path, makes
// three (a joined "//x" that Clean then copies).
func joinResolved(r, rest string) string {
	if strings.HasSuffix(r, "/") {
		return filepath.Clean(r + rest)
	}
	return filepath.Clean(r + "/" + rest)
}

// components splits a clean absolute path into its names ("/" is none).
func components(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// appendComponents appends the names of a clean absolute path to dst, as
// components splits them.
func appendComponents(dst []string, p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return dst
	}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return append(dst, p)
		}
		dst = append(dst, p[:i])
		p = p[i+1:]
	}
}

// linkFS is the view of the file system the effect analysis gets when the
// self_protection pack guards paths and the options give none. It only
// takes ".." as the kernel takes it: after a symbolic link, from the link's
// target (cat elsewhere/data-link/../ahp-data/admin.token is the token,
// not elsewhere/ahp-data/admin.token), resolving the links of such a path
// (a missing tail is kept after its longest existing prefix). A path
// without ".." is returned as it is: every other pack keeps comparing
// lexical paths (a workspace root that is itself a link stays a prefix of
// the paths under it), and the pack resolves the links of the paths it
// judges itself (realPath). It expands no glob (patterns stay as written;
// the pack matches them against its paths) and reads no script.
type linkFS struct{}

var errNoFS = errors.New("policy: the self-protection view of the file system only resolves links")

// Glob implements effects.FS: no expansion.
func (linkFS) Glob(string, int) ([]string, error) { return nil, errNoFS }

// EvalSymlinks implements effects.FS: realPath for a path with a ".."
// name, the path itself for any other.
func (linkFS) EvalSymlinks(p string) (string, error) {
	if !filepath.IsAbs(p) || strings.Count(p, "/") > spMaxPathDepth {
		return "", errNoFS
	}
	if !hasDotDot(p) {
		return filepath.Clean(p), nil
	}
	return realPath(p), nil
}

// ReadFile implements effects.FS: no script is read.
func (linkFS) ReadFile(string, int) ([]byte, bool, error) { return nil, false, errNoFS }

// protectsPaths reports whether the parameters name paths for the
// self_protection pack to guard.
func protectsPaths(params map[string]any) bool {
	for _, k := range []string{paramSPPaths, paramSPExes} {
		switch v := params[k].(type) {
		case []string:
			if len(v) > 0 {
				return true
			}
		case []any:
			if len(v) > 0 {
				return true
			}
		}
	}
	return false
}
