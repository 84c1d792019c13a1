package effects

import (
	"regexp"
	"strconv"
	"strings"
)

// Commands hidden in settings: many programs take a shell command as the
// value of an option (ssh -o ProxyCommand=CMD, tar --to-command=CMD, git -c
// core.pager=CMD, rsync -e CMD) or of an environment variable
// (GIT_SSH_COMMAND, PAGER, EDITOR, LESSOPEN) and run it with sh. The reader
// reads such a value as a shell script, as it reads sh -c; a value not known
// statically is code that runs unread (an opaque Unknown into "sh").

// shCommandVars are the environment variables whose value is a command that
// a program runs through the shell.
var shCommandVars = map[string]bool{
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_PAGER": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_ASKPASS": true, "GIT_PROXY_COMMAND": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "PSQL_PAGER": true, "EDITOR": true, "VISUAL": true,
	"SUDO_EDITOR": true, "LESSOPEN": true, "LESSCLOSE": true, "PROMPT_COMMAND": true, "RSYNC_RSH": true,
	"BROWSER": true, "DIFFPROG": true,
}

// shScriptVars are the environment variables that name a script a shell
// sources when it starts (bash's BASH_ENV for every script, sh's ENV).
var shScriptVars = map[string]bool{"BASH_ENV": true, "ENV": true}

// commandVar reads the value given to an environment variable that holds
// a command (shCommandVars), a start-up script (shScriptVars) or a library
// the dynamic loader loads into every program (LD_PRELOAD, LD_AUDIT).
func (r *sh) commandVar(name string, val sword) {
	if name == "GLOBIGNORE" {
		// A GLOBIGNORE set makes globs match names that start with a dot,
		// as dotglob does.
		r.s.dotglob = !val.known || val.val != ""
		return
	}
	switch {
	case shCommandVars[name]:
		if val.known {
			v := strings.TrimSpace(val.val)
			if name == "LESSOPEN" || name == "LESSCLOSE" {
				v = strings.TrimLeft(v, "|-") // "|cmd %s", "||cmd %s": an input pipe
			}
			if v != "" {
				r.s.shellIn(v, nil)
			}
			return
		}
		if val.out != nil && val.out.kind == sNet {
			r.download(val.out, "sh")
			return
		}
		r.s.opaque("sh", outProg(val), "%s set to a command not known statically: %s", name, val.arg)
	case name == "LD_PRELOAD" || name == "LD_AUDIT":
		// A library loaded into every program run from here: code that
		// runs unread (the rootkit's and the sudo env_keep trick's way in).
		if val.known && strings.TrimSpace(val.val) == "" {
			return
		}
		r.s.opaque("program", outProg(val), "%s loads a library into the programs it runs: %s", name, val.arg)
	case shScriptVars[name]:
		if val.known && val.val == "" {
			return
		}
		r.s.shellIn(`. "$1"`, &shEnv{args: []sword{val}})
	}
}

// shCommandOptions are, per program, the options whose value is a command
// the program runs through the shell.
var shCommandOptions = map[string]struct {
	valued shOptSet // every option of the program that takes a value
	cmds   []string // the options among them whose value is a command
}{
	"tar": {shOpts("-f --file -C --directory -T --files-from -X --exclude-from -b --blocking-factor -H --format -I --use-compress-program -g --listed-incremental -N --newer --owner --group --mode --transform --xform -L --tape-length -V --label -F --info-script --new-volume-script --to-command --rsh-command --rmt-command"),
		[]string{"-I", "--use-compress-program", "--to-command", "--rsh-command", "--rmt-command", "-F", "--info-script", "--new-volume-script"}},
	"rsync": {shOpts("-e --rsh --exclude --include --exclude-from --include-from --files-from --filter -f --port --password-file --log-file --chmod --chown -T --temp-dir --backup-dir --suffix --bwlimit --timeout --partial-dir --compare-dest --link-dest --copy-dest -B --block-size --max-size --min-size --out-format --info --debug -M --remote-option --rsync-path --usermap --groupmap --iconv --skip-compress --checksum-choice --compress-choice"),
		[]string{"-e", "--rsh"}},
	"man":  {shOpts("-P --pager -C --config-file -M --manpath -S -s --sections -e --extension -L --locale -m --systems -p --preprocessor -r --prompt -E --encoding"), []string{"-P", "--pager"}},
	"scp":  {shOpts("-c -D -F -i -J -l -o -P -S -X"), []string{"-S"}},
	"sftp": {shOpts("-B -b -c -D -F -i -J -l -o -P -R -S -s -X"), []string{"-S"}},
}

