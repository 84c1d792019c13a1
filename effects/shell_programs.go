package effects

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// shHandler applies what a program does to its operands and returns what it
// writes on its standard output.
type shHandler func(c *shCall) *shStream

// shPrograms is the table of programs the shell reader knows. A program not
// in it still yields its Run (with argv), and its output is a filter of
// its input.
var shPrograms map[string]shHandler

func init() {
	shPrograms = map[string]shHandler{
		// files
		"rm": hRm, "rmdir": hDeleteOps, "unlink": hDeleteOps, "shred": hShred,
		"cp": hCopy, "mv": hMove, "install": hInstall, "ln": hLn, "link": hLn,
		"mkdir": hCreateOps, "touch": hTouch, "mkfifo": hCreateOps, "mknod": hMknod,
		"truncate": hTruncate, "tee": hTee, "dd": hDd,
		"mkfs": hMkfs, "mke2fs": hMkfs, "mkswap": hMkfs, "wipefs": hWipefs, "mkdosfs": hMkfs, "mkntfs": hMkfs,
		"sed": hSed, "chmod": hChmod, "chown": hChown, "chgrp": hChown,
		"setfacl": hSetfacl, "setcap": hSetcap, "chattr": hChattr,
		"tar": hTar, "zip": hZip, "unzip": hUnzip, "7z": h7z, "7za": h7z,
		"gzip": hCompress, "gunzip": hCompress, "bzip2": hCompress, "bunzip2": hCompress,
		"xz": hCompress, "unxz": hCompress, "zstd": hCompress, "lz4": hCompress,
		"zcat": hCompress, "bzcat": hReadOps, "xzcat": hReadOps,
		"cat": hCat, "tac": hReadOps, "less": hReadOps, "more": hReadOps, "nl": hReadOps,
		"head": hHeadTail, "tail": hHeadTail, "strings": hReadOps, "od": hReadOps, "hexdump": hReadOps,
		"wc": hReadOps, "uniq": hReadOps, "md5sum": hReadOps, "sha1sum": hReadOps, "sha256sum": hReadOps,
		"sha512sum": hReadOps, "cksum": hReadOps, "b2sum": hReadOps, "file": hReadOps,
		"cmp": hReadOps, "comm": hReadOps, "paste": hReadOps, "fold": hReadOps, "fmt": hReadOps,
		"column": hReadOps, "shuf": hShuf, "expand": hReadOps, "look": hReadOps,
		"diff": hDiff, "sort": hSort, "cut": hCut, "split": hReadOps, "iconv": hIconv,
		"grep": hGrep, "egrep": hGrep, "fgrep": hGrep, "rg": hGrep, "ag": hGrep, "zgrep": hGrep,
		"awk": hAwk, "gawk": hAwk, "mawk": hAwk, "nawk": hAwk, "jq": hJq,
		"vi": hEdit, "vim": hEdit, "nvim": hEdit, "nano": hEdit, "emacs": hEdit, "ed": hEdit,
		"ex": hEdit, "view": hEdit, "vimdiff": hEdit, "nvi": hEdit, "red": hEdit,
		"base64": hBase64, "base32": hBase64, "xxd": hXxd, "rev": hRev, "tr": hTr,
		"echo": hEcho, "printf": hPrintf, "openssl": hOpenssl,
		"find": hFind, "xargs": hXargs,
		// network
		"curl": hCurl, "wget": hWget, "aria2c": hAria2c, "nc": hNc, "ncat": hNc, "netcat": hNc, "nc.traditional": hNc,
		"nc.openbsd": hNc, "socat": hSocat, "telnet": hTelnet, "ssh": hSSH, "scp": hScp,
		"rsync": hRsync, "sftp": hSftp, "ftp": hFtp, "lftp": hFtp, "tftp": hTftp, "whois": hWhois,
		"smbclient": hSmbclient, "lwp-download": hLwpDownload,
		"dig": hDNS, "nslookup": hDNS, "host": hDNS, "drill": hDNS,
		"aws": hObjectCopy, "gsutil": hObjectCopy, "gcloud": hObjectCopy, "azcopy": hObjectCopy, "rclone": hObjectCopy,
		"http": hHttpie, "https": hHttpie, "xh": hHttpie, "xhs": hHttpie,
		"ping": hPing, "ping6": hPing, "traceroute": hPing,
		// processes
		"kill": hKill, "pkill": hPkill, "killall": hPkill, "skill": hPkill, "slay": hSlay, "killall5": hKillall5,
		"pgrep": hPgrep, "pidof": hPgrep, "ps": hPs,
		"systemctl": hSystemctl, "service": hService,
		// privileges
		"sudo": hSudo, "doas": hSudo, "su": hSu, "runuser": hRunuser, "pkexec": hPkexec,
		"useradd": hPriv, "adduser": hPriv, "usermod": hPriv, "userdel": hPriv, "deluser": hPriv,
		"groupadd": hPriv, "groupmod": hPriv, "gpasswd": hPriv, "passwd": hPriv, "chpasswd": hPriv,
		"visudo": hPriv, "chsh": hPriv, "newgrp": hPriv, "sg": hSg,
		// wrappers
		"env": hEnv, "nice": hWrap(shOpts("-n --adjustment"), 0), "nohup": hWrap(nil, 0),
		"timeout": hWrap(shOpts("-s --signal -k --kill-after"), 1),
		"stdbuf":  hWrap(shOpts("-i -o -e --input --output --error"), 0),
		"ionice":  hWrap(shOpts("-c -n -p -P -u --class --classdata"), 0),
		"chrt":    hWrap(shOpts("-T -P -D"), 1), "taskset": hTaskset,
		"setsid": hWrap(nil, 0), "time": hWrap(shOpts("-o -f --output --format"), 0),
		"command": hCommand, "builtin": hWrap(nil, 0), "exec": hWrap(shOpts("-a"), 0),
		"busybox": hBusybox, "httpd": hHttpd, "chroot": hChroot, "unshare": hWrap(shOpts("--map-user --map-group --setuid --setgid"), 0),
		"nsenter":  hWrap(shOpts("-t --target -S -G --setuid --setgid"), 0),
		"strace":   hTrace(shOpts("-o -e -p -s -u -E -P -I -a -b -X -O -S --output")),
		"ltrace":   hTrace(shOpts("-o -e -p -s -u -n -a -l -x -L --output")),
		"fakeroot": hWrap(nil, 0), "firejail": hWrap(nil, 0), "torsocks": hWrap(nil, 0),
		"proxychains": hWrap(shOpts("-f"), 0), "proxychains4": hWrap(shOpts("-f"), 0),
		"xvfb-run": hWrap(shOpts("-n -s -f -e -p"), 0), "caffeinate": hWrap(shOpts("-t -w"), 0),
		"rlwrap": hRlwrap, "nocache": hWrap(nil, 0), "catchsegv": hWrap(nil, 0),
		"faketime": hWrap(shOpts("-f"), 1), "systemd-run": hWrap(shOpts("-u --unit -p --property -M --machine --description --slice -E --setenv --uid --gid --working-directory"), 0),
		"watch": hWatch, "parallel": hParallel, "flock": hFlock, "script": hScript,
		"screen": hScreen, "tmux": hTmux, "at": hAt, "batch": hAt,
		// shell builtins
		"pwd": hPwd, "printenv": hPrintenv, "realpath": hPathOut, "readlink": hPathOut, "dirname": hPathOut, "basename": hPathOut, "ls": hLs,
		"cd": hCd, "pushd": hCd, "popd": hPopd, "alias": hAlias, "unalias": hUnalias,
		"eval": hEval, "source": hSource, ".": hSource, "trap": hTrap, "unset": hUnset,
		"read": hRead, "mapfile": hRead, "readarray": hRead, "set": hSet, "shift": hShift,
		"export": hExport, "declare": hExport, "typeset": hExport, "local": hExport, "readonly": hExport,
		"crontab": hCrontab, "git": hGit, "shopt": hShopt,
		"lua": hForeign, "luajit": hForeign, "tclsh": hForeign, "wish": hForeign, "jjs": hForeign,
		"jrunscript": hForeign, "julia": hForeign, "expect": hForeign, "octave": hForeign, "octave-cli": hForeign,
		"Rscript": hForeign, "groovy": hForeign, "racket": hForeign, "guile": hForeign, "elixir": hForeign, "sbcl": hForeign,
		"gcc": hCompile, "g++": hCompile, "cc": hCompile, "c++": hCompile, "clang": hCompile, "clang++": hCompile,
		"tcc": hCompile, "gfortran": hCompile, "gccgo": hCompile, "rustc": hCompile, "ld": hCompile, "ld.lld": hCompile,
		"ld.gold": hCompile, "ld.bfd": hCompile, "as": hCompile, "nasm": hCompile, "yasm": hCompile, "make": hMake, "gmake": hMake, "socket": hForeign, "ztcp": hForeign,
		"powershell": hForeign, "pwsh": hForeign, "osascript": hForeign, "gdb": hGdb, "go": hGo, "sqlite3": hSqlite, "sqlite": hSqlite, "unshadow": hReadOps, "R": hForeign,
	}
	for _, s := range shellNames {
		shPrograms[s] = hShell
	}
	for name := range codingAgents {
		shPrograms[name] = hAgent
	}
	for name := range nodeScriptRunners {
		shPrograms[name] = hNodePM
	}
	for name := range execWrappers {
		if _, ok := shPrograms[name]; !ok {
			shPrograms[name] = hExecWrap
		}
	}
}

// shellNames are the programs read as POSIX/bash shells.
var shellNames = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "fish", "ksh93", "lksh", "oksh", "csh", "tcsh"}

// shInterpreter returns the interpreter family a program's base name
// names, with or without a version (python3.12 is "python"), or "": the
// names python, pypy, node, nodejs, perl, ruby, php, deno and bun, then
// optionally a digit followed by digits and dots. It is the regular
// expression ^(python|…|bun)([0-9][0-9.]*)?$ written out, for it runs on
// every program that has no handler of its own.
func shInterpreter(base string) string {
	i := 0
	for i < len(base) && (base[i] < '0' || base[i] > '9') {
		i++
	}
	for j := i; j < len(base); j++ {
		if (base[j] < '0' || base[j] > '9') && base[j] != '.' {
			return ""
		}
	}
	switch name := base[:i]; name {
	case "python", "pypy", "node", "nodejs", "perl", "ruby", "php", "deno", "bun":
		return name
	}
	return ""
}

// shLookupProgram returns the handler of a base name (python3.12 is
// python's, mkfs.ext4 has none).
func shLookupProgram(base string) shHandler {
	if h, ok := shPrograms[base]; ok {
		return h
	}
	if strings.HasPrefix(base, "mkfs.") {
		return hMkfs
	}
	if m := shInterpreter(base); m != "" {
		switch m {
		case "python", "pypy":
			return hPython
		case "node", "nodejs", "deno", "bun":
			return hNode
		case "perl":
			return hPerl
		case "ruby":
			return hRuby
		case "php":
			return hPhp
		}
	}
	return nil
}

// ---- files ----

var rmOpts = shOpts("--interactive --preserve-root")

func hRm(c *shCall) *shStream {
	p := c.parseOpts(c.args(), rmOpts, false)
	rec := p.has("-r", "-R", "--recursive")
	for _, w := range p.ops {
		c.file(Delete, w, func(e *Effect) { e.Recursive = e.Recursive || rec })
	}
	return nil
}

func hDeleteOps(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	c.files(Delete, p.ops, false)
	return nil
}

func hShred(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-n --iterations -s --size --random-source --remove"), false)
	c.files(Write, p.ops, false)
	if p.has("-u", "--remove") {
		c.files(Delete, p.ops, false)
	}
	return nil
}

var cpOpts = shOpts("-t --target-directory -S --suffix")

func splitCopy(c *shCall, p *shParsed) (srcs []sword, dst sword, intoDir, ok bool) {
	if t, has := p.get("-t", "--target-directory"); has {
		return p.ops, t, true, len(p.ops) > 0
	}
	if len(p.ops) < 2 {
		if len(p.ops) == 1 {
			c.r.s.unknown(false, "%s with one operand", c.prog)
		}
		return nil, sword{}, false, false
	}
	srcs, dst = p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1]
	anyGlob := false
	for _, s := range srcs {
		anyGlob = anyGlob || s.glob
	}
	intoDir = !p.has("-T", "--no-target-directory") && (len(srcs) > 1 || anyGlob || strings.HasSuffix(dst.val, "/") || dst.val == "." || dst.val == "..")
	return srcs, dst, intoDir, true
}

func hCopy(c *shCall) *shStream {
	p := c.parseOpts(c.args(), cpOpts, false)
	rec := p.has("-r", "-R", "-a", "--recursive", "--archive")
	srcs, dst, into, ok := splitCopy(c, p)
	if !ok {
		return nil
	}
	for _, s := range srcs {
		c.file(Read, s, func(e *Effect) { e.Recursive = e.Recursive || rec })
		c.file(Write, c.dest(s, dst, into), func(e *Effect) { e.Recursive = e.Recursive || rec })
	}
	return nil
}

func hMove(c *shCall) *shStream {
	p := c.parseOpts(c.args(), cpOpts, false)
	srcs, dst, into, ok := splitCopy(c, p)
	if !ok {
		return nil
	}
	for _, s := range srcs {
		d := c.dest(s, dst, into)
		if !d.known {
			// The source leaves its place wherever it goes: a move with no
			// destination, judged by its source (mv /etc/passwd "$D").
			c.r.s.unknown(false, "mv: destination not known statically: %s", d.arg)
			c.file(Move, s, nil)
			continue
		}
		dp := c.r.path(d.val, true)
		c.file(Move, s, func(e *Effect) { e.Dest = dp })
	}
	return nil
}

