package effects

import (
	"encoding/json"
	"slices"
	"strings"
)

// Programs that run a command given as their remaining words: a language
// environment's "run"/"exec" (uv run pytest, bundle exec rspec, npm exec
// tsc), an init or privilege shim (tini --, gosu USER, su-exec USER,
// setpriv), a resource or tracing wrapper (prlimit, cpulimit, numactl,
// valgrind). Each is read as its command, as sudo and nice are; an agent
// would otherwise hide any command behind one (uv run rm -rf ~).

// execWrap describes one such program: the subcommand words that make it
// run a command (none: it always does), the options known to take a value,
// and how many operands come before the command (gosu's USER).
type execWrap struct {
	subs   []string
	valued shOptSet
	skip   int
	// shell are options whose value is a shell command (npx -c 'CMD',
	// nix-shell --run 'CMD'); rest are options after which the remaining
	// words are the command (nix develop -c CMD ARGS); noCmd says the
	// operands are not a command (nix-shell's are .nix files).
	shell, rest shOptSet
	noCmd       bool
}

// execWrappers are the programs read by hExecWrap.
var execWrappers = map[string]execWrap{
	"uv":               {subs: []string{"run"}, valued: shOpts("--with --with-requirements --with-editable -p --python --project --directory --package --extra --group --only-group --env-file --index --index-url --extra-index-url --find-links -f --script --no-group --refresh-package --reinstall-package --upgrade-package -P --config-file --cache-dir --color --python-preference --link-mode --resolution --prerelease --exclude-newer --keyring-provider --index-strategy")},
	"uvx":              {valued: shOpts("--with --with-requirements --with-editable --from -p --python --index --index-url --extra-index-url --find-links -f --env-file --cache-dir --color")},
	"poetry":           {subs: []string{"run"}, valued: shOpts("-C --directory -P --project")},
	"pipenv":           {subs: []string{"run"}, valued: shOpts("--python")},
	"pdm":              {subs: []string{"run"}, valued: shOpts("-p --project")},
	"hatch":            {subs: []string{"run"}, valued: shOpts("-e --env")},
	"rye":              {subs: []string{"run"}, valued: shOpts("--pyproject")},
	"conda":            {subs: []string{"run"}, valued: shOpts("-n --name -p --prefix --cwd")},
	"mamba":            {subs: []string{"run"}, valued: shOpts("-n --name -p --prefix --cwd")},
	"micromamba":       {subs: []string{"run"}, valued: shOpts("-n --name -p --prefix --cwd")},
	"bundle":           {subs: []string{"exec"}, valued: shOpts("--gemfile")},
	"npm":              {subs: []string{"exec", "x"}, valued: shOpts("-p --package -w --workspace -c --call --prefix"), shell: shOpts("-c --call")},
	"npx":              {valued: shOpts("-p --package -c --call"), shell: shOpts("-c --call"), noCmd: true},
	"nix-shell":        {valued: shOpts("--run --command -p --packages -A --attr -I --arg --argstr --option -j --max-jobs"), shell: shOpts("--run --command"), noCmd: true},
	"nix":              {subs: []string{"develop", "shell"}, valued: shOpts("-c --command --override-input --profile -I --option --arg --argstr"), rest: shOpts("-c --command"), noCmd: true},
	"pnpm":             {subs: []string{"exec", "dlx"}, valued: shOpts("-C --dir --filter -F --workspace-concurrency")},
	"yarn":             {subs: []string{"exec", "dlx"}, valued: shOpts("--cwd -p --package")},
	"bunx":             {valued: shOpts("-p --package --bun")},
	"direnv":           {subs: []string{"exec"}, skip: 1},
	"asdf":             {subs: []string{"exec"}},
	"mise":             {subs: []string{"exec", "x"}, valued: shOpts("-C --cd -E --env -j --jobs")},
	"rtx":              {subs: []string{"exec", "x"}, valued: shOpts("-C --cd")},
	"rbenv":            {subs: []string{"exec"}},
	"pyenv":            {subs: []string{"exec"}},
	"nodenv":           {subs: []string{"exec"}},
	"goenv":            {subs: []string{"exec"}},
	"opam":             {subs: []string{"exec"}, valued: shOpts("--switch --root")},
	"stack":            {subs: []string{"exec"}, valued: shOpts("--stack-yaml --resolver --package")},
	"cabal":            {subs: []string{"exec"}, valued: shOpts("--project-file")},
	"devbox":           {subs: []string{"run"}, valued: shOpts("-c --config -e --env --env-file")},
	"aws-vault":        {subs: []string{"exec"}, skip: 1, valued: shOpts("-d --duration -t --mfa-token -n --region")},
	"op":               {subs: []string{"run"}, valued: shOpts("--env-file --account")},
	"doppler":          {subs: []string{"run"}, valued: shOpts("-p --project -c --config --command"), shell: shOpts("--command")},
	"infisical":        {subs: []string{"run"}, valued: shOpts("--env --projectId --path --command"), shell: shOpts("--command")},
	"chamber":          {subs: []string{"exec"}, valued: shOpts("-b --backend")},
	"dotenv":           {valued: shOpts("-e -v -c")},
	"gosu":             {skip: 1},
	"su-exec":          {skip: 1},
	"s6-setuidgid":     {skip: 1},
	"chpst":            {valued: shOpts("-u -U -b -e -n -l -L -m -d -o -p -f -c -r -t")},
	"setpriv":          {valued: shOpts("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule")},
	"runcon":           {valued: shOpts("-u --user -r --role -t --type -l --range")},
	"cgexec":           {valued: shOpts("-g")},
	"trickle":          {valued: shOpts("-d -u -w -t -l -n")},
	"tini":             {valued: shOpts("-p -e")},
	"dumb-init":        {valued: shOpts("-r --rewrite")},
	"eatmydata":        {},
	"unbuffer":         {},
	"tsocks":           {},
	"with-contenv":     {},
	"ssh-agent":        {valued: shOpts("-a -E -t -P -O")},
	"dbus-run-session": {valued: shOpts("--config-file --dbus-daemon")},
	"dbus-launch":      {valued: shOpts("--config-file")},
	"valgrind":         {},
	"numactl":          {valued: shOpts("-N --cpunodebind -m --membind -C --physcpubind -i --interleave -p --preferred -P --preferred-many -w --weighted-interleave")},
	"prlimit":          {valued: shOpts("-p --pid -o --output")},
	"cpulimit":         {valued: shOpts("-l --limit -p --pid -e --exe -c --cpu")},
	"mpirun":           {valued: shOpts("-n -np -c --np --host -H --hostfile --machinefile -x --map-by --bind-to --rank-by")},
	"mpiexec":          {valued: shOpts("-n -np -c --np --host -H --hostfile --machinefile -x --map-by --bind-to")},
	"srun":             {valued: shOpts("-n --ntasks -N --nodes -p --partition -t --time -J --job-name -A --account -c --cpus-per-task --mem -G --gpus -o --output -e --error")},
	"nsjail":           {valued: shOpts("-C --config -c --chroot -u --user -g --group -H --hostname -D --cwd -R --bindmount_ro -B --bindmount -m --mount -t --time_limit -E --env")},
	"entr":             {},
	"toybox":           {},
	"schedtool":        {valued: shOpts("-a -p -M -n")},
}