// commandOptions reads the commands a program is given in its options
// (shCommandOptions), ssh's -o ProxyCommand/LocalCommand/KnownHostsCommand
// (also for scp, sftp and rsync -e ssh), git's -c settings that run
// commands (core.pager, core.sshCommand, core.fsmonitor, alias.x=!cmd, …),
// less's +!cmd and sqlite3's .shell/.system.
func (c *shCall) commandOptions() {
	switch c.prog {
	case "git":
		c.gitConfigCommands()
		return
	case "less", "more":
		for _, w := range c.args() {
			if w.known && strings.HasPrefix(w.val, "+") {
				if _, cmd, ok := strings.Cut(w.val, "!"); ok {
					c.shellText(c.prog, shLit(cmd), nil)
				}
			}
		}
		return
	case "psql", "mysql", "mariadb":
		// \! cmd (and mysql's "system cmd") in -c/-e SQL runs a shell command.
		opt := shOpts("-c --command -f --file -d --dbname -h --host -p --port -U --username -v --set -o --output -P --pset -L --log-file -T -F -R")
		names := []string{"-c", "--command"}
		if c.prog != "psql" {
			opt = shOpts("-e --execute -h --host -P --port -u --user -D --database -S --socket")
			names = []string{"-e", "--execute"}
		}
		for _, w := range c.parseOpts(c.args(), opt, false).all(names...) {
			for _, stmt := range strings.FieldsFunc(w.val, func(r rune) bool { return r == '\n' || r == ';' }) {
				stmt = strings.TrimSpace(stmt)
				cmd, ok := strings.CutPrefix(stmt, `\!`)
				if !ok && c.prog != "psql" {
					cmd, ok = strings.CutPrefix(stmt, "system ")
				}
				if ok && w.known {
					c.shellText(c.prog, shLit(cmd), nil)
				}
			}
		}
		return
	case "sqlite3", "sqlite":
		for _, w := range c.args() {
			for _, line := range strings.Split(w.val, "\n") {
				line = strings.TrimSpace(line)
				for _, dot := range []string{".shell ", ".system "} {
					if cmd, ok := strings.CutPrefix(line, dot); w.known && ok {
						c.shellText(c.prog, shLit(cmd), nil)
					}
				}
			}
		}
		return
	}
	if c.prog == "zip" {
		// -TT is one option (parseOpts would read -T -T).
		args := c.args()
		for i, w := range args {
			switch {
			case w.known && (w.val == "-TT" || w.val == "--unzip-command") && i+1 < len(args):
				c.shellText(c.prog, args[i+1], nil)
			case w.known && strings.HasPrefix(w.val, "--unzip-command="):
				c.shellText(c.prog, shLit(strings.TrimPrefix(w.val, "--unzip-command=")), nil)
			}
		}
		return
	}
	if c.prog == "ssh" || c.prog == "scp" || c.prog == "sftp" {
		c.sshConfigCommands(c.parseOpts(c.args(), sshOpts, false).all("-o"))
	}
	spec, ok := shCommandOptions[c.prog]
	if !ok {
		return
	}
	p := c.parseOpts(c.args(), spec.valued, false)
	for _, w := range p.all(spec.cmds...) {
		c.shellText(c.prog, w, nil)
	}
	if c.prog == "tar" {
		// --checkpoint-action=exec=CMD
		for _, w := range p.all("--checkpoint-action") {
			if cmd, ok := strings.CutPrefix(w.val, "exec="); ok && w.known {
				c.shellText(c.prog, shLit(cmd), nil)
			} else if !w.known {
				c.r.s.opaque("sh", outProg(w), "tar: checkpoint action not known statically: %s", w.arg)
			}
		}
	}
}

// sshCommandKeys are the ssh_config settings whose value is a command run
// on this machine.
var sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}

// sshConfigCommands reads ssh -o KEY=VALUE (or "KEY VALUE") settings that
// run a command.
func (c *shCall) sshConfigCommands(opts []sword) {
	for _, o := range opts {
		text := o.val
		if !o.known {
			text = o.arg
		}
		key, val, ok := strings.Cut(strings.TrimLeft(text, `"' `), "=")
		if i := strings.IndexAny(key, " \t"); i >= 0 {
			key, val, ok = key[:i], key[i+1:]+"="+val, true
			if !strings.Contains(text, "=") {
				val = strings.TrimSuffix(val, "=")
			}
		}
		if !ok {
			continue
		}
		for _, k := range sshCommandKeys {
			if !strings.EqualFold(strings.TrimSpace(key), k) {
				continue
			}
			val = strings.TrimSpace(val)
			switch {
			case !o.known:
				c.r.s.opaque("sh", outProg(o), "%s: %s not known statically: %s", c.prog, k, o.arg)
			case !strings.EqualFold(val, "none") && val != "":
				c.shellText(c.prog, shLit(val), nil)
			}
		}
	}
}