func hInstall(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-m --mode -o --owner -g --group -t --target-directory -S --suffix -Z --context"), false)
	mode, hasMode := p.get("-m", "--mode")
	if p.has("-d", "--directory") {
		c.files(Create, p.ops, false)
		if hasMode {
			for _, w := range p.ops {
				c.chmod(w, mode.val, false)
			}
		}
		return nil
	}
	srcs, dst, into, ok := splitCopy(c, p)
	if !ok {
		return nil
	}
	for _, s := range srcs {
		c.file(Read, s, nil)
		d := c.dest(s, dst, into)
		c.file(Write, d, nil)
		if hasMode {
			c.chmod(d, mode.val, false)
		}
	}
	return nil
}

func hLn(c *shCall) *shStream {
	p := c.parseOpts(c.args(), cpOpts, false)
	sym := p.has("-s", "--symbolic")
	var targets []sword
	var link sword
	into := false
	if t, has := p.get("-t", "--target-directory"); has {
		targets, link, into = p.ops, t, true
	} else if len(p.ops) == 1 {
		targets, link, into = p.ops, shLit("."), true
	} else if len(p.ops) >= 2 {
		targets, link = p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1]
		into = len(targets) > 1 || strings.HasSuffix(link.val, "/")
	}
	for _, t := range targets {
		if !t.known {
			// The link is made where it is named whatever it points to
			// (ln -sf "$T" /etc/passwd replaces /etc/passwd).
			c.r.s.unknown(false, "ln: link target not known statically: %s", t.arg)
			if l := c.dest(t, link, into); l.known && !into {
				c.file(Create, l, nil)
			}
			continue
		}
		l := c.dest(t, link, into)
		dest := t.val
		if sym && !strings.HasPrefix(dest, "/") && l.known {
			// A relative symbolic link points from the link's directory.
			dir := c.r.s.resolve(l.val)
			if i := strings.LastIndexByte(dir, '/'); i >= 0 {
				dest = dir[:i+1] + dest
			}
		}
		dp := c.r.path(dest, false)
		c.file(Create, l, func(e *Effect) { e.Dest = dp })
		if sym && l.known {
			// Paths through this link later in the script reach dp.
			if c.r.links == nil {
				c.r.links = map[string]string{}
			}
			c.r.links[c.r.path(l.val, true)] = dp
		}
	}
	return nil
}

func hCreateOps(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-m --mode -Z --context"), false)
	c.files(Create, p.ops, false)
	if m, ok := p.get("-m", "--mode"); ok {
		for _, w := range p.ops {
			c.chmod(w, m.val, false)
		}
	}
	return nil
}

func hMknod(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-m --mode -Z --context"), false)
	if len(p.ops) > 0 {
		c.file(Create, p.ops[0], nil)
	}
	return nil
}

func hTouch(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-d --date -t -r --reference"), false)
	c.files(Create, p.ops, false)
	return nil
}

func hTruncate(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-s --size -r --reference"), false)
	c.files(Write, p.ops, false)
	return nil
}

func hTee(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("--output-error"), false)
	app := p.has("-a", "--append")
	for _, w := range p.ops {
		c.file(Write, w, func(e *Effect) { e.Append = app })
		if w.known {
			c.r.remember(c.r.path(w.val, false), c.in, app)
		}
	}
	return c.in
}

func hDd(c *shCall) *shStream {
	var from []string
	out := true
	for _, w := range c.args() {
		if !w.known {
			c.r.s.unknown(false, "dd: operand not known statically: %s", w.arg)
			continue
		}
		k, v, ok := strings.Cut(w.val, "=")
		if !ok {
			continue
		}
		switch k {
		case "if":
			c.file(Read, shLit(v), nil)
			from = append(from, c.paths([]sword{shLit(v)})...)
		case "of":
			c.file(Write, shLit(v), nil)
			out = false
		}
	}
	if !out {
		return nil
	}
	return c.filter(from...)
}

// hBusybox runs the applet it names, as any wrapper; its httpd applet is
// read as a file server (Apache's httpd, the same name, has no such
// options).
func hBusybox(c *shCall) *shStream {
	args := c.args()
	if len(args) > 0 && args[0].known && args[0].val == "httpd" {
		c.r.s.add(Effect{Kind: Run, Program: "httpd", Argv: shArgvOf(args)})
		busyboxHttpd(&shCall{r: c.r, prog: "httpd", ws: args, in: c.in, env: c.env})
		return nil
	}
	return hWrap(nil, 0)(c)
}

// hHttpd reads busybox's httpd when its options show it (-p [IP:]PORT);
// any other httpd (Apache's) is judged by its argv.
func hHttpd(c *shCall) *shStream {
	if c.parseOpts(c.args(), busyboxHttpdOpts, false).has("-p") {
		busyboxHttpd(c)
		return nil
	}
	return c.filter()
}

var busyboxHttpdOpts = shOpts("-p -h -c -r -u -i -e -d -m -M")

// busyboxHttpd: busybox httpd [-p [IP:]PORT] [-h HOME] serves HOME (the
// working directory by default) on every interface unless -p names one.
func busyboxHttpd(c *shCall) {
	p := c.parseOpts(c.args(), busyboxHttpdOpts, false)
	if p.has("-d", "-e", "-m") { // decode, encode or hash a string: no server
		return
	}
	host, port := "", "80"
	if v, ok := p.get("-p"); ok {
		port = v.arg
		if h, pt, found := strings.Cut(v.arg, ":"); found {
			host, port = h, pt
		}
	}
	c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	home := shLit(".")
	if v, ok := p.get("-h"); ok {
		home = v
	}
	c.file(Read, home, func(e *Effect) { e.Recursive = true })
}

// mkfsOpts are the options that take a value in most of the mkfs family
// (a label, a type, a size); one that takes a value in one tool and none
// in another (mke2fs -n, mkfs.fat -n NAME) is read as a flag, so its value
// counts as one more operand.
var mkfsOpts = shOpts("-L --label -t --type -T -U --uuid -E -O -b -N -m -i -I -l -d -C -G -g -o -M")

// hMkfs reads mkfs, mkfs.TYPE, mke2fs and mkswap: each operand is
// written (a device, or an image file; the source directory of
// mkfs.erofs or mkfs.cramfs is counted too, which errs on the side of a
// write), so the rules see which device or file is overwritten.
func hMkfs(c *shCall) *shStream {
	p := c.parseOpts(c.args(), mkfsOpts, false)
	c.files(Write, p.ops, false)
	return nil
}

var sedOpts = shOpts("-e --expression -f --file -l --line-length")

func hSed(c *shCall) *shStream {
	args := c.args()
	inPlace := false
	var rest []sword
	for _, w := range args {
		if w.known && (strings.HasPrefix(w.val, "-i") || strings.HasPrefix(w.val, "--in-place") ||
			(len(w.val) > 1 && w.val[0] == '-' && w.val[1] != '-' && strings.Contains(w.val, "i") && !strings.ContainsAny(w.val, "ef"))) {
			inPlace = true
			continue
		}
		rest = append(rest, w)
	}
	p := c.parseOpts(rest, sedOpts, false)
	files := p.ops
	if !p.has("-e", "--expression", "-f", "--file") && len(files) > 0 {
		files = files[1:]
	}
	for _, f := range p.all("-f", "--file") {
		c.file(Read, f, nil)
		c.programFile(f)
	}
	scripts := p.all("-e", "--expression")
	if len(scripts) == 0 && len(p.ops) > 0 {
		scripts = p.ops[:1]
	}
	for _, sc := range scripts {
		c.sedScript(sc)
	}
	c.files(Read, files, false)
	if inPlace {
		c.files(Write, files, false)
		return nil
	}
	return c.filter(c.paths(files)...)
}

// chmod records a mode change, and a Privilege when it sets the setuid or
// setgid bit.
func (c *shCall) chmod(w sword, mode string, rec bool) {
	c.file(Chmod, w, func(e *Effect) { e.detail().Mode = mode; e.Recursive = e.Recursive || rec })
	if shSetuidMode(mode) && w.known {
		c.r.s.add(Effect{Kind: Privilege, Program: c.prog, Path: c.r.path(w.val, false), Detail: &Detail{Mode: mode}})
	}
}

func shSetuidMode(m string) bool {
	if m == "" {
		return false
	}
	if m[0] >= '0' && m[0] <= '7' {
		return len(m) >= 4 && (m[len(m)-4]-'0')&6 != 0
	}
	for _, clause := range strings.Split(m, ",") {
		who, perm, found := strings.Cut(clause, "+")
		if !found {
			who, perm, found = strings.Cut(clause, "=")
		}
		if found && strings.Contains(perm, "s") && (who == "" || strings.ContainsAny(who, "uga")) {
			return true
		}
	}
	return false
}

var modeRE = regexp.MustCompile(`^([ugoa]*[-+=][rwxXstugo]*,?)+$|^[0-7]{3,4}$`)

func hChmod(c *shCall) *shStream {
	var mode string
	var ops []sword
	rec := false
	ref := false
	args := c.args()
	for i := 0; i < len(args); i++ {
		w := args[i]
		a := w.val
		switch {
		case !w.known:
			ops = append(ops, w)
		case a == "-R" || a == "--recursive":
			rec = true
		case strings.HasPrefix(a, "--reference"):
			ref = true
			if !strings.Contains(a, "=") {
				i++
			}
		case mode == "" && !ref && modeRE.MatchString(a):
			mode = a
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Trim(a[1:], "Rvcf") == "":
			rec = rec || strings.Contains(a, "R")
		case strings.HasPrefix(a, "--"):
		default:
			ops = append(ops, w)
		}
	}
	for _, w := range ops {
		c.chmod(w, mode, rec)
	}
	return nil
}

func hChown(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("--reference --from"), false)
	rec := p.has("-R", "--recursive")
	ops := p.ops
	owner := ""
	if _, ref := p.get("--reference"); !ref && len(ops) > 0 {
		owner, ops = ops[0].arg, ops[1:]
	}
	for _, w := range ops {
		c.file(Chown, w, func(e *Effect) { e.detail().Mode = owner; e.Recursive = e.Recursive || rec })
	}
	return nil
}

func hSetfacl(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-m --modify -x --remove -M --modify-file -X --remove-file --set --set-file"), false)
	spec, _ := p.get("-m", "--modify", "-x", "--remove", "--set")
	rec := p.has("-R", "--recursive")
	for _, w := range p.ops {
		c.file(Chmod, w, func(e *Effect) { e.detail().Mode = spec.arg; e.Recursive = e.Recursive || rec })
	}
	return nil
}

func hSetcap(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-n"), false)
	ops := p.ops
	if p.has("-r") {
		c.files(Chmod, ops, false)
		return nil
	}
	for i := 0; i+1 < len(ops); i += 2 {
		caps, f := ops[i], ops[i+1]
		c.file(Chmod, f, func(e *Effect) { e.detail().Mode = caps.arg })
		if f.known {
			c.r.s.add(Effect{Kind: Privilege, Program: "setcap", Path: c.r.path(f.val, false), Detail: &Detail{Mode: caps.arg}})
		}
	}
	return nil
}

func hChattr(c *shCall) *shStream {
	args := c.args()
	mode := ""
	rec := false
	var ops []sword
	for _, w := range args {
		switch {
		case w.known && w.val == "-R":
			rec = true
		case w.known && mode == "" && len(w.val) > 1 && (w.val[0] == '+' || w.val[0] == '-' || w.val[0] == '='):
			mode = w.val
		default:
			ops = append(ops, w)
		}
	}
	for _, w := range ops {
		c.file(Chmod, w, func(e *Effect) { e.detail().Mode = mode; e.Recursive = e.Recursive || rec })
	}
	return nil
}

func hReadOps(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-n -c --lines --bytes -w -s -t -N -j -A -B -C -e -f"), false)
	c.files(Read, p.ops, false)
	return c.filter(c.paths(p.ops)...)
}

// hShuf reads shuf: its operand is a file unless -e (words) or -i (a
// range) is given; -o writes the output to a file.
func hShuf(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-n --head-count -o --output -i --input-range --random-source"), false)
	var files []sword
	if !p.has("-e", "--echo", "-i", "--input-range") {
		files = p.ops
		c.files(Read, files, false)
	}
	for _, o := range p.all("-o", "--output") {
		c.file(Write, o, nil)
	}
	if p.has("-o", "--output") {
		return nil
	}
	return c.filter(c.paths(files)...)
}

func hHeadTail(c *shCall) *shStream {
	args := c.args()
	var rest []sword
	for _, w := range args {
		if w.known && len(w.val) > 1 && w.val[0] == '-' && strings.Trim(w.val[1:], "0123456789") == "" {
			continue // head -20
		}
		rest = append(rest, w)
	}
	p := c.parseOpts(rest, shOpts("-n -c --lines --bytes -s --sleep-interval --pid"), false)
	c.files(Read, p.ops, false)
	return c.filter(c.paths(p.ops)...)
}

func hCat(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	if len(p.ops) == 0 {
		return c.in
	}
	c.files(Read, p.ops, false)
	if len(p.ops) == 1 && p.ops[0].known {
		if p.ops[0].val == "-" {
			return c.in
		}
		if p.ops[0].out != nil {
			return p.ops[0].out
		}
		return &shStream{kind: sFile, path: c.r.path(p.ops[0].val, false)}
	}
	return c.filter(c.paths(p.ops)...)
}

func hDiff(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-x --exclude -X --exclude-from -I -L --label -F -C -U --from-file --to-file"), false)
	rec := p.has("-r", "--recursive")
	c.files(Read, p.ops, rec)
	return c.filter(c.paths(p.ops)...)
}

func hSort(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-k --key -t --field-separator -S --buffer-size -T --temporary-directory -o --output --files0-from --parallel --batch-size"), false)
	c.files(Read, p.ops, false)
	if o, ok := p.get("-o", "--output"); ok {
		c.file(Write, o, nil)
		return nil
	}
	return c.filter(c.paths(p.ops)...)
}

