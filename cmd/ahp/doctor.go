//go:build unix

package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ahp-go/ahp/adapters/hooks"
	"github.com/ahp-go/ahp/admin"
	"github.com/ahp-go/ahp/auth"
	"github.com/ahp-go/ahp/config"
	"github.com/ahp-go/ahp/service"
)

func init() { register(newDoctorCmd) }

// doctorOptions are the flags of ahp doctor.
type doctorOptions struct {
	configFile  string
	dataDir     string
	policies    []string
	listen      []string
	agentUser   string
	harnessUser string
	dir         string        // the project whose agent settings are checked
	hookTimeout time.Duration // longest wait for one hook's answer
	home        string        // the agent user's home (tests; default: looked up)
	system      string        // root of the system-wide settings (tests; default "/")
	noAgents    bool          // skip the agents' checks
	codex       string        // the Codex CLI to ask about trust ("": codex on PATH)
}

func newDoctorCmd() *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check which protections against a supervised agent hold for a configuration",
		Long: `Check, for the configuration ahp serve would run with, which protections
keep a supervised agent from switching its supervisor off, and say how to
fix each one that does not hold:

  - the self_protection pack is on;
  - the agents run as another user than the harness;
  - the harness's files (data directory, admin token, configuration, policy
    files, descriptor, credentials, TLS files) are not writable by other
    users, and the agent's user can neither write them nor read the admin
    token, the credentials or the TLS key;
  - policy.watch does not reload a file the agent's user can write;
  - the agent's user can reach the agent socket;
  - each coding agent whose settings are found (Claude Code, Codex CLI,
    Gemini CLI; project, user and managed settings) is really supervised:
    a hook at its pre-tool event exists, runs, is one the tool runs (Codex:
    trusted in config.toml, or managed), and a test action piped through
    it exactly as the tool would ("rm -rf /", never run) comes back denied
    by the running harness. Per agent it says supervised or not, and why.

Run it as the user your agents run as, or name that user with
--agent-user. The harness's user is the owner of the data directory unless
--harness-user says otherwise. The exit status is 1 when a check fails,
an installed agent that is not supervised included.`,
		Example: `  ahp doctor
  sudo ahp doctor --config /etc/ahp/ahp.yaml --agent-user dev`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.OutOrStdout(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.configFile, "config", os.Getenv("AHP_CONFIG"), "configuration file of the harness (or $AHP_CONFIG)")
	f.StringVar(&o.dataDir, "data-dir", "", "data directory, when not the configuration's")
	f.StringArrayVar(&o.policies, "policy", nil, "policy file given to ahp serve with --policy, repeatable")
	f.StringArrayVar(&o.listen, "listen", nil, "listen address given to ahp serve with --listen, repeatable")
	f.StringVar(&o.agentUser, "agent-user", "", "user the agents run as (default: $SUDO_USER, else you)")
	f.StringVar(&o.harnessUser, "harness-user", "", "user ahp serve runs as (default: the owner of the data directory)")
	f.StringVar(&o.dir, "dir", ".", "the project whose agent settings (.claude, .codex, .gemini) are checked")
	f.DurationVar(&o.hookTimeout, "hook-timeout", 20*time.Second, "longest wait for one hook's answer to the test action")
	f.BoolVar(&o.noAgents, "no-agents", false, "skip the checks of the coding agents' hooks")
	f.StringVar(&o.codex, "codex", "", "Codex CLI asked for its own verdict on hook trust (default: codex on PATH; \"none\": do not ask)")
	return cmd
}

// account is a user as file permissions see it.
type account struct {
	name string
	uid  uint32
	gid  uint32 // primary group
	gids map[uint32]bool
}

func lookupAccount(u *user.User) (account, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return account{}, err
	}
	a := account{name: u.Username, uid: uint32(uid), gids: map[uint32]bool{}}
	gids, _ := u.GroupIds()
	if u.Gid != "" {
		gids = append(gids, u.Gid)
	}
	for _, g := range gids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			a.gids[uint32(n)] = true
		}
	}
	if n, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
		a.gid = uint32(n)
	}
	return a, nil
}

func accountNamed(name string) (account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.LookupId(name); err != nil {
			return account{}, fmt.Errorf("user %q: %w", name, err)
		}
	}
	return lookupAccount(u)
}

// may reports whether a can read (bit 4), write (2) or search (1) the
// file with info fi.
func (a account) may(fi os.FileInfo, bit os.FileMode) bool {
	if a.uid == 0 {
		return true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == a.uid:
		return perm&(bit<<6) != 0
	case a.gids[st.Gid]:
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

// can reports whether a can read or write path: every directory above it
// searchable, the file itself readable or writable. A missing file counts
// as writable when a can write its directory.
func (a account) can(path string, bit os.FileMode) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || !a.may(fi, 1) {
			return false
		}
		if d == "/" {
			break
		}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if bit == 2 {
			dir, derr := os.Stat(filepath.Dir(abs))
			return derr == nil && a.may(dir, 2)
		}
		return false
	}
	return a.may(fi, bit)
}