// gitCommandKey reports whether a git setting's value is a command git
// runs (lower-case key).
func gitCommandKey(key string) bool {
	switch key {
	case "core.pager", "core.sshcommand", "core.fsmonitor", "core.editor", "core.askpass", "sequence.editor",
		"diff.external", "gpg.program", "gpg.ssh.program", "gpg.x509.program", "credential.helper",
		"uploadpack.packobjectshook", "pager.log", "pager.diff", "pager.show", "pager.branch", "web.browser":
		return true
	}
	switch {
	case strings.HasPrefix(key, "alias."):
		return true
	case strings.HasPrefix(key, "filter.") && (strings.HasSuffix(key, ".clean") || strings.HasSuffix(key, ".smudge") || strings.HasSuffix(key, ".process")),
		strings.HasPrefix(key, "diff.") && (strings.HasSuffix(key, ".textconv") || strings.HasSuffix(key, ".command")),
		strings.HasPrefix(key, "merge.") && strings.HasSuffix(key, ".driver"),
		strings.HasPrefix(key, "pager."), strings.HasPrefix(key, "remote.") && (strings.HasSuffix(key, ".uploadpack") || strings.HasSuffix(key, ".receivepack")):
		return true
	}
	return false
}

// gitConfigCommands reads git -c KEY=VALUE and --config-env=KEY=VAR given
// before the subcommand when KEY is a setting that runs a command or
// includes a file, and the settings git takes from its environment.
func (c *shCall) gitConfigCommands() {
	c.gitEnvConfig()
	args := c.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known || !strings.HasPrefix(a.val, "-") {
			return // the subcommand: its own options follow
		}
		var kv sword
		switch {
		case a.val == "-c" && i+1 < len(args):
			i++
			kv = args[i]
		case strings.HasPrefix(a.val, "-c") && a.val != "-c":
			kv = shLit(a.val[2:])
		case a.val == "--config-env" && i+1 < len(args):
			i++
			if key, _, _ := strings.Cut(args[i].val, "="); gitCommandKey(strings.ToLower(key)) {
				c.r.s.opaque("sh", "", "git: %s taken from the environment, not known statically: %s", key, args[i].arg)
			}
			continue
		case strings.HasPrefix(a.val, "--config-env="):
			if key, _, _ := strings.Cut(strings.TrimPrefix(a.val, "--config-env="), "="); gitCommandKey(strings.ToLower(key)) {
				c.r.s.opaque("sh", "", "git: %s taken from the environment, not known statically: %s", key, a.arg)
			}
			continue
		case a.val == "-C" || a.val == "--git-dir" || a.val == "--work-tree" || a.val == "--namespace":
			i++
			continue
		default:
			continue
		}
		text := kv.val
		if !kv.known {
			text = kv.arg
		}
		key, val, _ := strings.Cut(strings.TrimLeft(text, `"'`), "=")
		lk := strings.ToLower(key)
		if !gitCommandKey(lk) && !gitIncludeKey(lk) {
			continue
		}
		if !kv.known {
			c.r.s.opaque("sh", outProg(kv), "git: %s set to a command not known statically: %s", key, kv.arg)
			continue
		}
		c.gitSetting(lk, val, 0)
	}
}

// gitIncludeKey reports whether a git setting names another configuration
// file to read (include.path, includeIf.COND.path).
func gitIncludeKey(key string) bool {
	return key == "include.path" || strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path")
}

// gitSetting reads one git setting known statically (key in lower case):
// a command git runs is read as shell, an included file is read for its
// settings (depth counts includes, bounded).
func (c *shCall) gitSetting(key, val string, depth int) {
	if gitIncludeKey(key) {
		c.gitConfigFile(shLit(strings.TrimSpace(val)), depth+1)
		return
	}
	if !gitCommandKey(key) {
		return
	}
	if strings.HasPrefix(key, "alias.") || key == "credential.helper" {
		// An alias or helper that starts with "!" is a shell command;
		// otherwise it is a git subcommand or git-credential-NAME.
		cmd, ok := strings.CutPrefix(strings.TrimSpace(val), "!")
		if !ok && !(key == "credential.helper" && (strings.HasPrefix(cmd, "/") || strings.HasPrefix(cmd, "~"))) {
			return // a helper named by an absolute path runs as it is
		}
		val = cmd
	}
	if strings.TrimSpace(val) != "" {
		c.shellText("git", shLit(val), nil)
	}
}