func hCut(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-d -f -c -b --delimiter --fields --characters --bytes --output-delimiter"), false)
	c.files(Read, p.ops, false)
	return c.filter(c.paths(p.ops)...)
}

func hIconv(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-f -t -o --from-code --to-code --output"), false)
	c.files(Read, p.ops, false)
	if o, ok := p.get("-o", "--output"); ok {
		c.file(Write, o, nil)
		return nil
	}
	return c.filter(c.paths(p.ops)...)
}

var grepOpts = shOpts("-e --regexp -f --file -m --max-count -A -B -C --after-context --before-context --context --include --exclude --exclude-dir --include-dir --label --color --colour -d --directories -D --devices --binary-files -g --glob -t --type -T --type-not --max-depth -j --threads --ignore-file -E --encoding --pre -M --max-columns --sort --sortr")

func hGrep(c *shCall) *shStream {
	args := c.args()
	// ripgrep's -E is an encoding, GNU grep's -E a flag.
	valued := grepOpts
	if c.prog != "rg" && c.prog != "ag" {
		valued = shOpts("-e --regexp -f --file -m --max-count -A -B -C --after-context --before-context --context --include --exclude --exclude-dir --label --color --colour -d --directories -D --devices --binary-files")
	}
	p := c.parseOpts(args, valued, false)
	files := p.ops
	if !p.has("-e", "--regexp", "-f", "--file") && len(files) > 0 {
		files = files[1:]
	}
	for _, f := range p.all("-f", "--file") {
		c.file(Read, f, nil)
	}
	rec := p.has("-r", "-R", "--recursive", "--dereference-recursive") || c.prog == "rg" || c.prog == "ag"
	if len(files) == 0 && rec {
		files = []sword{shLit(".")}
	}
	c.files(Read, files, rec)
	return c.filter(c.paths(files)...)
}

func hAwk(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-F -v -f --field-separator --assign --file -i --include -l --load -e --source"), false)
	ops := p.ops
	prog := ""
	if fs := p.all("-f", "--file"); len(fs) > 0 {
		for _, f := range fs {
			c.file(Read, f, nil)
			c.programFile(f)
		}
	} else if len(ops) > 0 {
		prog, ops = ops[0].val, ops[1:]
		if !p.ops[0].known {
			if codeHidden(p.ops[0]) {
				// No literal code at all (awk "$P"): the program, and
				// the commands its system() and pipes run, are unread.
				c.r.s.opaque(c.prog, outProg(p.ops[0]), "%s program not known statically: %s", c.prog, p.ops[0].arg)
			} else {
				c.r.s.unknown(false, "%s program not known statically: %s", c.prog, p.ops[0].arg)
			}
		}
	}
	var files []sword
	for _, w := range ops {
		if w.known && strings.Contains(w.val, "=") && !strings.Contains(w.val, "/") {
			continue // var=value
		}
		files = append(files, w)
	}
	c.files(Read, files, false)
	c.awkProgram(prog)
	if strings.Contains(prog, "/inet/") {
		// gawk's /inet/tcp/… special files are sockets.
		c.r.s.socketShellScan(c.prog, prog)
	}
	return c.filter(c.paths(files)...)
}

var (
	awkRedirRE = regexp.MustCompile(`>>?\s*"([^"]+)"`)
	// gawk's network files: /inet/tcp/LOCALPORT/HOST/REMOTEPORT.
	awkInetRE = regexp.MustCompile(`/inet[46]?/(tcp|udp)/([0-9]+)/([^/"]+)/([0-9]+)`)
)

var (
	awkSystemRE = regexp.MustCompile(`system\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)`)
	// "cmd" | getline [var]: the output of cmd is read.
	awkCmdGetlineRE = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"\s*\|&?\s*getline`)
	// print … | "cmd": cmd reads what is printed.
	awkPrintPipeRE = regexp.MustCompile(`\|&?\s*"((?:[^"\\]|\\.)*)"`)
	// getline [var] < "file"
	awkGetlineFileRE = regexp.MustCompile(`getline(?:\s+[A-Za-z_][A-Za-z_0-9]*)?\s*<\s*"((?:[^"\\]|\\.)*)"`)
	// getline [var] < expr, print … | expr, expr | getline, system(expr):
	// what they name is known only at run time (after the literal forms
	// above are taken out of the text).
	awkDynGetlineFileRE = regexp.MustCompile(`getline(?:\s+[A-Za-z_][A-Za-z_0-9]*)?\s*<\s*[^"\s]`)
	awkDynPipeRE        = regexp.MustCompile(`(?:^|[^|])\|&?\s*getline|\bprintf?\b[^;{}\n]*[^|]\|&?\s*[A-Za-z_$(]|\bsystem\s*\(`)
)

// awkProgram reads the commands an awk program runs: system("literal"),
// "literal" | getline and print | "literal" are read as shell (a print
// pipe's command reads what awk prints); getline < "file" is a read.
// Commands or files named by an expression are not known: a command is
// code that runs unread, run by sh.
func (c *shCall) awkProgram(prog string) {
	if prog == "" {
		return
	}
	rest := prog
	printed := c.filter()
	for _, m := range awkSystemRE.FindAllStringSubmatch(prog, -1) {
		c.r.s.shellIn(strings.ReplaceAll(m[1], `\"`, `"`), nil)
	}
	rest = awkSystemRE.ReplaceAllString(rest, "")
	for _, m := range awkGetlineFileRE.FindAllStringSubmatch(rest, -1) {
		if !strings.HasPrefix(m[1], "/inet") && m[1] != "-" && m[1] != "/dev/stdin" {
			c.file(Read, shLit(m[1]), nil)
			printed.from = append(printed.from, c.r.path(m[1], false))
		}
	}
	rest = awkGetlineFileRE.ReplaceAllString(rest, "")
	for _, m := range awkCmdGetlineRE.FindAllStringSubmatch(rest, -1) {
		if !strings.HasPrefix(m[1], "/inet") {
			c.r.s.shellIn(strings.ReplaceAll(m[1], `\"`, `"`), nil)
		}
	}
	rest = awkCmdGetlineRE.ReplaceAllString(rest, "")
	for _, m := range awkPrintPipeRE.FindAllStringSubmatch(rest, -1) {
		if !strings.HasPrefix(m[1], "/inet") {
			c.r.s.shellIn(strings.ReplaceAll(m[1], `\"`, `"`), &shEnv{stdin: printed})
		}
	}
	rest = awkPrintPipeRE.ReplaceAllString(rest, "")
	if awkDynPipeRE.MatchString(rest) {
		if c.in != nil && c.in.kind == sNet {
			c.r.download(c.in, "sh")
		}
		c.r.s.opaque("sh", "", "%s program runs commands not known statically", c.prog)
	}
	if awkDynGetlineFileRE.MatchString(rest) {
		c.r.s.unknown(false, "%s: read of a path not known statically: getline < an expression", c.prog)
	}
	for _, m := range awkInetRE.FindAllStringSubmatch(prog, -1) {
		if m[2] != "0" {
			c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Port: m[2]}})
		}
		if m[3] != "0" && m[3] != "" {
			c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: m[3], Port: m[4]}})
		}
	}
	for _, m := range awkRedirRE.FindAllStringSubmatch(prog, -1) {
		c.file(Write, shLit(m[1]), nil)
	}
}

func hJq(c *shCall) *shStream {
	args := c.args()
	rest := c.r.s.mem.swords(len(args))
	for i := 0; i < len(args); i++ {
		if a := args[i]; a.known {
			switch a.val {
			case "--arg", "--argjson", "--slurpfile", "--rawfile":
				if a.val == "--slurpfile" || a.val == "--rawfile" {
					if i+2 < len(args) {
						c.file(Read, args[i+2], nil)
					}
				}
				i += 2
				continue
			}
		}
		rest = append(rest, args[i])
	}
	p := c.parseOpts(rest, shOpts("-f --from-file --indent -L"), false)
	files := p.ops
	if f, ok := p.get("-f", "--from-file"); ok {
		c.file(Read, f, nil)
	} else if len(files) > 0 {
		files = files[1:]
	}
	c.files(Read, files, false)
	return c.filter(c.paths(files)...)
}

var (
	// An ex command that filters through or runs a shell command:
	// :!cmd, :r !cmd, :w !cmd, :%!cmd, :silent !cmd.
	exBangRE = regexp.MustCompile(`^(?:sil(?:ent)?!?\s*)?(?:[.%$0-9,'<>]*\s*)?(?:(?:r|re|rea|read|w|wr|wri|writ|write)\s*)?!(.*)$`)
	// system("cmd"), systemlist('cmd'), :terminal cmd and the language
	// interfaces (:python3 code, :lua code, …) in an ex command.
	exSystemRE = regexp.MustCompile(`\b(?:system|systemlist|jobstart|job_start|term_start)\s*\(\s*(?:"([^"]*)"|'([^']*)')\s*[,)]`)
	exCodeRE   = regexp.MustCompile(`^(?:sil(?:ent)?!?\s*)?(py|py3|python|python3|pyx|pythonx|lua|luado|perl|perldo|ruby|rubydo|tcl|tcldo|mz|mzscheme|ter|term|terminal)\b\s*(.*)$`)
	// Emacs Lisp that runs commands, touches files or the network.
	elispEffectRE = regexp.MustCompile(`\((?:shell-command|async-shell-command|call-process|call-process-shell-command|process-lines|start-process|start-process-shell-command|make-process|make-network-process|open-network-stream|url-retrieve|url-retrieve-synchronously|delete-directory|delete-file|write-region|copy-file|rename-file|make-symbolic-link|load|eval|shell|term|compile)\b`)
)

// exCommand reads one ex command given to vi, vim or ed on the command
// line (-c, --cmd, +cmd): shell escapes are read as shell; code for an
// embedded interpreter is read (Python) or is code that runs unread.
func (c *shCall) exCommand(cmd sword) {
	if !cmd.known {
		c.r.s.opaque("sh", outProg(cmd), "%s runs an editor command not known statically: %s", c.prog, cmd.arg)
		return
	}
	v := strings.TrimLeft(cmd.val, ": ")
	if m := exBangRE.FindStringSubmatch(v); m != nil {
		c.shellText(c.prog, shLit(m[1]), nil)
		return
	}
	if m := exCodeRE.FindStringSubmatch(v); m != nil {
		switch {
		case strings.HasPrefix(m[1], "py"):
			c.r.readCode("python", m[2], nil)
		case strings.HasPrefix(m[1], "ter"):
			if strings.TrimSpace(m[2]) != "" {
				c.shellText(c.prog, shLit(m[2]), nil)
			} else {
				c.r.s.opaque("sh", "", "%s opens a terminal", c.prog)
			}
		default:
			c.r.s.opaque(c.prog, "", "%s runs editor script code: %s", c.prog, cmd.arg)
		}
		return
	}
	found := false
	for _, m := range exSystemRE.FindAllStringSubmatch(v, -1) {
		found = true
		c.shellText(c.prog, shLit(m[1]+m[2]), nil)
	}
	if !found && (strings.Contains(v, "system") || strings.Contains(v, "jobstart") || strings.Contains(v, "job_start") || strings.Contains(v, "term_start") || strings.Contains(v, "libcall")) {
		c.r.s.opaque("sh", "", "%s runs a command not known statically: %s", c.prog, cmd.arg)
	}
}

func hEdit(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-c -S -u -i -T --cmd --eval -eval --execute -l --load -f --funcall"), false)
	if c.prog == "emacs" {
		for _, code := range p.all("--eval", "-eval", "--execute", "-l", "--load", "-f", "--funcall") {
			if !code.known || elispEffectRE.MatchString(code.val) {
				c.r.s.opaque("emacs", "", "emacs runs Lisp code that the analysis does not read: %s", code.arg)
			}
		}
	}
	cur := ""
	for _, cmd := range p.all("-c", "--cmd") {
		if !cmd.known {
			c.exCommand(cmd)
			continue
		}
		cur = c.editorLine(cmd.val, cur)
	}
	buffer := false // vim - reads the text to edit from its standard input
	for _, w := range p.ops {
		if w.known && strings.HasPrefix(w.val, "+") {
			if len(w.val) > 1 {
				cur = c.editorLine(w.val[1:], cur)
			}
			continue
		}
		if w.known && w.val == "-" {
			buffer = true
			continue
		}
		c.file(Read, w, nil)
		c.file(Write, w, nil)
	}
	if !buffer && c.prog != "nano" && c.prog != "emacs" {
		c.editorInput(c.prog == "ed" || c.prog == "red" || c.prog == "ex" || p.has("-e", "-E", "-s", "-es", "-Es"))
	}
	return nil
}

// editorInput reads the commands an editor takes from a standard input
// that is not a terminal: ed and ex read one command a line, vi and vim
// read keys, whose ":" commands are ex commands (lineMode: one command a
// line, as ed, ex and vim -e or -s read them). Text the command shows
// and a script file the analysis can see are read command by command; a
// command's output is code not read, and the network's a download run.
func (c *shCall) editorInput(lineMode bool) {
	in := c.in
	if in == nil || in.kind == sFile && in.path == "/dev/null" {
		return
	}
	text := in.text
	switch in.kind {
	case sText:
	case sFile:
		// A script file, read as a script run by its path is.
		t, ok := c.r.scriptText(c.prog, in.path)
		if !ok {
			return
		}
		text = t
	case sNet:
		c.r.download(in, c.prog)
		return
	default:
		c.r.s.opaque(c.prog, in.prog, "%s reads editor commands from a command's output, which the analysis does not read", c.prog)
		return
	}
	cur := "" // the file e FILE made current, which w alone writes
	for _, line := range strings.Split(text, "\n") {
		if lineMode {
			cur = c.editorLine(line, cur)
			continue
		}
		// vi keys: every ":" starts an ex command that runs to the end
		// of the line.
		for i := strings.IndexByte(line, ':'); i >= 0; {
			cur = c.editorLine(line[i+1:], cur)
			j := strings.IndexByte(line[i+1:], ':')
			if j < 0 {
				break
			}
			i += j + 1
		}
	}
}