// hExecWrap reads a program of execWrappers as the command it runs. Its
// options before the command are not all listed, and one not listed may
// take a value: each place the command may start is read (at most
// execWrapMaxStarts; more is a command not known, code that runs unread),
// so that uv run --python 3.12 rm -rf ~ reads rm -rf ~ whatever --python
// takes.
func hExecWrap(c *shCall) *shStream {
	w := execWrappers[c.prog]
	args := c.args()
	i := 0
	if len(w.subs) > 0 {
		// Options of the program itself come first (uv --quiet run …).
		for i < len(args) && args[i].known && strings.HasPrefix(args[i].val, "-") {
			if w.valued[args[i].val] {
				i++
			}
			i++
		}
		if i >= len(args) || !args[i].known || !slices.Contains(w.subs, args[i].val) {
			return c.filter()
		}
		i++
	}
	for j := i; j < len(args); j++ {
		a := args[j]
		if !a.known || !strings.HasPrefix(a.val, "-") {
			if a.known && agentOfPackage(a.val) != "" {
				// npx @anthropic-ai/claude-code ARGS runs claude ARGS.
				return c.r.run(append([]sword{shLit(agentOfPackage(a.val))}, args[j+1:]...), c.in, c.env)
			}
			if w.noCmd || a.known && a.val == "--" {
				continue
			}
			break // the command: its own options follow
		}
		name, val, hasVal := strings.Cut(a.val, "=")
		switch {
		case w.shell[name]:
			v := sword{arg: a.arg, val: val, known: a.known}
			if !hasVal && j+1 < len(args) {
				j++
				v = args[j]
			}
			c.shellText(c.prog, v, nil)
		case w.rest[name] && j+1 < len(args):
			return c.r.run(args[j+1:], c.in, c.env)
		case w.valued[name] && !hasVal:
			j++
		}
	}
	if w.noCmd {
		return c.filter()
	}
	starts := execWrapStarts(args[i:], w.valued, w.skip)
	if len(starts) > execWrapMaxStarts {
		c.r.s.opaque("program", "", "%s: the command it runs is not known statically (%d readings of its options)", c.prog, len(starts))
		return nil
	}
	var out *shStream
	ran := false
	for _, s := range starts {
		if s := i + s; s < len(args) {
			out, ran = c.r.run(args[s:], c.in, c.env), true
		}
	}
	if !ran {
		return c.filter() // no command: the program's own output (ssh-agent -s)
	}
	return out
}