func ownerName(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10)); err == nil {
			return u.Username
		}
		return strconv.FormatUint(uint64(st.Uid), 10)
	}
	return "?"
}

// doctorReport collects the results of the checks.
type doctorReport struct {
	w      io.Writer
	failed int
	warned int
}

func (r *doctorReport) ok(msg string, args ...any) {
	fmt.Fprintf(r.w, "[ok]   %s\n", fmt.Sprintf(msg, args...))
}

func (r *doctorReport) warn(fix, msg string, args ...any) {
	r.warned++
	fmt.Fprintf(r.w, "[warn] %s\n       fix: %s\n", fmt.Sprintf(msg, args...), fix)
}

func (r *doctorReport) fail(fix, msg string, args ...any) {
	r.failed++
	fmt.Fprintf(r.w, "[FAIL] %s\n       fix: %s\n", fmt.Sprintf(msg, args...), fix)
}

func runDoctor(w io.Writer, o *doctorOptions) error {
	c := config.Default()
	if o.configFile != "" {
		var err error
		if c, err = config.Load(o.configFile); err != nil {
			return err
		}
	}
	if o.dataDir != "" {
		c.DataDir = o.dataDir
	}
	c.Policy.Files = append(c.Policy.Files, o.policies...)
	if len(o.listen) > 0 {
		c.Listen = o.listen
	}
	agentName := o.agentUser
	if agentName == "" {
		agentName = os.Getenv("SUDO_USER")
	}
	var agent account
	var err error
	if agentName == "" {
		u, uerr := user.Current()
		if uerr != nil {
			return uerr
		}
		agent, err = lookupAccount(u)
	} else {
		agent, err = accountNamed(agentName)
	}
	if err != nil {
		return err
	}
	harnessName := o.harnessUser
	if harnessName == "" {
		if fi, err := os.Stat(c.DataDir); err == nil {
			harnessName = ownerName(fi)
		} else if u, err := user.Current(); err == nil {
			harnessName = u.Username
		}
	}
	harness, err := accountNamed(harnessName)
	if err != nil {
		return err
	}
	r := &doctorReport{w: w}
	cfgName := o.configFile
	if cfgName == "" {
		cfgName = "(none: defaults)"
	}
	fmt.Fprintf(w, "ahp doctor: configuration %s, harness user %s (uid %d), agent user %s (uid %d)\n\n",
		cfgName, harness.name, harness.uid, agent.name, agent.uid)

	if on, set := c.Policy.Packs[service.SelfProtectionPack]; set && !on {
		r.fail("remove policy.packs.self_protection: false from the configuration",
			"the self_protection pack is off: the agent's commands against the harness are not even looked at")
	} else {
		r.ok("the self_protection pack is on")
	}
	switch {
	case agent.uid == harness.uid:
		r.fail(`run ahp serve as its own system user (useradd --system ahp) and the agents as theirs; see docs/security.md, "Recommended deployment"`,
			"agents run as the harness's user (%s): file permissions cannot keep them from the harness's files; only the self_protection pack stands in the way", agent.name)
	case agent.uid == 0:
		r.fail("run the agents as an unprivileged user", "agents run as root: nothing on this machine is out of their reach")
	default:
		r.ok("agents (%s) and the harness (%s) run as different users", agent.name, harness.name)
	}
	doctorFiles(r, c, o.configFile, agent, harness)
	doctorExecutable(r, agent)
	doctorSockets(r, c, agent)
	if c.Admin != "" && c.Admin != "off" {
		if u, err := url.Parse(c.Admin); err == nil && !auth.IsLoopbackAddr(u.Host) {
			r.warn("listen on 127.0.0.1 (admin: http://127.0.0.1:7700) or put the admin API behind a proxy that authenticates",
				"the admin API (%s) listens beyond loopback", c.Admin)
		}
	}
	if !o.noAgents {
		p, err := agentPathsFor(o, agentName)
		if err != nil {
			return err
		}
		limit := o.hookTimeout
		if limit <= 0 {
			limit = 20 * time.Second
		}
		doctorAgents(r, p, agent, limit)
	}
	fmt.Fprintf(w, "\n%d failed, %d warnings\n", r.failed, r.warned)
	if r.failed > 0 {
		return exitWith(1, "")
	}
	return nil
}

// agentPathsFor returns where the agent user's settings are: the project
// directory, the home directory (of --agent-user when given) and Codex's
// home ($CODEX_HOME when checking one's own settings).
func agentPathsFor(o *doctorOptions, agentName string) (agentPaths, error) {
	p := agentPaths{system: o.system, home: o.home}
	if p.system == "" {
		p.system = "/"
	}
	dir := o.dir
	if dir == "" {
		dir = "."
	}
	var err error
	if p.project, err = filepath.Abs(dir); err != nil {
		return p, err
	}
	own := true
	if p.home == "" {
		if agentName != "" {
			u, err := user.Lookup(agentName)
			if err != nil {
				return p, err
			}
			me, _ := user.Current()
			own = me != nil && me.Uid == u.Uid
			p.home = u.HomeDir
		} else if p.home, err = os.UserHomeDir(); err != nil {
			return p, err
		}
	}
	switch o.codex {
	case "none":
	case "":
		p.codexBin, _ = exec.LookPath("codex")
	default:
		p.codexBin = o.codex
	}
	p.codexHome = filepath.Join(p.home, ".codex")
	if own && o.home == "" {
		p.codexHome = hooks.CodexHome(p.home)
	}
	return p, nil
}