// edFileCmdRE is an ed or ex command that names a file after its address:
// e, E, r (read it), w, W, wq (write it); "!cmd" in its place is a command.
var edFileCmdRE = regexp.MustCompile(`^\s*(?:[0-9.$,;%+\-]|'[a-z]|/[^/]*/|\?[^?]*\?)*\s*(e|E|edit|r|read|w|W|write|wq|x)\s+(\S.*?)\s*$`)

// edWriteCmdRE is an ed or ex write with no file named: it writes the
// current file.
var edWriteCmdRE = regexp.MustCompile(`^\s*(?:[0-9.$,;%+\-]|'[a-z])*\s*(?:w|W|wq|x|write)!?\s*$`)

// editorLine reads one ed or ex command; cur is the file an earlier e FILE
// made current (a write with no file writes it), and the one after this
// command is returned.
func (c *shCall) editorLine(line, cur string) string {
	line = strings.TrimLeft(line, ": \t") // vim's -c ':w F', keys' ":w F"
	if m := edFileCmdRE.FindStringSubmatch(line); m != nil {
		arg := m[2]
		if strings.HasPrefix(arg, "!") {
			c.shellText(c.prog, shLit(arg[1:]), nil)
			return cur
		}
		switch m[1] {
		case "e", "E", "edit":
			c.file(Read, shLit(arg), nil)
			return arg
		case "r", "read":
			c.file(Read, shLit(arg), nil)
		default:
			c.file(Write, shLit(arg), func(e *Effect) { e.Append = m[1] == "W" })
		}
		return cur
	}
	if cur != "" && edWriteCmdRE.MatchString(line) {
		c.file(Write, shLit(cur), nil)
		return cur
	}
	if strings.TrimSpace(line) != "" {
		c.exCommand(shLit(line))
	}
	return cur
}

// ---- archives ----

func hTar(c *shCall) *shStream {
	args := append(c.r.s.mem.swords(len(c.ws)), c.args()...)
	// Old style: "tar czf a.tgz dir" (the first word is a cluster without a dash).
	if len(args) > 0 && args[0].known && args[0].val != "" && args[0].val[0] != '-' && strings.Trim(args[0].val, "AcdrtuxzjJavfpkCTOPSWlhmoZ") == "" {
		args[0] = shLit("-" + args[0].val)
	}
	p := c.parseOpts(args, shOpts("-f --file -C --directory -T --files-from -X --exclude-from -b --blocking-factor -H --format -I --use-compress-program -g --listed-incremental -N --newer --owner --group --mode --transform --xform -L --tape-length -V --label"), false)
	file, hasFile := p.get("-f", "--file")
	toStdio := !hasFile || (file.known && file.val == "-")
	dir, hasDir := p.get("-C", "--directory")
	switch {
	case p.has("-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate"):
		var from []string
		for _, w := range p.ops {
			src := w
			if hasDir && w.known && !strings.HasPrefix(w.val, "/") && dir.known {
				src = shLit(strings.TrimSuffix(dir.val, "/") + "/" + w.val)
			}
			c.file(Read, src, func(e *Effect) { e.Recursive = true })
			from = append(from, c.paths([]sword{src})...)
		}
		for _, f := range p.all("-T", "--files-from") {
			c.file(Read, f, nil)
			c.r.s.unknown(false, "tar: files listed in %s not known", f.arg)
		}
		if toStdio {
			return c.filter(from...)
		}
		if host, _, remote := shRemoteSpec(file.val); remote && file.known {
			c.r.s.add(Effect{Kind: Send, Program: "tar", Detail: &Detail{Host: host, Source: "output"}})
			return nil
		}
		c.file(Write, file, nil)
		return nil
	case p.has("-x", "--extract", "--get"):
		if !toStdio {
			c.file(Read, file, nil)
		}
		if p.has("-O", "--to-stdout") {
			return c.filter()
		}
		d := shLit(".")
		if hasDir {
			d = dir
		}
		c.file(Write, d, func(e *Effect) { e.Recursive = true })
		abs := p.has("-P", "--absolute-names")
		if abs {
			// Members named by absolute paths land where they say.
			c.file(Write, shLit("/"), func(e *Effect) { e.Recursive = true })
		}
		for _, x := range p.all("--transform", "--xform") {
			c.tarTransformTarget(x, d, abs)
		}
		if toStdio && c.in != nil && c.in.kind == sNet && d.known {
			// curl URL | tar x -C dir: the download lands in dir.
			c.r.s.add(Effect{Kind: Download, Program: c.prog, Detail: &Detail{URL: c.in.url, Host: c.in.host, Port: c.in.port},
				Path: c.r.path(d.val, false), Recursive: true})
		}
		return nil
	default:
		if !toStdio {
			c.file(Read, file, nil)
		}
		return c.filter()
	}
}

func hZip(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-x -i -P --password -b -n -t -tt -O --output-file -s"), false)
	if len(p.ops) == 0 {
		return nil
	}
	rec := p.has("-r", "--recurse-paths")
	archive, files := p.ops[0], p.ops[1:]
	c.files(Read, files, rec)
	if archive.known && archive.val == "-" {
		return c.filter(c.paths(files)...)
	}
	c.file(Write, archive, nil)
	return nil
}

func hUnzip(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-d -x -P"), false)
	if len(p.ops) == 0 {
		return nil
	}
	c.file(Read, p.ops[0], nil)
	if p.has("-l", "-t", "-v", "-Z") {
		return c.filter()
	}
	if p.has("-p", "-c") {
		return c.filter(c.paths(p.ops[:1])...)
	}
	d := shLit(".")
	if v, ok := p.get("-d"); ok {
		d = v
	}
	c.file(Write, d, func(e *Effect) { e.Recursive = true })
	return nil
}

func h7z(c *shCall) *shStream {
	args := c.args()
	if len(args) < 2 {
		return nil
	}
	cmd := args[0].val
	var ops []sword
	out := shLit(".")
	for _, w := range args[1:] {
		if w.known && strings.HasPrefix(w.val, "-o") {
			out = shLit(w.val[2:])
			continue
		}
		if w.known && strings.HasPrefix(w.val, "-") {
			continue
		}
		ops = append(ops, w)
	}
	if len(ops) == 0 {
		return nil
	}
	switch cmd {
	case "a", "u":
		c.file(Write, ops[0], nil)
		c.files(Read, ops[1:], true)
	case "x", "e":
		c.file(Read, ops[0], nil)
		c.file(Write, out, func(e *Effect) { e.Recursive = true })
	default:
		c.file(Read, ops[0], nil)
	}
	return c.filter()
}

func hCompress(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-S --suffix -T --threads -b"), false)
	decomp := c.prog == "gunzip" || c.prog == "zcat" || (c.prog == "gzip" && p.has("-d", "--decompress", "--uncompress"))
	if decomp && len(p.ops) == 0 && c.in != nil && c.in.kind == sText {
		return c.gunzipText()
	}
	c.files(Read, p.ops, false)
	toStdout := p.has("-c", "--stdout", "--to-stdout") || len(p.ops) == 0
	if toStdout {
		return c.filter(c.paths(p.ops)...)
	}
	for _, w := range p.ops {
		c.file(Write, w, nil)
	}
	return nil
}

// ---- find and xargs ----

// findSel is what a find expression says of its starting points: the
// name patterns every file found must match (all joined by "and"), and
// whether -mindepth leaves the starting points out.
type findSel struct {
	names    []string
	fold     bool // -iname
	mindepth bool
	// notDir: a -type test (in a plain conjunction) that no directory
	// passes (-type f, -type l, -type f,l): a starting point is found
	// only when it is not a directory, and then it is one file.
	notDir bool
}

// findSelection reads a find expression (the words after the starting
// points). Names count only in a plain conjunction of -name/-iname with
// tests that select by something else; with -o, !, -not, parentheses or a
// word not known, no name narrows anything.
func findSelection(expr []sword) findSel {
	var sel findSel
	plain := true
	for i := 0; i < len(expr); i++ {
		w := expr[i]
		if !w.known {
			plain = false
			continue
		}
		switch w.val {
		case "-mindepth":
			if i+1 < len(expr) && expr[i+1].known {
				if n, err := strconv.Atoi(expr[i+1].val); err == nil && n >= 1 {
					sel.mindepth = true
				}
			}
			i++
		case "-name", "-iname":
			if i+1 < len(expr) && expr[i+1].known {
				sel.names = append(sel.names, expr[i+1].val)
				sel.fold = sel.fold || w.val == "-iname"
			} else {
				plain = false
			}
			i++
		case "-o", "-or", "!", "-not", "(", ")", ",":
			plain = false
		case "-type":
			if i+1 < len(expr) && expr[i+1].known && expr[i+1].val != "" && !strings.Contains(expr[i+1].val, "d") {
				sel.notDir = true
			}
			i++
		case "-xtype", "-maxdepth", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
			"-newer", "-anewer", "-cnewer", "-size", "-user", "-group", "-perm", "-uid", "-gid", "-links",
			"-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
			"-samefile", "-inum", "-fstype", "-used", "-regextype", "-printf", "-fprint", "-fprint0", "-fls":
			// Tests that narrow what is found further (their argument,
			// known or not, widens nothing), and outputs.
			i++
		case "-exec", "-execdir", "-ok", "-okdir":
			for i++; i < len(expr) && !(expr[i].known && (expr[i].val == ";" || expr[i].val == "+")); i++ {
			}
		}
	}
	if !plain {
		sel.names = nil
		sel.notDir = false
	}
	return sel
}

// skipsRoot reports whether find leaves the starting point root out of
// what it selects.
func (sel findSel) skipsRoot(root string) bool {
	if sel.mindepth {
		return true
	}
	base := path.Base(root)
	if base == "/" || base == "." || base == ".." || strings.ContainsAny(root, "*?[") {
		// find matches -name against "/" or "." as such; keep it simple:
		// the root counts as selected.
		return false
	}
	for _, pat := range sel.names {
		name := base
		if sel.fold {
			pat, name = strings.ToLower(pat), strings.ToLower(name)
		}
		if ok, err := path.Match(pat, name); err == nil && !ok {
			return true
		}
	}
	return false
}

func hFind(c *shCall) *shStream {
	args := c.args()
	i := 0
	for i < len(args) && args[i].known && (args[i].val == "-H" || args[i].val == "-L" || args[i].val == "-P" || strings.HasPrefix(args[i].val, "-O") || args[i].val == "-D") {
		if args[i].val == "-D" {
			i++
		}
		i++
	}
	roots := c.r.s.mem.swords(max(len(args)-i, 0))
	for ; i < len(args); i++ {
		a := args[i]
		if a.known && (strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" || a.val == ")") {
			break
		}
		roots = append(roots, a)
	}
	if len(roots) == 0 {
		roots = []sword{shLit(".")}
	}
	// What find selects below a root that it does not select itself: a
	// name the root does not have, or -mindepth. {} and -delete then stand
	// for what is under the root ("/tmp/*", each recursively), not the root.
	sel := findSelection(args[i:])
	for k, root := range roots {
		if root.known && sel.skipsRoot(root.val) {
			roots[k] = sword{arg: root.arg, val: strings.TrimSuffix(root.val, "/") + "/*", known: true, tree: true}
		}
	}
	if sel.notDir {
		// -type f: what is under a starting point ("/srv/*", each a
		// tree), and the starting point itself only as one file (not a
		// tree: a directory there is not found).
		n := len(roots)
		for k := range n {
			root := roots[k]
			if !root.known || root.tree {
				continue
			}
			roots[k] = sword{arg: root.arg, val: strings.TrimSuffix(root.val, "/") + "/*", known: true, tree: true}
			if b := path.Base(root.val); b != "/" && b != "." && b != ".." && !strings.HasSuffix(root.val, "/") {
				// Not written as a directory: it may be a file.
				roots = append(roots, sword{arg: root.arg, val: root.val, known: true})
			}
		}
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch a.val {
		case "-exec", "-execdir", "-ok", "-okdir":
			var cmd []sword
			j := i + 1
			for ; j < len(args); j++ {
				if args[j].known && (args[j].val == ";" || args[j].val == "+") {
					break
				}
				cmd = append(cmd, args[j])
			}
			i = j
			for _, root := range roots {
				ws := make([]sword, len(cmd))
				for k, w := range cmd {
					ws[k] = w
					if w.known && strings.Contains(w.val, "{}") && root.known {
						ws[k] = sword{arg: w.arg, val: strings.ReplaceAll(w.val, "{}", root.val), known: true, tree: root.tree || !sel.notDir}
					} else if w.known && w.val == "{}" && !sel.mindepth && len(sel.names) == 0 {
						// the root itself, not known: {} names what it names
						ws[k] = sword{arg: root.arg}
					} else if w.known && strings.Contains(w.val, "{}") {
						ws[k] = sword{arg: w.arg}
					}
				}
				c.r.run(ws, nil, nil)
			}
		case "-delete":
			for _, root := range roots {
				if !root.known && (sel.mindepth || len(sel.names) > 0) {
					// what it selects under a root not known: not the root
					c.r.s.unknown(false, "%s: %s of a path not known statically: %s", c.prog, Delete, root.arg)
					continue
				}
				c.file(Delete, root, func(e *Effect) { e.Recursive = root.tree || !sel.notDir })
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				c.file(Write, args[i+1], nil)
			}
		}
	}
	st := c.r.s.mem.stream(shStream{kind: sOutput, prog: "find", fileRoots: sel.notDir})
	for _, root := range roots {
		if root.known {
			st.from = append(st.from, c.r.path(root.val, false))
		}
	}
	return st
}