// execWrapMaxStarts bounds the readings of a wrapper's command.
const execWrapMaxStarts = 4

// execWrapStarts returns the indexes of args where the command may start:
// after "--"; after the options, each option not listed being read both
// as a flag and as taking the next word; after skip operands.
func execWrapStarts(args []sword, valued shOptSet, skip int) []int {
	var out []int
	seen := map[int]bool{}
	var walk func(p, skipped, depth int)
	walk = func(p, skipped, depth int) {
		if p >= len(args) || depth > 8 {
			return
		}
		a := args[p]
		switch {
		case a.known && a.val == "--":
			if !seen[p+1] {
				seen[p+1] = true
				out = append(out, p+1)
			}
		case a.known && strings.HasPrefix(a.val, "-") && len(a.val) > 1:
			if valued[a.val] {
				walk(p+2, skipped, depth+1)
				return
			}
			walk(p+1, skipped, depth+1)
			if !strings.Contains(a.val, "=") {
				walk(p+2, skipped, depth+1) // an option not listed may take a value
			}
		case skipped < skip:
			walk(p+1, skipped+1, depth+1)
		default:
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			// mise x node@20 -- CMD: words before a later "--" may be the
			// wrapper's own (a tool, a profile); the command after it is
			// read too.
			for q := p + 1; q < len(args); q++ {
				if args[q].known && args[q].val == "--" {
					if !seen[q+1] {
						seen[q+1] = true
						out = append(out, q+1)
					}
					break
				}
			}
		}
	}
	walk(0, 0, 0)
	return out
}

// nodeScriptRunners are the package managers whose "run NAME" runs the
// script NAME of the working directory's package.json through sh, and
// the subcommand words that do it (yarn and pnpm also run a script named
// as their first word; bun only with run).
var nodeScriptRunners = map[string][]string{
	"npm": {"run", "run-script", "rum", "urn"}, "pnpm": {"run"}, "yarn": {"run"}, "bun": {"run"},
}