// envVar returns the value a program sees for an environment variable:
// an assignment before the command, else an exported variable.
func (c *shCall) envVar(name string) (sword, bool) {
	for i := len(c.env) - 1; i >= 0; i-- {
		if c.env[i].name == name {
			return c.env[i].val, true
		}
	}
	if v, ok := c.r.vars[name]; ok && v.exported {
		if !v.known {
			return sword{arg: "$" + name}, true
		}
		return shLit(v.val), true
	}
	return sword{}, false
}

// gitMaxEnvConfig bounds the GIT_CONFIG_KEY_n settings read.
const gitMaxEnvConfig = 16

// gitParamRE is one 'key'='value' (or the older 'key=value') of
// GIT_CONFIG_PARAMETERS.
var gitParamRE = regexp.MustCompile(`'([^']*)'(?:='([^']*)')?`)

// gitEnvConfig reads the settings git takes from its environment:
// GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n,
// GIT_CONFIG_PARAMETERS, and the files GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM and GIT_CONFIG name (/dev/null, the usual way to
// ignore a user's settings, names none).
func (c *shCall) gitEnvConfig() {
	if cnt, ok := c.envVar("GIT_CONFIG_COUNT"); ok {
		n := gitMaxEnvConfig
		if cnt.known {
			if v, err := strconv.Atoi(strings.TrimSpace(cnt.val)); err == nil && v >= 0 && v < n {
				n = v
			}
		}
		for i := 0; i < n; i++ {
			k, ok := c.envVar("GIT_CONFIG_KEY_" + strconv.Itoa(i))
			if !ok {
				continue
			}
			v, _ := c.envVar("GIT_CONFIG_VALUE_" + strconv.Itoa(i))
			if !k.known || !v.known {
				c.r.s.opaque("sh", "", "git: setting %d of its environment not known statically", i)
				continue
			}
			c.gitSetting(strings.ToLower(strings.TrimSpace(k.val)), v.val, 0)
		}
	}
	if params, ok := c.envVar("GIT_CONFIG_PARAMETERS"); ok {
		if !params.known {
			c.r.s.opaque("sh", "", "git: GIT_CONFIG_PARAMETERS not known statically: %s", params.arg)
		}
		for _, m := range gitParamRE.FindAllStringSubmatch(params.val, -1) {
			key, val := m[1], m[2]
			if !strings.Contains(m[0], "'='") {
				key, val, _ = strings.Cut(m[1], "=")
			}
			c.gitSetting(strings.ToLower(key), val, 0)
		}
	}
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"} {
		if f, ok := c.envVar(name); ok && !(f.known && (f.val == "" || f.val == "/dev/null")) {
			c.gitConfigFile(f, 1)
		}
	}
}

// gitConfigFile reads a git configuration file git is told to read (an
// include, GIT_CONFIG_GLOBAL): the settings in it that run commands are
// read as shell. A file the analysis cannot see or read, a name not known
// statically, includes nested deeper than 4, and a line continued with a
// backslash make git run settings unread (an opaque Unknown into sh).
func (c *shCall) gitConfigFile(f sword, depth int) {
	if !f.known {
		c.r.s.opaque("sh", outProg(f), "git reads settings from a file not known statically: %s", f.arg)
		return
	}
	p := c.r.path(f.val, false)
	if depth > 4 {
		c.r.s.opaque("sh", "", "git: settings included more than 4 levels deep: %s", p)
		return
	}
	text, ok := c.r.batchFile(p)
	if !ok {
		c.r.s.opaque("sh", "", "git reads settings from %s, which the analysis cannot see or read", p)
		return
	}
	c.r.s.add(Effect{Kind: Read, Program: "git", Path: p})
	section := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			c.r.s.opaque("sh", "", "git: a setting continued on the next line in %s", p)
			return
		}
		if line[0] == '[' {
			section = gitSection(line)
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		c.gitSetting(section+"."+strings.ToLower(strings.TrimSpace(key)), gitValue(val), depth)
	}
}

// gitSection names a configuration section header in lower case, with its
// subsection as written: [core] core, [alias] alias, [filter "x"] filter.x,
// [includeIf "gitdir:~/w/"] includeif.gitdir:~/w/.
func gitSection(line string) string {
	h := strings.TrimSpace(strings.Trim(line[:strings.IndexByte(line+"]", ']')], "[ "))
	name, sub, ok := strings.Cut(h, " ")
	if !ok {
		return strings.ToLower(h)
	}
	return strings.ToLower(name) + "." + strings.Trim(strings.TrimSpace(sub), `"`)
}

// gitValue is a configuration value as git reads it: quotes removed, a
// comment after it dropped.
func gitValue(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		if end := strings.LastIndexByte(v, '"'); end > 0 {
			return strings.ReplaceAll(v[1:end], `\"`, `"`)
		}
	}
	if i := strings.IndexAny(v, "#;"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}