func hXargs(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-I -n -P -L -s -E -e -d -a --arg-file --delimiter --max-args --max-procs --replace --max-lines --max-chars --eof --process-slot-var"), true)
	cmd := p.rest
	if len(cmd) == 0 {
		cmd = []sword{shLit("echo")}
	}
	repl, hasRepl := p.get("-I", "--replace", "-i")
	if hasRepl && repl.val == "" {
		repl = shLit("{}")
	}
	var items []sword
	known := false
	if f, ok := p.get("-a", "--arg-file"); ok {
		c.file(Read, f, nil)
	} else if c.in != nil && c.in.kind == sText {
		known = true
		sep := func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
		if p.has("-0", "--null") {
			sep = func(r rune) bool { return r == 0 }
		} else if d, ok := p.get("-d", "--delimiter"); ok && d.val != "" {
			dr := []rune(d.val)[0]
			sep = func(r rune) bool { return r == dr }
		} else if hasRepl {
			sep = func(r rune) bool { return r == '\n' }
		}
		for _, f := range strings.FieldsFunc(c.in.text, sep) {
			items = append(items, shLit(strings.Trim(f, `"'`)))
		}
	} else if c.in != nil && c.in.prog == "find" && len(c.in.from) > 0 {
		for _, root := range c.in.from {
			tree := !c.in.fileRoots || strings.HasSuffix(root, "/*")
			items = append(items, sword{arg: "(stdin)", val: root, known: true, tree: tree})
		}
		known = true
	} else if c.in != nil && c.in.kind == sOutput && (c.in.prog == "ls" || c.in.prog == "dir") {
		// ls … | xargs: the names of the listed entries, each one of "*".
		items = append(items, sword{arg: "(stdin)", val: "*", known: true, glob: true})
		known = true
	}
	if !known {
		items = []sword{{arg: "(stdin)", out: pidStream(c.in)}}
	}
	if len(items) > maxLoopItems {
		items = items[:maxLoopItems]
		c.r.s.unknown(true, "xargs: more than %d arguments read from its input", maxLoopItems)
	}
	if hasRepl {
		for _, it := range items {
			ws := make([]sword, len(cmd))
			for k, w := range cmd {
				ws[k] = w
				if w.known && strings.Contains(w.val, repl.val) {
					if it.known {
						ws[k] = sword{arg: w.arg, val: strings.ReplaceAll(w.val, repl.val, it.val), known: true, tree: it.tree}
					} else {
						ws[k] = sword{arg: w.arg, out: it.out}
					}
				}
			}
			c.r.run(ws, nil, nil)
		}
		return c.filter()
	}
	return c.r.run(append(append([]sword(nil), cmd...), items...), nil, nil)
}

// ---- processes ----

func hKill(c *shCall) *shStream {
	sig := ""
	var targets []string
	args := c.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.known && (a.val == "-l" || a.val == "-L" || a.val == "--list"):
			return c.filter()
		case a.known && (a.val == "-s" || a.val == "-n" || a.val == "--signal") && i+1 < len(args):
			i++
			sig = shSignalName(args[i].val)
		case a.known && a.val == "--":
			for _, t := range args[i+1:] {
				targets = append(targets, t.arg)
			}
			i = len(args)
		case a.known && sig == "" && len(a.val) > 1 && a.val[0] == '-':
			sig = shSignalName(a.val[1:])
		default:
			targets = append(targets, a.arg)
			if !a.known {
				targets = append(targets, shPidSourceNames(a.arg)...)
				if a.out != nil {
					for _, n := range a.out.pids {
						if !slices.Contains(targets, n) {
							targets = append(targets, n)
						}
					}
				}
			}
		}
	}
	if sig == "" {
		sig = "TERM"
	}
	c.r.s.add(Effect{Kind: Signal, Program: c.prog, Detail: &Detail{Signal: sig, Targets: targets}})
	return nil
}

var (
	shPidofRE   = regexp.MustCompile(`(?:\$\(|` + "`" + `)\s*(?:sudo\s+)?(?:pidof|pgrep)((?:\s+-{1,2}[A-Za-z][\w-]*(?:=\S+)?)*)\s+['"]?([^\s'"|)` + "`" + `;]+)`)
	shPidfileRE = regexp.MustCompile(`(?:\$\(|` + "`" + `)\s*(?:sudo\s+)?(?:cat\s+|<\s*)(?:\S*/)?([A-Za-z0-9_.@-]+?)\.pid\b`)
	shPsRE      = regexp.MustCompile(`^(?:\$\(|` + "`" + `)\s*(?:sudo\s+)?ps\b`)
	shPsGrepRE  = regexp.MustCompile(`\bgrep\s+(?:-\S+\s+)*['"]?([^\s'"|)` + "`" + `]+)`)
)

// shPidSourceNames reads a kill operand that is a command's output, which
// the reader cannot know, for the processes it names: $(pidof sshd) and
// $(pgrep -f dockerd) are sshd and dockerd, $(cat /run/sshd.pid) the
// process of the pid file's name, $(ps … | grep X …) the processes
// matching X and $(ps -e -o pid=) with no filter every process ("-1").
func shPidSourceNames(text string) []string {
	var out []string
	for _, m := range shPidofRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[2])
	}
	for _, m := range shPidfileRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	if shPsRE.MatchString(text) {
		if ms := shPsGrepRE.FindAllStringSubmatch(text, -1); len(ms) > 0 {
			for _, m := range ms {
				if m[1] != "-v" {
					out = append(out, m[1])
				}
			}
		} else if !strings.Contains(text, "awk") && !strings.Contains(text, "-u") && !strings.Contains(text, "-p") && !strings.Contains(text, "-C") {
			out = append(out, "-1")
		}
	}
	return out
}

func hPkill(c *shCall) *shStream {
	args := c.args()
	sig := ""
	var rest []sword
	for _, a := range args {
		if a.known && sig == "" && len(a.val) > 1 && a.val[0] == '-' && a.val[1] != '-' && (a.val[1] >= '0' && a.val[1] <= '9' || a.val[1] >= 'A' && a.val[1] <= 'Z') && a.val != "-U" && a.val != "-G" && a.val != "-P" && a.val != "-F" && a.val != "-I" && a.val != "-Z" {
			sig = shSignalName(a.val[1:])
			continue
		}
		rest = append(rest, a)
	}
	p := c.parseOpts(rest, shOpts("-s --signal -u --euid -U --uid -g --pgroup -G --group -P --parent -t --terminal -F --pidfile --ns --nslist -o --older-than -y --younger-than -c --context"), false)
	if s, ok := p.get("-s", "--signal"); ok {
		sig = shSignalName(s.val)
	}
	if sig == "" {
		sig = "TERM"
	}
	var targets []string
	for _, w := range p.ops {
		targets = append(targets, w.arg)
		if strings.Contains(w.arg, "|") {
			// An alternation (pkill 'sshd|cron'): each name too.
			targets = append(targets, pidPattern(w.arg, false)...)
		}
	}
	if u, ok := p.get("-u", "--user", "--euid", "-U", "--uid"); ok {
		targets = append(targets, "user:"+u.arg)
	}
	c.r.s.add(Effect{Kind: Signal, Program: c.prog, Detail: &Detail{Signal: sig, Targets: targets}})
	return nil
}

// hSlay reads slay USER…: every process of each user is killed.
func hSlay(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	var targets []string
	for _, w := range p.ops {
		targets = append(targets, "user:"+w.arg)
	}
	if len(targets) > 0 {
		c.r.s.add(Effect{Kind: Signal, Program: c.prog, Detail: &Detail{Signal: "KILL", Targets: targets}})
	}
	return nil
}

// hKillall5 reads killall5 [-SIG] [-o PID]…: every process but the
// kernel's and the caller's session gets the signal ("-1").
func hKillall5(c *shCall) *shStream {
	sig := "TERM"
	for _, a := range c.args() {
		if a.known && len(a.val) > 1 && a.val[0] == '-' && a.val != "-o" {
			sig = shSignalName(a.val[1:])
			break
		}
	}
	c.r.s.add(Effect{Kind: Signal, Program: c.prog, Detail: &Detail{Signal: sig, Targets: []string{"-1"}}})
	return nil
}

func hSystemctl(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-s --signal -t --type --state -p --property -H --host -M --machine --root --kill-whom --kill-value -n --lines -o --output --job-mode"), false)
	if len(p.ops) == 0 {
		return c.filter()
	}
	verb := p.ops[0].val
	sig := "TERM"
	switch verb {
	case "stop", "disable", "mask", "restart", "try-restart", "reload-or-restart", "kill", "freeze":
		if s, ok := p.get("-s", "--signal"); ok && verb == "kill" {
			sig = shSignalName(s.val)
		}
		if verb == "disable" || verb == "mask" {
			if !p.has("--now") {
				sig = ""
			}
		}
		var units []string
		for _, w := range p.ops[1:] {
			units = append(units, w.arg)
		}
		e := Effect{Kind: Signal, Program: "systemctl", Detail: &Detail{Signal: sig, Targets: units}}
		if e.Signal() == "" {
			e.detail().Signal = "TERM"
		}
		c.r.s.add(e)
	}
	return c.filter()
}

func hService(c *shCall) *shStream {
	ops := c.args()
	if len(ops) >= 2 && ops[1].known {
		switch ops[1].val {
		case "stop", "restart", "force-reload", "force-stop":
			c.r.s.add(Effect{Kind: Signal, Program: "service", Detail: &Detail{Signal: "TERM", Targets: []string{ops[0].arg}}})
		}
	}
	return c.filter()
}

// ---- privileges and wrappers ----

func hPriv(c *shCall) *shStream {
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	return c.filter()
}

var sudoOpts = shOpts("-u --user -g --group -p --prompt -C --close-from -D --chdir -h --host -r --role -t --type -U --other-user -T --command-timeout")

func hSudo(c *shCall) *shStream {
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	p := c.parseOpts(c.args(), sudoOpts, true)
	if p.has("-e", "--edit") {
		for _, w := range p.rest {
			c.file(Write, w, nil)
		}
		return nil
	}
	if p.has("-l", "--list", "-v", "--validate", "-k", "-K") && len(p.rest) == 0 {
		return nil
	}
	rest := p.rest
	user, _ := p.get("-u", "--user")
	env := c.asUser(user)
	if p.has("-s", "--shell", "-i", "--login") {
		if len(rest) == 0 {
			return c.r.run([]sword{shLit("sh")}, c.in, env)
		}
		return c.r.run(append([]sword{shLit("sh"), shLit("-c")}, shJoinWords(rest)), c.in, env)
	}
	// sudo VAR=value cmd
	for len(rest) > 0 && rest[0].known && shIsAssignWord(rest[0].val) {
		n, v, _ := strings.Cut(rest[0].val, "=")
		c.r.commandVar(n, shLit(v))
		rest = rest[1:]
	}
	return c.r.run(rest, c.in, env)
}

// asUser returns the environment of a command c runs as user ("" is
// root): c's, and, when that is not the agent's own user, the user it runs
// as (shRunAsVar), which the coding agents read as another home.
func (c *shCall) asUser(user sword) []shAssign {
	name := "root"
	if user.arg != "" {
		name = user.arg
	}
	if user.arg == "" && c.r.s.ctx.User == "root" || user.known && user.val == c.r.s.ctx.User && user.val != "" {
		return c.env
	}
	return append(append([]shAssign(nil), c.env...), shAssign{name: shRunAsVar, val: sword{arg: name, val: name, known: user.known || user.arg == ""}})
}