// hNodePM reads npm, pnpm, yarn and bun: run NAME runs the package.json
// script NAME (and npm's preNAME and postNAME) as sh does, read from what
// the action wrote to package.json or from the disk; pkg set
// scripts.NAME=CMD defines a command a later run runs, read now; exec,
// dlx and x run the command in their remaining words (hExecWrap).
func hNodePM(c *shCall) *shStream {
	args := c.args()
	if c.prog == "bun" {
		// bun is also a JavaScript runtime (bun -e, bun run FILE): run
		// NAME reads package.json's script NAME, and the runtime's reader
		// reads the rest.
		if len(args) > 1 && args[0].known && args[0].val == "run" && args[1].known &&
			!strings.ContainsAny(args[1].val, "./") && !strings.HasPrefix(args[1].val, "-") {
			c.packageScripts(args[1])
		}
		return hNode(c)
	}
	i := 0
	for i < len(args) && args[i].known && strings.HasPrefix(args[i].val, "-") {
		i++
	}
	if i >= len(args) || !args[i].known {
		return c.filter()
	}
	sub := args[i].val
	if lifecycle, ok := nodeLifecycle[sub]; ok && c.prog != "bun" {
		// npm test, npm start, yarn test: the script of that name.
		c.packageScripts(shLit(lifecycle))
		return c.filter()
	}
	switch {
	case slices.Contains(nodeScriptRunners[c.prog], sub) && i+1 < len(args):
		c.packageScripts(args[i+1])
		return c.filter()
	case (c.prog == "yarn" || c.prog == "pnpm") && !strings.Contains(sub, "/") && !slices.Contains(nodePMCommands, sub):
		c.packageScripts(args[i])
		return c.filter()
	case c.prog == "npm" && sub == "pkg" && i+2 < len(args) && args[i+1].known && args[i+1].val == "set":
		for _, kv := range args[i+2:] {
			if k, v, ok := strings.Cut(kv.val, "="); ok && kv.known && strings.HasPrefix(k, "scripts.") {
				if slices.Contains(npmLifecycle, strings.TrimPrefix(k, "scripts.")) {
					c.r.s.autorunShell("lifecycle", "", v) // run by npm install itself
					continue
				}
				c.r.s.shellIn(v, nil)
			} else if !kv.known {
				c.r.s.opaque("sh", outProg(kv), "npm pkg set of a value not known statically: %s", kv.arg)
			}
		}
		return c.filter()
	}
	if _, ok := execWrappers[c.prog]; ok {
		return hExecWrap(c)
	}
	return c.filter()
}

// nodeLifecycle are the subcommands that run the package.json script of
// the same name (npm's aliases included).
var nodeLifecycle = map[string]string{"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}

// nodePMCommands are yarn's and pnpm's own commands (anything else as a
// first word is a script name).
var nodePMCommands = []string{"add", "install", "i", "remove", "rm", "up", "upgrade", "update", "init", "create", "dlx", "exec",
	"run", "test", "t", "publish", "pack", "link", "unlink", "why", "list", "ls", "info", "outdated", "audit", "cache", "config",
	"set", "workspace", "workspaces", "import", "store", "prune", "rebuild", "patch", "patch-commit", "login", "logout",
	"version", "versions", "help", "global", "bin", "root", "node", "env", "licenses", "dedupe", "fetch", "setup", "server",
	"start", "stop", "restart", "plugin", "constraints", "explain", "npm", "search", "owner", "tag", "unplug", "up-interactive"}

// packageScripts reads the package.json script a run names, with npm's
// pre and post scripts.
func (c *shCall) packageScripts(name sword) {
	if !name.known {
		c.r.s.opaque("sh", outProg(name), "%s runs a package.json script not known statically: %s", c.prog, name.arg)
		return
	}
	p := c.r.path("package.json", false)
	_, written := c.r.written[p]
	text, ok := c.r.batchFile(p)
	if !ok {
		return // not seen: as a script the harness cannot see
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if err := json.Unmarshal([]byte(text), &pkg); err != nil {
		c.r.s.opaque("sh", "", "%s runs a script of %s, which is not JSON the analysis reads", c.prog, p)
		return
	}
	if !written {
		c.r.s.onDisk++ // the project's own scripts, as a script on disk
		defer func() { c.r.s.onDisk-- }()
	}
	for _, n := range []string{"pre" + name.val, name.val, "post" + name.val} {
		if cmd, ok := pkg.Scripts[n]; ok && cmd != "" {
			c.r.s.shellIn(cmd, nil)
		}
	}
}