// doctorFiles checks the owner, mode and reachability of the harness's
// files.
func doctorFiles(r *doctorReport, c config.Config, configFile string, agent, harness account) {
	secret := map[string]string{filepath.Join(c.DataDir, admin.TokenFile): "admin token"}
	for _, f := range []string{c.Auth.Credentials, c.Auth.TLSKey} {
		if f != "" {
			secret[f] = "secret"
		}
	}
	policies := map[string]bool{}
	for _, p := range c.Policy.Files {
		policies[p] = true
	}
	for _, f := range service.HarnessFiles(c, configFile) {
		if strings.HasPrefix(f, "unix:") || isSocketPath(c, f) {
			continue
		}
		fi, err := os.Stat(f)
		if err != nil {
			if f == c.DataDir {
				r.warn("start ahp serve once, then run ahp doctor again", "data directory %s does not exist yet", f)
			}
			continue
		}
		perm := fi.Mode().Perm()
		what := "file"
		if fi.IsDir() {
			what = "directory"
		}
		switch {
		case perm&0o022 != 0:
			r.fail(fmt.Sprintf("chmod go-w %s", f), "%s %s is writable by other users (mode %04o)", what, f, perm)
		case agent.uid != harness.uid && agent.can(f, 2):
			r.fail(fmt.Sprintf("chown %s %s && chmod go-w %s", harness.name, f, f), "the agent's user %s can write %s", agent.name, f)
		case agent.uid == harness.uid:
			r.ok("%s %s: owner %s, mode %04o, not writable by other users", what, f, ownerName(fi), perm)
		default:
			r.ok("%s %s: owner %s, mode %04o, not writable by %s", what, f, ownerName(fi), perm, agent.name)
		}
		if policies[f] && c.Policy.Watch && agent.can(f, 2) {
			r.fail(fmt.Sprintf("set policy.watch: false, or make %s writable by %s only", f, harness.name),
				"policy.watch reloads %s, which the agent's user %s can write: a rewrite takes effect within a second", f, agent.name)
		}
		if f == c.DataDir && perm&0o077 != 0 {
			r.warn(fmt.Sprintf("chmod 700 %s", f), "data directory %s is open to other users (mode %04o)", f, perm)
		}
		if kind, ok := secret[f]; ok {
			switch {
			case agent.can(f, 4):
				r.fail(fmt.Sprintf("chown %s %s && chmod 600 %s (and keep the agent out of %s's group)", harness.name, f, f, harness.name),
					"the %s %s is readable by the agent's user %s", kind, f, agent.name)
			case perm&0o077 != 0:
				r.warn(fmt.Sprintf("chmod 600 %s", f), "the %s %s is open to other users (mode %04o)", kind, f, perm)
			default:
				r.ok("the %s %s is not readable by %s", kind, f, agent.name)
			}
		}
	}
}

// doctorExecutable checks that the agent's user cannot replace the ahp
// executable the hooks run (docs/security.md, "The tamper surface": the
// policy blocks the commands that would, only ownership stops a program
// the agent writes).
func doctorExecutable(r *doctorReport, agent account) {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	fix := "install ahp owned by root and not writable by others (install -o root -m 0755 ahp /usr/local/bin/ahp), and point the hooks at it"
	switch dir := filepath.Dir(exe); {
	case agent.can(exe, 2):
		r.warn(fix, "the agent's user %s can overwrite the ahp executable %s that hooks run", agent.name, exe)
	case agent.can(dir, 2):
		r.warn(fix, "the agent's user %s can replace the ahp executable %s (its directory is writable)", agent.name, exe)
	default:
		r.ok("the ahp executable %s cannot be replaced by %s", exe, agent.name)
	}
}

func isSocketPath(c config.Config, f string) bool {
	for _, l := range c.Listen {
		if p, ok := strings.CutPrefix(l, "unix:"); ok && p == f {
			return true
		}
	}
	return false
}

// doctorSockets checks that the agent's user can reach each Unix socket.
func doctorSockets(r *doctorReport, c config.Config, agent account) {
	for _, l := range c.Listen {
		p, ok := strings.CutPrefix(l, "unix:")
		if !ok || p == "" {
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			r.warn("start ahp serve, then run ahp doctor again", "agent socket %s does not exist (is the harness running?)", p)
		case !agent.can(p, 2):
			r.fail(fmt.Sprintf("start ahp serve with --socket-mode 0660 and a group the agent's user %s is in (chgrp the socket's directory, setgid)", agent.name),
				"the agent's user %s cannot connect to %s (mode %04o, owner %s)", agent.name, p, fi.Mode().Perm(), ownerName(fi))
		default:
			r.ok("the agent's user %s can connect to %s", agent.name, p)
		}
	}
}