func shIsAssignWord(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shJoinWords joins words with spaces, as ssh, su -c and watch hand them to
// a shell.
func shJoinWords(ws []sword) sword {
	parts := make([]string, len(ws))
	known := true
	var out *shStream
	for i, w := range ws {
		parts[i] = w.val
		if !w.known {
			known = false
			parts[i] = w.arg
			if len(ws) == 1 {
				out = w.out
			}
		}
	}
	j := strings.Join(parts, " ")
	if known {
		return shLit(j)
	}
	return sword{arg: j, out: out}
}

// suInfoOpts make su and runuser print their usage or version and exit.
var suInfoOpts = []string{"-h", "--help", "-V", "--version"}

func hSu(c *shCall) *shStream {
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	p := c.parseOpts(c.args(), shOpts("-c --command -s --shell -g --group -G --supp-group -w --whitelist-environment --session-command"), false)
	if p.has(suInfoOpts...) {
		return nil
	}
	user := sword{}
	if len(p.ops) > 0 && !(p.ops[0].known && p.ops[0].val == "-") {
		user = p.ops[0]
	} else if len(p.ops) > 1 {
		user = p.ops[1]
	}
	env := c.asUser(user)
	if cmd, ok := p.get("-c", "--command", "--session-command"); ok {
		c.shellText("su", cmd, &shEnv{vars: c.r.exported(env)})
		return c.filter()
	}
	return c.r.run([]sword{shLit("sh")}, c.in, env)
}

var runuserOpts = shOpts("-u --user -g --group -G --supp-group -c --command -s --shell -w --whitelist-environment --session-command")

func hRunuser(c *shCall) *shStream {
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	// runuser -u USER CMD... runs CMD as it is; in the su form (runuser
	// [-] USER [-c CMD]) options may follow the user, as with su.
	if _, ok := c.parseOpts(c.args(), runuserOpts, true).get("-u", "--user"); ok {
		return c.r.run(c.parseOpts(c.args(), runuserOpts, true).rest, c.in, c.env)
	}
	p := c.parseOpts(c.args(), runuserOpts, false)
	if p.has(suInfoOpts...) {
		return nil
	}
	if cmd, ok := p.get("-c", "--command"); ok {
		c.shellText("runuser", cmd, nil)
		return c.filter()
	}
	return c.r.run([]sword{shLit("sh")}, c.in, c.env)
}

func hSg(c *shCall) *shStream {
	// shadow's sg has no long options; a command line with one is another
	// program of the same name (ast-grep installs itself as sg).
	for _, w := range c.args() {
		if w.known && strings.HasPrefix(w.val, "--") && w.val != "--" {
			return c.filter()
		}
	}
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	p := c.parseOpts(c.args(), shOpts("-c"), false)
	if cmd, ok := p.get("-c"); ok {
		c.shellText("sg", cmd, nil)
	} else if len(p.ops) > 1 {
		c.shellText("sg", p.ops[1], nil)
	}
	return c.filter()
}

func hPkexec(c *shCall) *shStream {
	c.r.s.add(Effect{Kind: Privilege, Program: c.prog})
	p := c.parseOpts(c.args(), shOpts("--user -u"), true)
	return c.r.run(p.rest, c.in, c.env)
}

// hWrap makes the handler of a wrapper: options (valued takes those with a
// value), skip operands of its own (timeout's duration), then the command
// it runs.
// hTrace reads strace and ltrace: -o FILE writes the trace (which quotes
// the traced program's arguments) to FILE, and the command runs.
func hTrace(valued shOptSet) shHandler {
	return func(c *shCall) *shStream {
		p := c.parseOpts(c.args(), valued, true)
		for _, f := range p.all("-o", "--output") {
			c.file(Write, f, nil)
		}
		if len(p.rest) == 0 {
			return nil
		}
		return c.r.run(p.rest, c.in, c.env)
	}
}

func hWrap(valued shOptSet, skip int) shHandler {
	return func(c *shCall) *shStream {
		p := c.parseOpts(c.args(), valued, true)
		rest := p.rest
		if len(rest) < skip {
			return nil
		}
		return c.r.run(rest[skip:], c.in, c.env)
	}
}

func hEnv(c *shCall) *shStream {
	args := c.args()
	env := append([]shAssign(nil), c.env...)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			return c.r.run(args[i:], c.in, env)
		}
		switch {
		case a.val == "--":
			return c.r.run(args[i+1:], c.in, env)
		case a.val == "-i" || a.val == "--ignore-environment" || a.val == "-":
			// Every variable unset: HOME among them, which the coding
			// agents read their settings from (shell_agents.go).
			env = append(env, shAssign{name: "HOME", val: sword{arg: "(unset)"}})
		case (a.val == "-u" || a.val == "--unset") && i+1 < len(args):
			i++
			env = append(env, shAssign{name: args[i].val, val: sword{arg: "(unset)"}})
		case strings.HasPrefix(a.val, "--unset="):
			env = append(env, shAssign{name: strings.TrimPrefix(a.val, "--unset="), val: sword{arg: "(unset)"}})
		case a.val == "-C" || a.val == "--chdir" || a.val == "-P":
			i++
		case a.val == "-S" || a.val == "--split-string" || strings.HasPrefix(a.val, "--split-string=") || strings.HasPrefix(a.val, "-S") && len(a.val) > 2:
			var s sword
			switch {
			case strings.HasPrefix(a.val, "--split-string="):
				s = shLit(strings.TrimPrefix(a.val, "--split-string="))
			case len(a.val) > 2 && a.val != "--split-string":
				s = shLit(a.val[2:])
			case i+1 < len(args):
				i++
				s = args[i]
			}
			if !s.known {
				// The string is a command line: a program and its
				// arguments known only at run time, as "$CMD" is.
				c.r.s.opaque("program", outProg(s), "env -S of a string not known statically: %s", s.arg)
				return nil
			}
			ws := c.r.splitText(s.val)
			return c.r.run(append(ws, args[i+1:]...), c.in, env)
		case strings.HasPrefix(a.val, "-"):
		case shIsAssignWord(a.val):
			n, v, _ := strings.Cut(a.val, "=")
			env = append(env, shAssign{name: n, val: shLit(v)})
			c.r.commandVar(n, shLit(v))
		default:
			return c.r.run(args[i:], c.in, env)
		}
	}
	return c.filter()
}

func hTaskset(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, true)
	if p.has("-p", "--pid") || len(p.rest) < 1 {
		return nil
	}
	if p.has("-c", "--cpu-list") || len(p.rest) > 0 {
		return c.r.run(p.rest[1:], c.in, c.env)
	}
	return nil
}

func hCommand(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, true)
	if p.has("-v", "-V") {
		return c.filter()
	}
	return c.r.run(p.rest, c.in, c.env)
}

func hChroot(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("--userspec --groups"), true)
	if len(p.rest) == 0 {
		return nil
	}
	if len(p.rest) == 1 {
		return c.r.run([]sword{shLit("sh")}, c.in, c.env)
	}
	return c.r.run(p.rest[1:], c.in, c.env)
}

func hWatch(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-n --interval -q --equexit"), true)
	if len(p.rest) == 0 {
		return nil
	}
	if p.has("-x", "--exec") {
		return c.r.run(p.rest, c.in, c.env)
	}
	c.shellText("watch", shJoinWords(p.rest), nil)
	return c.filter()
}

func hFlock(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-w --timeout -E --conflict-exit-code -c --command"), true)
	if cmd, ok := p.get("-c", "--command"); ok {
		c.shellText("flock", cmd, nil)
		return c.filter()
	}
	if len(p.rest) >= 2 {
		rest := p.rest[1:]
		if rest[0].known && (rest[0].val == "-c" || rest[0].val == "--command") && len(rest) > 1 {
			c.shellText("flock", rest[1], nil)
			return c.filter()
		}
		return c.r.run(rest, c.in, c.env)
	}
	return nil
}

func hScript(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-c --command -E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -o --output-limit"), false)
	if cmd, ok := p.get("-c", "--command"); ok {
		c.shellText("script", cmd, nil)
	}
	return nil
}

// hRlwrap reads rlwrap [OPTIONS] COMMAND: -l FILE and -L FILE append the
// session to FILE, -H FILE is its history; the command runs.
func hRlwrap(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-b -C -D -e -f -F -g -H -l -L -M -O -p -P -q -s -S -t -w -z --logfile --history-filename --file"), true)
	for _, f := range p.all("-l", "-L", "--logfile", "-H", "--history-filename") {
		c.file(Write, f, func(e *Effect) { e.Append = true })
	}
	if len(p.rest) > 0 {
		return c.r.run(p.rest, c.in, c.env)
	}
	return nil
}

func hScreen(c *shCall) *shStream {
	// -Logfile FILE (and, in some versions, -L FILE) names the log screen
	// writes what the session prints to.
	args := c.args()
	var rest []sword
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.known && i+1 < len(args) && (a.val == "-Logfile" || a.val == "-L" && args[i+1].known && strings.Contains(args[i+1].val, "/")) {
			c.file(Write, args[i+1], func(e *Effect) { e.Append = true })
			i++
			continue
		}
		if a.known && (a.val == "-L" || a.val == "-Logfile") {
			continue
		}
		rest = append(rest, a)
	}
	p := c.parseOpts(rest, shOpts("-S -c -e -h -p -s -t -T -X"), true)
	if len(p.rest) > 0 {
		return c.r.run(p.rest, c.in, c.env)
	}
	return nil
}

func hTmux(c *shCall) *shStream {
	args := c.args()
	for i, a := range args {
		if !a.known {
			continue
		}
		switch a.val {
		case "new-session", "new", "new-window", "neww", "split-window", "splitw", "run-shell", "run", "respawn-pane", "respawn-window":
			p := c.parseOpts(args[i+1:], shOpts("-s -n -c -t -e -F -x -y -l -p -b? -f"), false)
			if len(p.ops) > 0 {
				c.shellText("tmux", shJoinWords(p.ops), nil)
			}
			return nil
		case "send-keys", "send":
			p := c.parseOpts(args[i+1:], shOpts("-t -N"), false)
			var keys []sword
			for _, k := range p.ops {
				if k.known && (k.val == "Enter" || k.val == "C-m" || k.val == "KPEnter") {
					continue
				}
				keys = append(keys, k)
			}
			if len(keys) > 0 {
				c.shellText("tmux", shJoinWords(keys), nil)
			}
			return nil
		}
	}
	return nil
}

func hAt(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-f -q -t"), false)
	if f, ok := p.get("-f"); ok {
		c.scriptFile("sh", "at", f, nil)
		return nil
	}
	c.r.feed("sh", "at", c.in, nil)
	return nil
}

func hCrontab(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-u -s"), false)
	if p.has("-l", "-r", "-e", "-i", "-T", "-V", "-h", "--help") {
		for _, w := range p.ops {
			c.file(Read, w, nil)
		}
		return nil
	}
	// Installing a table: from a file, from "-", or from the standard
	// input with no operand when it is piped in (busybox, older cron).
	fromStdin := len(p.ops) == 0 && c.in != nil
	for _, w := range p.ops {
		if w.known && w.val == "-" {
			fromStdin = true
			continue
		}
		c.file(Read, w, nil)
	}
	if len(p.ops) == 0 && !fromStdin {
		return nil
	}
	user := c.r.s.ctx.User
	if u, ok := p.get("-u"); ok && u.known {
		user = u.val
	}
	if user == "" {
		user = "*"
	}
	// The table lands in cron's spool, and its commands run later as the
	// shell reads them: each line's command after the time fields.
	c.r.s.add(Effect{Kind: Write, Program: c.prog, Path: "/var/spool/cron/crontabs/" + user})
	if fromStdin && c.in != nil && c.in.kind == sText {
		for _, line := range strings.Split(c.in.text, "\n") {
			if cmd := cronCommand(line); cmd != "" {
				c.r.s.shellIn(cmd, nil)
			}
		}
	}
	return nil
}

// cronCommand returns the command of a crontab line: what follows the
// five time fields or an @keyword; "" for comments, blank lines and
// variable settings.
func cronCommand(line string) string {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return ""
	}
	f := strings.Fields(line)
	n := 5
	if strings.HasPrefix(f[0], "@") {
		n = 1
	} else if strings.Contains(f[0], "=") {
		return ""
	}
	if len(f) <= n {
		return ""
	}
	rest := line
	for i := 0; i < n; i++ {
		rest = strings.TrimLeft(rest, " \t")
		if j := strings.IndexAny(rest, " \t"); j >= 0 {
			rest = rest[j:]
		}
	}
	return strings.TrimSpace(rest)
}

// hParallel reads GNU parallel: the command is run for each argument
// after ":::" (a command given as one word is a shell script, as parallel
// runs it); without ":::" the arguments come from the input.
func hParallel(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-j --jobs -S --sshlogin -a --arg-file --colsep -d --delimiter -I --tmpdir --results --joblog -N --max-args -n --timeout --delay --memfree --load"), true)
	var cmd, items []sword
	sep := false
	for _, w := range p.rest {
		if w.known && (w.val == ":::" || w.val == "::::" || w.val == ":::+") {
			sep = true
			continue
		}
		if sep {
			items = append(items, w)
		} else {
			cmd = append(cmd, w)
		}
	}
	if f, ok := p.get("-a", "--arg-file"); ok {
		c.file(Read, f, nil)
	}
	if !sep {
		if c.in != nil && c.in.kind == sText {
			for _, f := range strings.Split(strings.TrimRight(c.in.text, "\n"), "\n") {
				items = append(items, shLit(f))
			}
		} else {
			items = []sword{{arg: "(stdin)"}}
		}
	}
	if len(items) > maxLoopItems {
		items = items[:maxLoopItems]
		c.r.s.unknown(true, "parallel: more than %d arguments", maxLoopItems)
	}
	if len(cmd) == 0 {
		// The arguments are the commands.
		for _, it := range items {
			c.shellText("parallel", it, nil)
		}
		return c.filter()
	}
	script := shJoinWords(cmd)
	for _, it := range items {
		if !script.known {
			c.shellText("parallel", script, nil)
			continue
		}
		text := script.val
		if !strings.Contains(text, "{}") {
			text += " {}"
		}
		env := &shEnv{args: []sword{it}}
		c.r.s.shellIn(strings.ReplaceAll(text, "{}", `"$1"`), env)
	}
	return c.filter()
}

var sedCmdRE = regexp.MustCompile(`^(?:[0-9$]+|/(?:[^/\\]|\\.)*/)?(?:,(?:[0-9$]+|/(?:[^/\\]|\\.)*/))?\s*!?\s*([wWe])(?:\s+(.*))?$`)

// sedScript reads the commands of a sed script that act outside the
// stream: "w FILE" writes a file, "e CMD" runs a command.
func (c *shCall) sedScript(w sword) {
	if !w.known {
		if codeHidden(w) {
			// sed "$S": its commands (e, s///e, w FILE) are unread.
			c.r.s.opaque("sed", outProg(w), "sed script not known statically: %s", w.arg)
		}
		return
	}
	for _, line := range strings.FieldsFunc(w.val, func(r rune) bool { return r == '\n' || r == ';' }) {
		m := sedCmdRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		arg := strings.TrimSpace(m[2])
		switch m[1] {
		case "w", "W":
			if arg != "" {
				c.file(Write, shLit(arg), nil)
			}
		case "e":
			if arg != "" {
				c.shellText("sed", shLit(arg), nil)
			} else {
				c.sedRunsInput("e")
			}
		}
	}
	exec, wfiles := sedSubstFlags(w.val)
	if exec {
		c.sedRunsInput("s///e")
	}
	for _, f := range wfiles {
		c.file(Write, shLit(f), nil)
	}
}

// sedRunsInput records that sed runs lines of its input (or of what it
// made of them) as shell commands: code that runs unread, or downloaded
// code when its input comes from the network.
func (c *shCall) sedRunsInput(how string) {
	if c.in != nil && c.in.kind == sNet {
		c.r.download(c.in, "sh")
	}
	c.r.s.opaque("sh", "", "sed runs its input lines as commands (%s)", how)
}

// sedSubstFlags reads the flags of a sed script's substitutions: exec
// when one has the e flag (s/x/y/e: GNU sed runs the pattern space as a
// command and puts its output in its place), and the files named by the
// w flag (s/x/y/w FILE writes the lines it changed to FILE).
func sedSubstFlags(script string) (exec bool, wfiles []string) {
	for i := 0; i < len(script); i++ {
		if script[i] != 's' || i+1 >= len(script) {
			continue
		}
		if i > 0 && !strings.ContainsRune("\n;{}! \t0123456789$/", rune(script[i-1])) {
			continue
		}
		d := script[i+1]
		if d == '\\' || d == '\n' || d == ' ' || (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') || (d >= '0' && d <= '9') {
			continue
		}
		j, parts := i+2, 0
		for ; j < len(script) && parts < 2; j++ {
			switch script[j] {
			case '\\':
				j++
			case d:
				parts++
			}
		}
		if parts < 2 {
			continue
		}
		for ; j < len(script) && strings.IndexByte("gpiImMe0123456789w", script[j]) >= 0; j++ {
			if script[j] == 'e' {
				exec = true
			}
			if script[j] == 'w' {
				// The file name is the rest of the line.
				name, _, _ := strings.Cut(script[j+1:], "\n")
				if name = strings.TrimSpace(name); name != "" {
					wfiles = append(wfiles, name)
				}
				j = len(script) - 1
				if k := strings.IndexByte(script[i:], '\n'); k >= 0 {
					j = i + k
				}
				break
			}
		}
		i = j - 1
	}
	return exec, wfiles
}

var gitCloneOpts = shOpts("-b --branch -o --origin -u --upload-pack --reference --reference-if-able --separate-git-dir --depth --shallow-since --shallow-exclude -c --config --filter --template -j --jobs --bundle-uri --server-option")

// hGit reads git clone URL [DIR]: a Download of the repository into DIR
// (by default the URL's last element without .git), so that running a
// script of it in the same command is a download run unread.
func hGit(c *shCall) *shStream {
	args := c.args()
	i := 0
	worktree := shLit(".")
	for i < len(args) && args[i].known && strings.HasPrefix(args[i].val, "-") {
		if args[i].val == "-C" && i+1 < len(args) {
			worktree = args[i+1]
		}
		if args[i].val == "-C" || args[i].val == "-c" {
			i++
		}
		i++
	}
	if i < len(args) && args[i].known && args[i].val == "clean" {
		c.gitClean(worktree, args[i+1:])
		return c.filter()
	}
	if i < len(args) && args[i].known && (args[i].val == "checkout" || args[i].val == "restore") {
		c.gitPathspecs(args[i].val, args[i+1:])
		return c.filter()
	}
	if i < len(args) && args[i].known && args[i].val == "apply" {
		c.gitApply(args[i+1:])
		return c.filter()
	}
	if i < len(args) && args[i].known && args[i].val == "config" {
		c.gitConfigSet(args[i+1:])
		return c.filter()
	}
	for _, a := range args[i:] {
		if a.known && strings.HasPrefix(a.val, "ext::") {
			// git's ext transport runs its command (with % escapes)
			// instead of connecting: ext::sh -c touch% /tmp/x.
			c.r.run(gitExtCommand(a.val[len("ext::"):]), nil, nil)
		}
	}
	if i >= len(args) || !args[i].known || args[i].val != "clone" {
		return c.filter()
	}
	p := c.parseOpts(args[i+1:], gitCloneOpts, false)
	if len(p.ops) == 0 || !p.ops[0].known {
		return c.filter()
	}
	u := p.ops[0].val
	if !strings.Contains(u, "://") && !strings.Contains(u, "@") {
		return c.filter() // a local repository
	}
	dir := ""
	if len(p.ops) > 1 {
		if !p.ops[1].known {
			return c.filter()
		}
		dir = p.ops[1].val
	} else {
		dir = strings.TrimSuffix(path.Base(strings.TrimRight(u, "/")), ".git")
	}
	host, port := shURLParts(u)
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: u}})
	c.r.s.add(Effect{Kind: Download, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: u}, Path: c.r.path(dir, false), Recursive: true})
	return c.filter()
}

// tarTransformTarget reads a tar --transform expression (s/REGEX/REPL/):
// a replacement with no back-reference names the one file every member it
// matches is written to (under the extraction directory unless -P keeps
// it absolute); one not known statically may name any file there.
func (c *shCall) tarTransformTarget(x, dir sword, abs bool) {
	if !x.known {
		c.r.s.unknown(false, "tar: member names transformed by an expression not known statically: %s", x.arg)
		return
	}
	for _, expr := range strings.Split(x.val, ";") {
		if len(expr) < 4 || expr[0] != 's' {
			continue
		}
		parts := strings.Split(expr[2:], expr[1:2])
		if len(parts) < 2 {
			continue
		}
		repl := parts[1]
		if strings.ContainsAny(repl, "&\\") || repl == "" {
			continue
		}
		switch {
		case abs && strings.HasPrefix(repl, "/"):
			c.file(Write, shLit(repl), nil)
		case dir.known:
			c.file(Write, shLit(strings.TrimSuffix(dir.val, "/")+"/"+strings.TrimLeft(repl, "/")), nil)
		}
	}
}

// gitClean reads git clean -f: the untracked files of the working tree
// (with -x the ignored ones too, -d whole directories) are deleted, under
// the pathspecs given or the whole tree (DIR/*, recursive); -n, --dry-run
// and -i delete nothing here.
func (c *shCall) gitClean(dir sword, args []sword) {
	p := c.parseOpts(args, shOpts("-e --exclude"), false)
	if !p.has("-f", "--force") || p.has("-n", "--dry-run", "-i", "--interactive") {
		return
	}
	if len(p.ops) == 0 {
		if !dir.known {
			c.r.s.unknown(false, "git clean: a working tree not known statically: %s", dir.arg)
			return
		}
		c.file(Delete, shLit(strings.TrimSuffix(dir.val, "/")+"/*"), func(e *Effect) { e.Recursive = true })
		return
	}
	for _, o := range p.ops {
		if o.known && !strings.HasPrefix(o.val, "/") && dir.known && dir.val != "." {
			o = shLit(strings.TrimSuffix(dir.val, "/") + "/" + o.val)
		}
		c.file(Delete, o, func(e *Effect) { e.Recursive = true })
	}
}

// hShopt reads shopt -s dotglob and -u dotglob: whether the script's
// globs match names with a leading dot from here on.
func hShopt(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	for _, o := range p.ops {
		if o.known && o.val == "dotglob" {
			switch {
			case p.has("-s"):
				c.r.s.dotglob = true
			case p.has("-u"):
				c.r.s.dotglob = false
			}
		}
	}
	return c.filter()
}

// gitExtCommand splits the command of a git ext:: URL into words as
// git-remote-ext does: unescaped spaces separate words, "% " is a space,
// "%%" a percent sign, and %s, %S, %G stand for values git fills in.
func gitExtCommand(spec string) []sword {
	var ws []sword
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			ws = append(ws, shLit(b.String()))
			b.Reset()
		}
	}
	for i := 0; i < len(spec); i++ {
		switch {
		case spec[i] == ' ':
			flush()
		case spec[i] == '%' && i+1 < len(spec):
			i++
			switch spec[i] {
			case ' ':
				b.WriteByte(' ')
			case '%':
				b.WriteByte('%')
			case 's', 'S':
				b.WriteString("git-upload-pack")
			case 'G':
				b.WriteString("repo")
			}
		default:
			b.WriteByte(spec[i])
		}
	}
	flush()
	return ws
}

// gitApply reads git apply: the files a patch names are not read, but
// --directory DIR puts them under DIR (a tree written there), and
// --unsafe-paths lets them be anywhere (a tree written under /). Without
// either, git writes inside the working tree only. --check, --stat,
// --numstat and --summary write nothing.
func (c *shCall) gitApply(args []sword) {
	p := c.parseOpts(args, shOpts("--directory -p -C --exclude --include --whitespace --build-fake-ancestor"), false)
	if p.has("--check", "--stat", "--numstat", "--summary") && !p.has("--apply") {
		return
	}
	if d, ok := p.get("--directory"); ok {
		c.file(Write, d, func(e *Effect) { e.Recursive = true })
		return
	}
	if p.has("--unsafe-paths") {
		c.file(Write, shLit("/"), func(e *Effect) { e.Recursive = true })
	}
}

// gitPathspecs reads git checkout and git restore with paths, which are
// written from the index or a commit (recursively for a directory): for
// restore every operand; for checkout the operands after "--", or without
// "--" each operand that reads as a path (one with a "/" or a ".", or one
// on disk: otherwise it names a branch or commit, and the whole tree
// changes as with git switch, which is left alone). git restore --staged
// alone changes the index only.
func (c *shCall) gitPathspecs(sub string, args []sword) {
	var before, after []sword
	dashdash, staged, worktree, branch := false, false, false, false
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case dashdash:
			after = append(after, a)
		case a.known && a.val == "--":
			dashdash = true
		case a.known && strings.HasPrefix(a.val, "-") && a.val != "-":
			name, _, hasVal := strings.Cut(a.val, "=")
			staged = staged || name == "--staged" || name == "-S"
			worktree = worktree || name == "--worktree" || name == "-W"
			branch = branch || name == "-b" || name == "-B" || name == "--orphan"
			if gitPathspecValued[name] && !hasVal {
				k++
			}
		default:
			before = append(before, a)
		}
	}
	var paths []sword
	switch {
	case sub == "restore":
		if staged && !worktree {
			return
		}
		paths = append(before, after...)
	case dashdash:
		paths = after
	case branch:
		// checkout -b NAME [START]: a new branch from a commit.
	default:
		for _, w := range before {
			if !w.known || strings.ContainsAny(w.val, "/.") || c.onDisk(w.val) {
				paths = append(paths, w)
			}
		}
	}
	for _, w := range paths {
		w.tree = true
		c.file(Write, w, nil)
	}
}

// gitPathspecValued are the options of git checkout and restore that take
// a value as the next word.
var gitPathspecValued = map[string]bool{"-s": true, "--source": true, "-b": true, "-B": true, "--orphan": true,
	"--conflict": true, "--pathspec-from-file": true, "-U": true, "--unified": true}

// onDisk reports whether p names something on disk (false without a file
// system in view).
func (c *shCall) onDisk(p string) bool {
	fs := c.r.s.ctx.FS
	abs := c.r.s.resolve(p)
	if fs == nil || !strings.HasPrefix(abs, "/") {
		return false
	}
	_, err := fs.EvalSymlinks(abs)
	return err == nil
}

// hSqlite reads sqlite3 [OPTIONS] FILE [SQL…]: the database file is read
// (and may be written).
func hSqlite(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-cmd -separator -newline -nullvalue -init -mmap -pagecache -lookaside -maxsize -vfs -heap -zip"), false)
	if len(p.ops) > 0 && p.ops[0].known && p.ops[0].val != ":memory:" {
		c.file(Read, p.ops[0], nil)
	}
	return c.filter()
}

// hForeign reads an interpreter whose language the analysis does not parse
// (lua, tclsh, jjs, jrunscript, julia), socket(1) and zsh's ztcp
// conservatively: its inline code (-e CODE), or when it reads its program
// from the terminal the lines that follow it in the script, is scanned for
// the shape of a reverse or bind shell (see socketShellScan).
func hForeign(c *shCall) *shStream {
	var code []string
	args := c.args()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch {
		case (a.val == "-e" || a.val == "-E" || strings.EqualFold(a.val, "-c") || strings.EqualFold(a.val, "-command") ||
			a.val == "--eval" || a.val == "-eval" || a.val == "--execute") && i+1 < len(args):
			i++
			if args[i].known {
				code = append(code, args[i].val)
			} else {
				code = append(code, c.r.src) // not known statically: scan the script's text as written
			}
		case strings.HasPrefix(a.val, "--eval="):
			code = append(code, a.val[len("--eval="):])
		case strings.HasPrefix(a.val, "-e") && len(a.val) > 2:
			code = append(code, a.val[2:])
		}
	}
	inline := len(code) > 0
	if !inline && c.prog != "socket" && c.prog != "ztcp" {
		// lua "$F": the script named at run time runs unread.
		for _, a := range args {
			if a.known && strings.HasPrefix(a.val, "-") {
				continue
			}
			c.programFile(a)
			break
		}
	}
	if !inline && c.in != nil && c.in.kind == sText && c.prog != "socket" && c.prog != "ztcp" {
		code, inline = []string{c.in.text}, true // tclsh <<< 'exec …'
	}
	if len(code) == 0 {
		code = []string{c.r.src}
		if c.prog == "socket" || c.prog == "ztcp" {
			code = append(code, "socket "+strings.Join(shArgvOf(args), " "))
		}
	}
	if c.in != nil && c.in.kind == sNet && !inline && c.prog != "socket" && c.prog != "ztcp" {
		c.r.download(c.in, c.prog) // curl … | lua -: the program is what the network sends
	}
	c.r.s.socketShellScan(c.prog, strings.Join(code, "\n"))
	if c.prog != "socket" && c.prog != "ztcp" {
		c.r.s.socketUploadScan(c.prog, strings.Join(code, "\n"))
		if inline {
			c.foreignCommands(strings.Join(code, "\n"))
		}
	}
	return c.filter()
}

var (
	// A command given literally to a runner of a language the analysis
	// does not parse: Lua's os.execute("cmd")/io.popen("cmd"), Tcl's and
	// expect's exec/spawn words, Julia's run(`cmd`), AppleScript's do
	// shell script "cmd" (and Terminal's do script "cmd").
	foreignCmdRE = regexp.MustCompile(`(?:os\.execute|io\.popen|\bsystem)\s*\(?\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|\[\[([^\]]*)\]\])|(?m)(?:^|[\[;{])\s*(?:exec|spawn)\s+([^\]\n;}]+)|\brun\s*\(\s*` + "`([^`]*)`" + `|\bdo (?:shell )?script\s+"((?:[^"\\]|\\.)*)"`)
	// A file opened for writing by a literal path: Java's FileWriter and
	// FileOutputStream, PowerShell's Out-File/Set-Content/Add-Content
	// (group 1), or open/io.open/fopen with a "w" or "a" mode (groups 2, 3).
	foreignWriteRE = regexp.MustCompile(`(?:FileWriter|FileOutputStream|PrintWriter|Out-File|Set-Content|Add-Content)\s*\(?\s*(?:-(?:FilePath|Path)\s+)?["']?(/[^"'\s)]+)|(?:\bio\.open|\bfopen|\bopen)\s*\(\s*["'](/[^"']+)["']\s*,\s*["']([rwab+]+)["']`)
	// A literal absolute path followed by a write or append mode, the
	// arguments of an open call whatever comes first (Julia's
	// open(f -> write(f, x), "/p", "w"), Octave's fopen("/p", "w")).
	foreignModeWriteRE = regexp.MustCompile(`["'](/[^"'\s]+)["']\s*,\s*["']([wa][bt+]?)["']`)
	// A download by a literal URL into a literal path (Julia's
	// download(URL, PATH), jrunscript's cp(URL, PATH), R's
	// download.file(URL, PATH)).
	foreignDownloadRE = regexp.MustCompile(`\b(?:download(?:\.file|_file)?|cp|copy|urlretrieve)\s*\(\s*["'](https?://[^"'\s]+)["']\s*,\s*["']([/~][^"']*)["']`)
	// Any way of running a command in those languages.
	foreignRunnerRE = regexp.MustCompile(`\bdo (?:shell )?script\b|os\.execute|io\.popen|\bexec\b|\bspawn\b|\bsystem2?\s*\(|\brun\s*\(|ProcessBuilder|getRuntime|\bpopen\b|\bopen\s*"?\||\bpipeline\s*\(|\bshell\s*\(`)
)

// foreignCommands reads the commands inline code of a language the
// analysis does not parse gives literally to its command runners, as
// shell; a runner whose command is not literal makes the code run unread
// (an opaque Unknown into the interpreter).
func (c *shCall) foreignCommands(code string) {
	c.r.s.foreignCode(c.prog, code)
}

// foreignCode reads code of a language the analysis does not parse (a
// foreign interpreter's -e, a code tool's code in such a language): the
// commands it gives literally to its runners, as shell; a runner whose
// command is not literal is code run unread; files opened for writing by
// a literal path.
func (s *state) foreignCode(prog, code string) {
	if len(code) > MaxInput {
		return
	}
	found := foreignCmdRE.FindAllStringSubmatch(code, -1)
	for _, m := range found {
		cmd := m[1] + m[2] + m[3] + m[4] + m[5] + strings.ReplaceAll(m[6], `\"`, `"`)
		if m[4] != "" {
			cmd = strings.NewReplacer("{", "'", "}", "'").Replace(m[4]) // Tcl braces quote
		}
		s.shellIn(cmd, nil)
	}
	if len(foreignRunnerRE.FindAllStringIndex(code, -1)) > len(found) {
		s.opaque(prog, "", "%s code runs commands not known statically", prog)
	}
	for _, m := range foreignWriteRE.FindAllStringSubmatch(code, -1) {
		if m[1] != "" {
			s.add(Effect{Kind: Write, Program: prog, Path: s.resolve(m[1])})
		} else if strings.ContainsAny(m[3], "wa") {
			s.add(Effect{Kind: Write, Program: prog, Path: s.resolve(m[2]), Append: strings.Contains(m[3], "a")})
		}
	}
	for _, m := range foreignModeWriteRE.FindAllStringSubmatch(code, -1) {
		s.add(Effect{Kind: Write, Program: prog, Path: s.resolve(m[1]), Append: m[2][0] == 'a'})
	}
	for _, m := range foreignDownloadRE.FindAllStringSubmatch(code, -1) {
		host, port := urlHostPort(m[1])
		s.add(Effect{Kind: Connect, Program: prog, Detail: &Detail{URL: m[1], Host: host, Port: port}})
		s.add(Effect{Kind: Download, Program: prog, Path: s.resolve(m[2]), Detail: &Detail{URL: m[1], Host: host, Port: port}})
	}
}

// hCompile reads a compiler's, assembler's or linker's output file (-o
// FILE, -oFILE) as a write: gcc -x c /dev/null -o /etc/shadow empties a
// system file. What it compiles is not read.
func hCompile(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-o"), false)
	for _, o := range p.all("-o") {
		c.file(Write, o, nil)
	}
	return c.filter()
}

// goWriteRE is a file Go source opens or writes by a literal absolute
// path (os.WriteFile, os.Create, os.OpenFile, ioutil.WriteFile); OpenFile
// is counted whatever its flags.
var goWriteRE = regexp.MustCompile(`\b(?:os|ioutil)\.(?:WriteFile|Create|OpenFile)\s*\(\s*"(/[^"]+)"`)

// hGo reads go run FILE.go when the same script wrote FILE.go with literal
// text: its source is scanned as foreign code (see socketShellScan).
func hGo(c *shCall) *shStream {
	args := c.args()
	if len(args) == 0 || !args[0].known || args[0].val != "run" {
		return c.filter()
	}
	for _, a := range args[1:] {
		if a.known && strings.HasSuffix(a.val, ".go") {
			if text, ok := c.r.written[c.r.path(a.val, false)]; ok {
				c.r.s.socketShellScan("go", text)
				for _, m := range goWriteRE.FindAllStringSubmatch(text, -1) {
					c.file(Write, shLit(m[1]), nil)
				}
			}
		}
	}
	return c.filter()
}

// hMake reads make -f - (or /dev/stdin) when the makefile comes from
// the command: its recipes (lines that start with a tab) and $(shell …)
// are read as shell; a makefile from the network is a download run by
// make, and one from a command's output is code that runs unread.
func hMake(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-f --file --makefile -C --directory -I --include-dir -j --jobs -l --load-average -o --old-file -W --what-if --assume-new -E --eval"), false)
	for _, ev := range p.all("-E", "--eval") {
		// --eval TEXT is makefile text: $(shell CMD) runs, $(file >F,…) writes.
		if !ev.known {
			c.r.s.opaque("make", outProg(ev), "make evaluates text not known statically: %s", ev.arg)
			continue
		}
		for _, m := range makeShellRE.FindAllStringSubmatch(ev.val, -1) {
			c.r.s.shellIn(m[1], nil)
		}
		for _, m := range makeFileRE.FindAllStringSubmatch(ev.val, -1) {
			c.file(Write, shLit(strings.TrimSpace(m[2])), func(e *Effect) { e.Append = m[1] == ">>" })
		}
	}
	files := p.all("-f", "--file", "--makefile")
	if len(files) == 0 {
		// make reads GNUmakefile, makefile or Makefile of its directory:
		// one the action wrote is read as a named one is.
		dir := "."
		if d, ok := p.get("-C", "--directory"); ok && d.known {
			dir = d.val
		}
		for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
			if _, ok := c.r.written[c.r.path(dir+"/"+name, false)]; ok {
				files = append(files, shLit(dir+"/"+name))
				break
			}
		}
	}
	for _, f := range files {
		text, ok := "", false
		switch {
		case f.known && (f.val == "-" || f.val == "/dev/stdin"):
			switch {
			case c.in == nil:
				continue
			case c.in.kind == sText:
				text, ok = c.in.text, true
			case c.in.kind == sNet:
				c.r.download(c.in, "make")
				continue
			default:
				c.r.feed("sh", "make", c.in, nil) // file content or a command's output
				continue
			}
		case f.known:
			text, ok = c.r.written[c.r.path(f.val, false)]
		default:
			c.programFile(f)
		}
		if !ok {
			continue
		}
		var recipes []string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "\t") {
				recipes = append(recipes, strings.TrimLeft(line, "\t@-+ "))
			}
		}
		for _, m := range makeShellRE.FindAllStringSubmatch(text, -1) {
			recipes = append(recipes, m[1])
		}
		c.r.s.shellIn(strings.Join(recipes, "\n"), nil)
	}
	return c.filter()
}

var (
	makeShellRE = regexp.MustCompile(`\$\(shell\s+([^)]*)\)`)
	makeFileRE  = regexp.MustCompile(`\$\(file\s*(>>?)\s*([^,)]+)`)
)

// hGdb reads the commands gdb runs from its command line: -ex 'python
// CODE' (and py, pi) as Python, -ex 'shell CMD' and -ex '!CMD' as shell.
func hGdb(c *shCall) *shStream {
	args := c.args()
	for i := 0; i+1 < len(args); i++ {
		if args[i].known && (args[i].val == "-x" || args[i].val == "--command") && args[i+1].known &&
			(args[i+1].val == "/dev/stdin" || args[i+1].val == "-") && c.in != nil && c.in.kind == sNet {
			c.r.download(c.in, "gdb") // curl … | gdb -x /dev/stdin
		}
		if args[i].known && (args[i].val == "-x" || args[i].val == "--command") {
			c.programFile(args[i+1])
		}
		if !args[i].known || (args[i].val != "-ex" && args[i].val != "--ex" && args[i].val != "-eval-command" && args[i].val != "--eval-command") {
			continue
		}
		i++
		w := args[i]
		if !w.known {
			// gdb commands run programs (shell, !, python): code unread.
			c.r.s.opaque("gdb", outProg(w), "gdb: a command not known statically: %s", w.arg)
			continue
		}
		cmd := strings.TrimSpace(w.val)
		word, rest, _ := strings.Cut(cmd, " ")
		switch {
		case word == "dump" || word == "append":
			// dump [binary] value|memory FILE …: FILE is written.
			f := strings.Fields(rest)
			for len(f) > 0 && (f[0] == "binary" || f[0] == "verilog" || f[0] == "ihex" || f[0] == "srec" || f[0] == "tekhex" || f[0] == "value" || f[0] == "memory") {
				f = f[1:]
			}
			if len(f) > 0 {
				c.file(Write, shLit(f[0]), func(e *Effect) { e.Append = word == "append" })
			}
		case word == "python" || word == "py" || word == "pi" || word == "python-interactive":
			c.r.readCode("python", rest, nil)
		case word == "shell":
			c.r.readCode("sh", rest, nil)
		case strings.HasPrefix(cmd, "!"):
			c.r.readCode("sh", cmd[1:], nil)
		}
	}
	return c.filter()
}

// programFile records a program file named at run time that a program
// runs (awk -f "$F", sed -f, make -f, gdb -x, lua "$F"): code run unread,
// as bash "$F" is. A file named statically is a script by its path.
func (c *shCall) programFile(f sword) {
	if f.known {
		return
	}
	c.r.s.opaque(c.prog, outProg(f), "%s runs a program file whose path is not known statically: %s", c.prog, f.arg)
}

// hPwd prints the working directory when it is known, so that
// rm -rf "$(pwd)/.." or "$(cd ~ && pwd)" names its path.
func hPwd(c *shCall) *shStream {
	if cwd := c.r.s.cwd(); strings.HasPrefix(cwd, "/") {
		return &shStream{kind: sText, text: cwd + "\n"}
	}
	return c.filter()
}

// hPrintenv prints a variable the reader knows (printenv HOME is the
// agent's home).
func hPrintenv(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	if len(p.ops) == 1 && p.ops[0].known {
		if v, ok := c.r.lookup(p.ops[0].val); ok && (v == "" || strings.HasPrefix(v, "/") || !strings.HasPrefix(v, "~")) {
			return &shStream{kind: sText, text: v + "\n"}
		}
	}
	return c.filter()
}

// hPathOut prints what realpath, readlink -f, dirname and basename make of
// paths known statically ("$(realpath ~)", "$(dirname ~/.bashrc)" name
// the home); anything else is output not known.
func hPathOut(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("--relative-to --relative-base -s --suffix"), false)
	if len(p.ops) == 0 {
		return c.filter()
	}
	canon, multiple := c.prog == "realpath", false
	for _, o := range p.opts {
		n := o.name
		switch {
		case n == "--relative-to" || n == "--relative-base" || n == "-s" || n == "--suffix":
			return c.filter() // output relative to a base, or a suffix cut
		case n == "-a" || n == "--multiple":
			multiple = true
		case c.prog == "readlink" && (strings.HasPrefix(n, "--canonicalize") || (!strings.HasPrefix(n, "--") && strings.ContainsAny(n, "fem"))):
			canon = true
		case strings.HasPrefix(n, "--") && n != "--zero" && n != "--quiet" && n != "--silent" && n != "--no-newline" && n != "--logical" && n != "--physical" && !strings.HasPrefix(n, "--canonicalize"):
			return c.filter() // an option not read
		}
	}
	if c.prog == "readlink" && !canon {
		return c.filter() // the target of a link: on disk
	}
	if c.prog == "basename" && len(p.ops) > 1 && !multiple {
		return c.filter() // basename NAME SUFFIX
	}
	var b strings.Builder
	for _, w := range p.ops {
		if !w.known || w.val == "" {
			return c.filter()
		}
		var out string
		switch c.prog {
		case "dirname":
			out = path.Dir(strings.TrimRight(w.val, "/"))
			if strings.Trim(w.val, "/") == "" {
				out = "/"
			}
		case "basename":
			out = path.Base(w.val)
		default:
			out = c.r.path(w.val, false)
			if !strings.HasPrefix(out, "/") {
				return c.filter()
			}
		}
		b.WriteString(out)
		b.WriteByte('\n')
	}
	return &shStream{kind: sText, text: b.String()}
}

// hLs prints the operands of ls -d named statically ($(ls -d ~) is the
// home); a listing is output not known.
func hLs(c *shCall) *shStream {
	p := c.parseOpts(c.args(), nil, false)
	if len(p.ops) == 0 || len(p.opts) == 0 {
		return c.filter()
	}
	dir := false
	for _, o := range p.opts {
		switch o.name {
		case "-d", "--directory":
			dir = true
		case "-1":
		default:
			return c.filter()
		}
	}
	if !dir {
		return c.filter()
	}
	var b strings.Builder
	for _, w := range p.ops {
		if !w.known || w.glob || w.val == "" {
			return c.filter()
		}
		b.WriteString(w.val)
		b.WriteByte('\n')
	}
	return &shStream{kind: sText, text: b.String()}
}
