package effects

import (
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// ---- network ----

// shURLParts reads scheme://host:port/... (curl also takes a bare
// host/path, which is http).
func shURLParts(u string) (host, port string) {
	s := u
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	pu, err := url.Parse(s)
	if err != nil {
		rest := s[strings.Index(s, "://")+3:]
		h, _, _ := strings.Cut(rest, "/")
		return strings.ToLower(shStripUser(h)), ""
	}
	host, port = strings.ToLower(pu.Hostname()), pu.Port()
	if !validHost(host) {
		// Not a name a resolver answers for (curl's "it's" operand):
		// nothing is reached there.
		return "", ""
	}
	if port == "" {
		switch pu.Scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		case "ftp":
			port = "21"
		}
	}
	return host, port
}

// validHost reports whether h can name a host: letters, digits and
// - . _ (names, IPv4), : and % (IPv6 and its zone).
func validHost(h string) bool {
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.', r == '_', r == ':', r == '%':
		default:
			return false
		}
	}
	return true
}

func shURLHost(u string) string {
	h, _ := shURLParts(u)
	return h
}

// dynHost is the host a word names when part of it is a command's output:
// the literal text after the last part not known ("$(id).evil.example"
// is a name under evil.example).
func dynHost(w sword) string {
	s := strings.TrimLeft(w.suffix, ".")
	if strings.Contains(s, "/") {
		if strings.Contains(s, "://") {
			return shURLHost(s)
		}
		return ""
	}
	return s
}

// connectURL records a connection to the URL a word names; a URL built
// from a command's output is also a Send of that output.
func (c *shCall) connectURL(w sword) (host, port string, ok bool) {
	if !w.known {
		if w.dyn {
			h := dynHost(w)
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: h, Source: "output"}})
			c.r.s.unknown(false, "%s: address built from a command's output: %s", c.prog, w.arg)
			return h, "", false
		}
		c.r.s.unknown(false, "%s: address not known statically: %s", c.prog, w.arg)
		return "", "", false
	}
	host, port = shURLParts(w.val)
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: w.val}})
	return host, port, true
}

// sendStdin records that a command sends its standard input to a
// network destination.
func (c *shCall) sendStdin(host, port, u string) {
	c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: u, Source: c.in.source()}})
}

// namesFile reports whether a data argument not known statically names a
// file to send rather than the data itself: "@…" (also as the -T and
// --post-file readers pass their operand), or a --data-urlencode
// "name@…", as written.
func namesFile(w sword) bool {
	if strings.HasPrefix(w.val, "@") {
		return true
	}
	a := strings.TrimLeft(w.arg, `"'`)
	if strings.HasPrefix(a, "@") {
		return true
	}
	name, _, found := strings.Cut(a, "@")
	return found && name != "" && !strings.ContainsAny(name, "/ $=`(")
}

// dataSource reads curl's data argument: "@file" (or "@-": standard
// input), otherwise literal data.
func (c *shCall) dataSource(w sword, at bool) (source string, ok bool) {
	if !w.known {
		if at && namesFile(w) {
			// A file whose name is not known (-T "$F", -d "@$(ls …)"):
			// what is sent is its content, not the name's command output.
			c.r.s.unknown(false, "%s: source not known statically: %s", c.prog, w.arg)
			return "", false
		}
		if w.dyn {
			return "output", true
		}
		c.r.s.unknown(false, "%s: data not known statically: %s", c.prog, w.arg)
		return "", false
	}
	v := w.val
	// A file under a tree (find's {}) is read as the tree.
	file := func(f string) sword { return sword{arg: f, val: f, known: true, tree: w.tree} }
	if at {
		if f, found := strings.CutPrefix(v, "@"); found {
			if f == "-" {
				return c.in.source(), true
			}
			c.file(Read, file(f), nil)
			return c.r.path(f, false), true
		}
		if name, f, found := strings.Cut(v, "@"); found && !strings.ContainsAny(name, "/ ") {
			// --data-urlencode name@file
			if f == "-" {
				return c.in.source(), true
			}
			c.file(Read, file(f), nil)
			return c.r.path(f, false), true
		}
	}
	return "data", true
}

var curlOpts = shOpts("-d --data --data-binary --data-raw --data-ascii --data-urlencode --json -F --form --form-string -T --upload-file -o --output -X --request -H --header -u --user -A --user-agent -e --referer -b --cookie -c --cookie-jar -x --proxy -K --config --url -m --max-time --connect-timeout -w --write-out -r --range -E --cert --key --cacert --capath --resolve --connect-to --retry --retry-delay --retry-max-time --limit-rate -y --speed-time -Y --speed-limit -z --time-cond --output-dir -C --continue-at -D --dump-header --trace --trace-ascii --stderr --interface --dns-servers --doh-url -U --proxy-user --unix-socket --abstract-unix-socket -P --ftp-port -Q --quote --mail-from --mail-rcpt --variable --max-filesize --max-redirs --proto --proto-redir --aws-sigv4 --oauth2-bearer --pass --hostpubsha256 --pinnedpubkey --local-port --happy-eyeballs-timeout-ms --expect100-timeout --keepalive-time --tls-max --ciphers --curves --form-escape --noproxy --preproxy --proxy-header --request-target --sasl-authzid --service-name --socks4 --socks4a --socks5 --socks5-hostname -t --telnet-option")

// hAria2c reads aria2c [-d DIR] [-o NAME] URL…: each URL is downloaded to
// DIR/NAME (by default the working directory and the URL's last element).
func hAria2c(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-d --dir -o --out -i --input-file -x --max-connection-per-server -s --split -j --max-concurrent-downloads -t --timeout -m --max-tries -U --user-agent --header --http-user --http-passwd --all-proxy --load-cookies --save-cookies -T --torrent-file -M --metalink-file --seed-time --max-overall-download-limit --max-download-limit -l --log"), false)
	dir := shLit(".")
	if d, ok := p.get("-d", "--dir"); ok {
		dir = d
	}
	for _, f := range p.all("-i", "--input-file") {
		c.file(Read, f, nil)
		c.r.s.unknown(false, "aria2c: downloads listed in %s not known", f.arg)
	}
	out, hasOut := p.get("-o", "--out")
	for _, u := range p.ops {
		host, port, ok := c.connectURL(u)
		if !ok {
			continue
		}
		name := out
		if !hasOut {
			name = shLit(path.Base(strings.TrimRight(u.val, "/")))
		}
		to := sword{arg: dir.arg + "/" + name.arg, val: strings.TrimSuffix(dir.val, "/") + "/" + name.val, known: dir.known && name.known}
		if name.known && strings.HasPrefix(name.val, "/") {
			to = name // an absolute -o is taken as it is
		}
		c.downloadTo(u.val, host, port, to)
	}
	return nil
}

// curlConfigText returns the text of a curl config file the command
// shows: its standard input when literal (-K -, -K /dev/stdin) or a file
// the same command wrote with literal text.
func (c *shCall) curlConfigText(f sword) (string, bool) {
	switch {
	case !f.known:
		return "", false
	case f.val == "-" || f.val == "/dev/stdin":
		if c.in != nil && c.in.kind == sText {
			return c.in.text, true
		}
		return "", false
	}
	text, ok := c.r.written[c.r.path(f.val, false)]
	return text, ok
}

// curlConfigArgs turns a curl config file (one option a line: "name =
// value", "name value", "--name value", "# comment") into command-line
// words.
func curlConfigArgs(text string) []sword {
	var out []sword
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, _ := strings.Cut(line, " ")
		if n, v, ok := strings.Cut(name, "="); ok {
			name, val = n, v+" "+val
		}
		val = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(val), "="))
		val = strings.TrimSpace(strings.TrimPrefix(val, ":"))
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		if !strings.HasPrefix(name, "-") {
			if len(name) == 1 {
				name = "-" + name
			} else {
				name = "--" + name
			}
		}
		out = append(out, shLit(name))
		if val != "" {
			out = append(out, shLit(val))
		}
	}
	return out
}

func hCurl(c *shCall) *shStream {
	p := c.parseOpts(c.args(), curlOpts, false)
	urls := append(append(c.r.s.mem.swords(len(p.ops)), p.ops...), p.all("--url")...)
	for _, f := range p.all("-K", "--config") {
		if text, ok := c.curlConfigText(f); ok {
			// Options the command shows (curl -K- <<< 'upload-file = F …'):
			// read as if they were on the command line.
			if c.r.s.depth < MaxDepth {
				c.r.s.depth++
				c.r.run(append([]sword{shLit("curl")}, curlConfigArgs(text)...), c.in, c.env)
				c.r.s.depth--
			}
			continue
		}
		if !f.known || f.val != "-" {
			c.file(Read, f, nil)
		}
		// The options may name a file to upload, a URL, a proxy: what is
		// sent is not known (exfiltration.unknown_data holds it).
		c.r.s.unknown(false, "curl: source not known statically: options read from %s", f.arg)
	}
	var sources []string
	for _, o := range p.opts {
		switch o.name {
		case "-d", "--data", "--data-binary", "--data-ascii", "--json":
			if s, ok := c.dataSource(o.val, true); ok {
				sources = append(sources, s)
			}
		case "--data-urlencode":
			if s, ok := c.dataSource(o.val, true); ok {
				sources = append(sources, s)
			}
		case "--data-raw", "--form-string":
			if s, ok := c.dataSource(o.val, false); ok {
				sources = append(sources, s)
			}
		case "-F", "--form":
			v := o.val
			if v.known {
				_, val, _ := strings.Cut(v.val, "=")
				val, _, _ = strings.Cut(val, ";")
				if f, found := strings.CutPrefix(val, "@"); found {
					v = sword{arg: "@" + f, val: "@" + f, known: true, tree: v.tree}
				} else if f, found := strings.CutPrefix(val, "<"); found {
					v = sword{arg: "@" + f, val: "@" + f, known: true, tree: v.tree}
				} else {
					v = shLit(val)
				}
			} else if _, val, found := strings.Cut(strings.TrimLeft(v.arg, `"'`), "="); found && (strings.HasPrefix(val, "@") || strings.HasPrefix(val, "<")) {
				v.val = "@" // name=@FILE with FILE not known: a file is sent
			}
			if s, ok := c.dataSource(v, true); ok {
				sources = append(sources, s)
			}
		case "-T", "--upload-file":
			if o.val.known && (o.val.val == "-" || o.val.val == ".") {
				sources = append(sources, c.in.source())
			} else if s, ok := c.dataSource(sword{arg: o.val.arg, val: "@" + o.val.val, known: o.val.known, dyn: o.val.dyn, tree: o.val.tree}, true); ok {
				sources = append(sources, s)
			}
		}
	}
	type ep struct{ host, port, url string }
	var epBuf [2]ep
	eps := epBuf[:0]
	for _, u := range urls {
		if h, pt, ok := c.connectURL(u); ok {
			eps = append(eps, ep{h, pt, u.val})
		}
	}
	// A request over a local socket goes to whatever serves it (the
	// container runtime's API, say), whatever host the URL names.
	for _, u := range p.all("--unix-socket", "--abstract-unix-socket") {
		c.unixConnect(u)
	}
	// A proxy is reached too, and sees every request (and, for http://
	// URLs, what is sent).
	for _, x := range p.all("-x", "--proxy", "--preproxy", "--socks4", "--socks4a", "--socks5", "--socks5-hostname") {
		c.connectURL(x)
	}
	for _, src := range sources {
		for _, e := range eps {
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: e.host, Port: e.port, URL: e.url, Source: src}})
		}
	}
	dir := ""
	if d, ok := p.get("--output-dir"); ok {
		dir = strings.TrimSuffix(d.val, "/") + "/"
	}
	written := false
	if o, ok := p.get("-o", "--output"); ok {
		written = true
		if !(o.known && o.val == "-") {
			for _, e := range eps {
				c.downloadTo(e.url, e.host, e.port, sword{arg: o.arg, val: dir + o.val, known: o.known})
			}
			if len(eps) == 0 {
				c.file(Write, o, nil)
			}
		} else {
			written = false
		}
	}
	if p.has("-O", "--remote-name", "--remote-name-all", "-J") && !written {
		written = true
		for _, e := range eps {
			name := path.Base(strings.SplitN(strings.SplitN(e.url, "?", 2)[0], "#", 2)[0])
			if name == "" || name == "/" || name == "." || strings.HasSuffix(e.url, "/") {
				name = "index.html"
			}
			c.downloadTo(e.url, e.host, e.port, shLit(dir+name))
		}
	}
	if written {
		return nil
	}
	if len(eps) > 0 {
		return c.r.s.mem.stream(shStream{kind: sNet, url: eps[0].url, host: eps[0].host, port: eps[0].port, prog: c.prog})
	}
	return c.filter()
}

func (c *shCall) downloadTo(u, host, port string, to sword) {
	if !to.known {
		c.r.s.unknown(false, "%s: download written to a path not known statically: %s", c.prog, to.arg)
		return
	}
	p := c.r.path(to.val, false)
	c.r.s.add(Effect{Kind: Download, Program: c.prog, Detail: &Detail{URL: u, Host: host, Port: port}, Path: p})
	if c.r.fetched == nil {
		c.r.fetched = map[string]*shStream{}
	}
	c.r.fetched[p] = &shStream{kind: sNet, url: u, host: host, port: port, prog: c.prog}
}

var wgetOpts = shOpts("-O --output-document -o --output-file -a --append-output -P --directory-prefix --post-data --post-file --body-data --body-file --method --header -U --user-agent -i --input-file -e --execute --user --password --http-user --http-password -t --tries -T --timeout -w --wait -Q --quota -l --level --limit-rate -B --base --referer --load-cookies --save-cookies -D --domains --exclude-domains -A --accept -R --reject --ca-certificate --certificate --private-key --bind-address --dns-timeout --connect-timeout --read-timeout --proxy-user --proxy-password --default-page --restrict-file-names --config")

func hWget(c *shCall) *shStream {
	p := c.parseOpts(c.args(), wgetOpts, false)
	listed := false
	if f, ok := p.get("-i", "--input-file"); ok {
		c.file(Read, f, nil)
		c.r.s.unknown(false, "wget fetches the URLs listed in %s", f.arg)
		listed = true
	}
	var sources []string
	for _, o := range p.opts {
		switch o.name {
		case "--post-file", "--body-file":
			if s, ok := c.dataSource(sword{arg: o.val.arg, val: "@" + o.val.val, known: o.val.known, dyn: o.val.dyn}, true); ok {
				sources = append(sources, s)
			}
		case "--post-data", "--body-data":
			if s, ok := c.dataSource(o.val, false); ok {
				sources = append(sources, s)
			}
		}
	}
	var first *shStream
	out, hasOut := p.get("-O", "--output-document")
	prefix, _ := p.get("-P", "--directory-prefix")
	rec := p.has("-r", "--recursive", "-m", "--mirror")
	for _, u := range p.ops {
		host, port, ok := c.connectURL(u)
		if !ok {
			continue
		}
		for _, src := range sources {
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: u.val, Source: src}})
		}
		switch {
		case hasOut && out.known && out.val == "-":
			if first == nil {
				first = &shStream{kind: sNet, url: u.val, host: host, port: port, prog: c.prog}
			}
		case hasOut:
			c.downloadTo(u.val, host, port, out)
		default:
			name := path.Base(strings.SplitN(u.val, "?", 2)[0])
			if name == "" || name == "/" || name == "." || strings.HasSuffix(u.val, "/") || name == host {
				name = "index.html"
			}
			to := name
			if rec {
				to = host
			}
			if prefix.known && prefix.val != "" {
				to = strings.TrimSuffix(prefix.val, "/") + "/" + to
			}
			c.downloadTo(u.val, host, port, shLit(to))
			if rec {
				c.r.s.out[len(c.r.s.out)-1].Recursive = true
			}
		}
	}
	if first != nil {
		return first
	}
	if listed && hasOut && out.known && out.val == "-" {
		// wget -i list -O - | sh: what it prints comes from URLs not
		// known statically (code run from it is unread, as for curl "$U").
		return shOutputOf(c.prog)
	}
	return nil
}

var ncOpts = shOpts("-e -c -p -s -w -i -q -x -X -P -O -I -T -V -g -G -M -m --exec --sh-exec --lua-exec -o --output --source-port --proxy --proxy-type --proxy-auth --source -W --wait")

func hNc(c *shCall) *shStream {
	p := c.parseOpts(c.args(), ncOpts, false)
	listen := p.has("-l", "--listen")
	if p.has("-U", "--unixsock") && !listen && len(p.ops) > 0 {
		c.unixConnect(p.ops[0])
		return c.filter()
	}
	var host, port string
	ops := p.ops
	if pp, ok := p.get("-p", "--source-port"); ok && listen {
		port = pp.val
	}
	switch {
	case listen && len(ops) == 1:
		port = ops[0].val
	case listen && len(ops) >= 2:
		host, port = ops[0].val, ops[1].val
	case len(ops) >= 2:
		host, port = ops[0].val, ops[1].val
	case len(ops) == 1:
		host = ops[0].val
		if h, pt, err := net.SplitHostPort(host); err == nil {
			host, port = h, pt
		}
	}
	for _, o := range ops {
		if !o.known {
			c.r.s.unknown(false, "%s: address not known statically: %s", c.prog, o.arg)
		}
	}
	if listen {
		c.r.s.add(Effect{Kind: Listen, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	} else {
		c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	}
	sock := &shStream{kind: sNet, host: host, port: port, prog: c.prog}
	if e, ok := p.get("-e", "--exec"); ok {
		c.remoteShell(e, false, sock)
		return nil
	}
	if e, ok := p.get("-c", "--sh-exec"); ok {
		c.remoteShell(e, true, sock)
		return nil
	}
	if c.in != nil && !p.has("-z") {
		c.sendStdin(host, port, "")
	}
	return sock
}

// remoteShell records a program run with its input and output on a
// network socket: it runs what the network sends (a Download into it)
// and sends its output back.
func (c *shCall) remoteShell(w sword, viaShell bool, sock *shStream) {
	if !w.known {
		// A program known only at run time on a socket, as "$CMD" is.
		c.r.s.opaque("program", outProg(w), "%s runs a program not known statically: %s", c.prog, w.arg)
		return
	}
	var ws []sword
	if viaShell {
		ws = []sword{shLit("sh"), shLit("-c"), w}
	} else {
		ws = c.r.splitText(w.val)
	}
	if len(ws) == 0 {
		return
	}
	prog := path.Base(ws[0].val)
	if len(ws) > 2 && shLangOf(prog) == "sh" && ws[1].val == "-c" {
		c.r.run(ws, nil, nil)
	} else {
		c.r.run(ws, sock, nil)
	}
	if shLangOf(prog) == "" || len(ws) > 2 && ws[1].val == "-c" && !viaShell {
		// A program that is not a shell still has its input from and its
		// output to the network.
		c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: sock.host, Port: sock.port, Source: "output"}})
		return
	}
	if viaShell {
		c.r.download(sock, "sh")
	}
	c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: sock.host, Port: sock.port, Source: "output"}})
}

// socatAddr is one of socat's two addresses.
type socatAddr struct {
	kind       string // net, listen, exec, system, file, stdio
	host, port string
	arg        string
}

func parseSocatAddr(a string) socatAddr {
	if a == "-" || strings.EqualFold(a, "stdio") || strings.EqualFold(a, "stdin") || strings.EqualFold(a, "stdout") {
		return socatAddr{kind: "stdio"}
	}
	typ, rest, found := strings.Cut(a, ":")
	if !found {
		typ, _, _ = strings.Cut(a, ",")
		rest = ""
	}
	t := strings.ToUpper(typ)
	switch {
	case strings.Contains(t, "LISTEN") || t == "TCP-L" || t == "TCP4-L" || t == "TCP6-L":
		port, _, _ := strings.Cut(rest, ",")
		return socatAddr{kind: "listen", port: port}
	case strings.HasPrefix(t, "TCP") || strings.HasPrefix(t, "UDP") || strings.HasPrefix(t, "OPENSSL") || t == "SSL" || strings.HasPrefix(t, "SCTP"):
		hp, _, _ := strings.Cut(rest, ",")
		h, pt, err := net.SplitHostPort(hp)
		if err != nil {
			h = hp
		}
		return socatAddr{kind: "net", host: h, port: pt}
	case t == "EXEC" || t == "SYSTEM":
		cmd := rest
		if len(cmd) > 0 && (cmd[0] == '\'' || cmd[0] == '"') {
			if end := strings.IndexByte(cmd[1:], cmd[0]); end >= 0 {
				cmd = cmd[1 : end+1]
			}
		} else {
			cmd, _, _ = strings.Cut(cmd, ",")
		}
		return socatAddr{kind: strings.ToLower(t), arg: cmd}
	case strings.HasPrefix(t, "UNIX") || strings.HasPrefix(t, "ABSTRACT"):
		f, _, _ := strings.Cut(rest, ",")
		return socatAddr{kind: "unix", arg: f}
	case t == "FILE" || t == "OPEN" || t == "CREATE" || t == "GOPEN" || t == "CREAT":
		f, _, _ := strings.Cut(rest, ",")
		return socatAddr{kind: "file", arg: f}
	}
	if strings.HasPrefix(a, "/") {
		f, _, _ := strings.Cut(a, ",")
		return socatAddr{kind: "file", arg: f}
	}
	return socatAddr{kind: "other", arg: a}
}

func hSocat(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-T -b -t -lf -lp -L -W -ls -lu -lm -ly"), false)
	var addrs []socatAddr
	for _, w := range p.ops {
		if !w.known {
			// The address type is usually literal even when the host
			// is not (tcp:$RHOST:$RPORT).
			a := parseSocatAddr(w.arg)
			if a.kind == "other" && codeHidden(w) {
				// Not even the type is literal ("$A"): it may be
				// EXEC:/SYSTEM:, a program known only at run time.
				c.r.s.opaque("program", outProg(w), "socat: address not known statically: %s", w.arg)
			} else {
				c.r.s.unknown(false, "socat: address not known statically: %s", w.arg)
			}
			addrs = append(addrs, a)
			continue
		}
		addrs = append(addrs, parseSocatAddr(w.val))
	}
	var sock *shStream
	for _, a := range addrs {
		switch a.kind {
		case "net":
			c.r.s.add(Effect{Kind: Connect, Program: "socat", Detail: &Detail{Host: a.host, Port: a.port}})
			sock = &shStream{kind: sNet, host: a.host, port: a.port}
		case "listen":
			c.r.s.add(Effect{Kind: Listen, Program: "socat", Detail: &Detail{Port: a.port}})
			sock = &shStream{kind: sNet, port: a.port}
		}
	}
	for _, a := range addrs {
		switch a.kind {
		case "exec", "system":
			if sock == nil {
				c.shellText("socat", shLit(a.arg), nil)
				continue
			}
			c.remoteShell(shLit(a.arg), a.kind == "system", sock)
		case "unix":
			c.unixConnect(shLit(a.arg))
		case "file":
			c.file(Read, shLit(a.arg), nil)
			c.file(Write, shLit(a.arg), nil)
			if sock != nil {
				c.r.s.add(Effect{Kind: Send, Program: "socat", Detail: &Detail{Host: sock.host, Port: sock.port, Source: c.r.path(a.arg, false)}})
			}
		case "stdio":
			if sock != nil && c.in != nil {
				c.sendStdin(sock.host, sock.port, "")
			}
		}
	}
	if sock != nil {
		return sock
	}
	return c.filter()
}

func hTelnet(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-l -n -e -b -k -X"), false)
	if len(p.ops) == 0 {
		return nil
	}
	host := p.ops[0].val
	port := ""
	if len(p.ops) > 1 {
		port = p.ops[1].val
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	if c.in != nil {
		c.sendStdin(host, port, "")
	}
	return &shStream{kind: sNet, host: host, port: port, prog: c.prog}
}

var sshOpts = shOpts("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B")

func hSSH(c *shCall) *shStream {
	p := c.parseOpts(c.args(), sshOpts, true)
	if len(p.rest) == 0 {
		return nil
	}
	dest := p.rest[0]
	host := shStripUser(strings.TrimPrefix(dest.val, "ssh://"))
	port := "22"
	if h, pt, err := net.SplitHostPort(host); err == nil && strings.HasPrefix(dest.val, "ssh://") {
		host, port = h, pt
	}
	if pt, ok := p.get("-p"); ok {
		port = pt.val
	}
	if !dest.known {
		c.r.s.unknown(false, "ssh: host not known statically: %s", dest.arg)
	}
	c.r.s.add(Effect{Kind: Connect, Program: "ssh", Detail: &Detail{Host: host, Port: port}})
	for _, o := range p.all("-L", "-D") {
		parts := strings.Split(o.val, ":")
		if len(parts) == 1 || len(parts) == 3 {
			c.r.s.add(Effect{Kind: Listen, Program: "ssh", Detail: &Detail{Port: parts[0]}})
		} else if len(parts) == 4 {
			c.r.s.add(Effect{Kind: Listen, Program: "ssh", Detail: &Detail{Host: parts[0], Port: parts[1]}})
		}
	}
	cmd := p.rest[1:]
	start := len(c.r.s.out)
	if len(cmd) > 0 {
		c.shellText("ssh", shJoinWords(cmd), nil)
		if c.in != nil {
			c.sendStdin(host, port, "")
		}
	} else if c.in != nil {
		if c.in.kind == sText {
			c.r.s.shellIn(c.in.text, nil)
		} else {
			c.sendStdin(host, port, "")
			c.r.s.unknown(false, "ssh runs on %s commands from %s", host, c.in.source())
		}
	}
	for i := start; i < len(c.r.s.out); i++ {
		e := &c.r.s.out[i]
		if e.Remote() == "" && !(e.Kind == Send && e.Program == "ssh") {
			e.ownDetail().Remote = host
		}
	}
	return c.filter()
}

func hScp(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-P -i -o -F -c -l -S -J -D -X"), false)
	if len(p.ops) < 2 {
		return nil
	}
	srcs, dst := p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1]
	c.transfer(srcs, dst, p.has("-r"), false)
	return nil
}

// transfer is scp's and rsync's copy: to a remote host it is a Send of
// each local source, from one a Download, between local paths a copy.
func (c *shCall) transfer(srcs []sword, dst sword, rec, del bool) {
	dhost, dpath, dremote := shRemoteSpec(dst.val)
	if dremote && dst.known {
		c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: dhost, Port: "22"}})
	}
	for _, s := range srcs {
		if !s.known {
			c.unknownSource(s, dremote && dst.known)
			continue
		}
		shost, spath, sremote := shRemoteSpec(s.val)
		switch {
		case dremote && !sremote:
			c.file(Read, s, func(e *Effect) { e.Recursive = e.Recursive || rec })
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: dhost, Source: c.r.path(s.val, false)}, Path: dpath, Recursive: rec})
		case sremote && !dremote:
			c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: shost, Port: "22"}})
			if dst.known {
				c.r.s.add(Effect{Kind: Download, Program: c.prog, Detail: &Detail{Host: shost, URL: s.val}, Path: c.r.path(dst.val, false), Recursive: rec})
			}
			_ = spath
		case !sremote && !dremote:
			c.file(Read, s, func(e *Effect) { e.Recursive = e.Recursive || rec })
			c.file(Write, dst, func(e *Effect) { e.Recursive = e.Recursive || rec })
		}
	}
	if del && !dremote {
		c.file(Delete, dst, func(e *Effect) { e.Recursive = true })
	}
}

// unknownSource records a copy's source that is not known statically. Sent
// to another host (toRemote), it is "source not known statically", which
// the exfiltration pack holds; copied here (a local copy, or a download
// when it names another host at run time), "copy from a source not known
// statically". It returns toRemote.
func (c *shCall) unknownSource(s sword, toRemote bool) bool {
	if toRemote {
		c.r.s.unknown(false, "%s: source not known statically: %s", c.prog, s.arg)
	} else {
		c.r.s.unknown(false, "%s: copy from a source not known statically: %s", c.prog, s.arg)
	}
	return toRemote
}

func hRsync(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-e --rsh --exclude --include --exclude-from --include-from --files-from --filter -f --port --password-file --log-file --chmod --chown -T --temp-dir --backup-dir --suffix --bwlimit --timeout --partial-dir --compare-dest --link-dest --copy-dest -B --block-size --max-size --min-size --out-format --info --debug -M --remote-option --rsync-path --usermap --groupmap --iconv --skip-compress --checksum-choice --compress-choice"), false)
	if len(p.ops) < 2 {
		return nil
	}
	rec := p.has("-r", "-a", "--recursive", "--archive")
	del := p.has("--delete", "--delete-before", "--delete-after", "--delete-during", "--delete-delay", "--delete-excluded", "--remove-source-files")
	c.transfer(p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1], rec, del)
	return nil
}

func hSftp(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-b -B -c -D -F -i -J -l -o -P -R -S -s"), false)
	if len(p.ops) == 0 {
		return nil
	}
	host, _, _ := shRemoteSpec(p.ops[0].val + ":")
	c.r.s.add(Effect{Kind: Connect, Program: "sftp", Detail: &Detail{Host: host, Port: "22"}})
	var batch string
	fromFile := false
	if b, ok := p.get("-b"); ok {
		c.file(Read, b, nil)
		if !b.known {
			// A batch file named at run time: its commands (put, and
			// !CMD run by a local shell) are unread.
			c.r.s.opaque("sftp", outProg(b), "sftp runs the commands in %s", b.arg)
			return nil
		}
		if b.val != "-" {
			text, ok := c.r.batchFile(c.r.path(b.val, false))
			if !ok {
				c.r.s.unknown(false, "sftp runs the commands in %s", b.arg)
				return nil
			}
			batch, fromFile = text, true
		}
	}
	if fromFile {
		// the batch is the file's
	} else if c.in != nil && c.in.kind == sText {
		batch = c.in.text
	} else if c.in != nil {
		c.r.s.unknown(false, "sftp runs commands from %s", c.in.source())
		return nil
	}
	for _, line := range strings.Split(batch, "\n") {
		line = strings.TrimLeft(strings.TrimSpace(line), "-@")
		if cmd, ok := strings.CutPrefix(line, "!"); ok {
			// !CMD runs CMD in a local shell.
			c.r.s.shellIn(cmd, nil)
			continue
		}
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "put" || f[0] == "mput") {
			c.file(Read, shLit(f[1]), nil)
			c.r.s.add(Effect{Kind: Send, Program: "sftp", Detail: &Detail{Host: host, Source: c.r.path(f[1], false)}})
		}
		c.sessionGet(f, "sftp://"+host, host, "22")
	}
	return nil
}

// sessionGet reads a get command typed into a file transfer session (ftp,
// sftp, smbclient): get REMOTE [LOCAL] downloads REMOTE into LOCAL, by
// default its base name in the working directory.
func (c *shCall) sessionGet(f []string, base, host, port string) {
	if len(f) < 2 || (f[0] != "get" && f[0] != "mget" && f[0] != "recv" && f[0] != "reget" && f[0] != "newer") {
		return
	}
	local := path.Base(strings.ReplaceAll(f[1], "\\", "/"))
	if len(f) >= 3 && f[0] != "mget" {
		local = f[2]
	}
	c.downloadTo(strings.TrimSuffix(base, "/")+"/"+strings.TrimPrefix(f[1], "/"), host, port, shLit(local))
}

// batchFile is the text of a file a program reads its commands or
// settings from (sftp -b FILE, a git config include, package.json):
// written earlier in the action, or read where the harness can see it,
// within MaxScriptBytes, as a script run by its path is.
func (r *sh) batchFile(p string) (string, bool) {
	if text, ok := r.written[p]; ok {
		return text, true
	}
	fs := r.s.ctx.FS
	if fs == nil || !strings.HasPrefix(p, "/") {
		return "", false
	}
	data, trunc, err := fs.ReadFile(p, MaxScriptBytes)
	if err != nil || trunc {
		return "", false
	}
	return string(data), true
}

func hDNS(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-t -c -p -x -q -f -k -y -b -W -R -N -m"), false)
	server := ""
	var names []sword
	for _, w := range p.ops {
		if w.known && strings.HasPrefix(w.val, "@") {
			server = w.val[1:]
			continue
		}
		if w.known && (strings.HasPrefix(w.val, "+") || strings.HasPrefix(w.val, "-")) {
			continue
		}
		names = append(names, w)
	}
	if c.prog == "nslookup" && len(names) > 1 {
		server, names = names[1].val, names[:1]
	}
	if c.prog == "host" && len(names) > 1 {
		server, names = names[1].val, names[:1]
	}
	for _, w := range names {
		if !w.known {
			c.connectURL(w)
			continue
		}
		c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: w.val, Port: "53"}})
	}
	if server != "" {
		c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: server, Port: "53"}})
	}
	return c.filter()
}

func hPing(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-c -i -I -s -t -W -w -p -Q -l -m -M -F -T -q? -f -N -g -z -S"), false)
	for _, w := range p.ops {
		if !w.known {
			c.connectURL(w)
			continue
		}
		c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: w.val}})
	}
	return c.filter()
}

func hTftp(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-m -l -R -B -v"), true)
	if len(p.rest) == 0 {
		return nil
	}
	host := p.rest[0].val
	port := "69"
	rest := p.rest[1:]
	if len(rest) > 0 && rest[0].known && rest[0].val != "-c" {
		port, rest = rest[0].val, rest[1:]
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	if len(rest) >= 3 && rest[0].val == "-c" {
		switch rest[1].val {
		case "put":
			c.file(Read, rest[2], nil)
			if rest[2].known {
				c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: port, Source: c.r.path(rest[2].val, false)}})
			}
		case "get":
			to := rest[2]
			if len(rest) > 3 {
				to = rest[3]
			}
			c.downloadTo("tftp://"+host+"/"+rest[2].val, host, port, to)
		}
	}
	return nil
}

// hWhois: the query goes to the server; a query built from a command's
// output or a file sends it.
func hWhois(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-h --host -p --port"), false)
	host, port := "", "43"
	if h, ok := p.get("-h", "--host"); ok {
		host = h.val
	}
	if pt, ok := p.get("-p", "--port"); ok {
		port = pt.val
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port}})
	for _, q := range p.ops {
		src := "data"
		if !q.known {
			src = "output"
		}
		c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: port, Source: src}})
	}
	return &shStream{kind: sNet, host: host, port: port, prog: c.prog}
}

// ---- object stores and file-sync tools ----

// shObjectURLRE is a cloud storage address (s3://bucket/key, gs://…,
// az://…, an Azure blob URL).
var shObjectURLRE = regexp.MustCompile(`^(?:s3|gs|az|r2|oss|cos|b2|swift)://([^/]+)|^https://([^/]+\.blob\.core\.windows\.net)`)

// shRcloneRemoteRE is rclone's remote:path form.
var shRcloneRemoteRE = regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_. -]*):`)

// hObjectCopy reads the copy commands of cloud storage tools — aws s3
// cp/mv/sync, gsutil cp/mv/rsync, gcloud storage cp/mv/rsync, azcopy
// copy/sync, rclone copy/sync/move/copyto/moveto — as what scp is: a local
// source copied to a bucket or remote is a Read and a Send to its host, a
// remote source copied here a Download.
func hObjectCopy(c *shCall) *shStream {
	args := c.args()
	var words []sword
	rec := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.known && strings.HasPrefix(a.val, "-") {
			switch a.val {
			case "-r", "-R", "--recursive":
				rec = true
			case "--profile", "--region", "--endpoint-url", "--exclude", "--include", "--acl", "--storage-class",
				"--sse", "--sse-kms-key-id", "--content-type", "--cache-control", "--expires", "--metadata",
				"-o", "-h", "-p", "-u", "--config", "--transfers", "--checkers", "--filter", "--bwlimit", "-x", "-z", "-j":
				i++
			}
			continue
		}
		words = append(words, a)
	}
	subs := map[string]bool{"cp": true, "mv": true, "sync": true, "rsync": true, "copy": true, "move": true, "copyto": true, "moveto": true}
	start := -1
	for i, w := range words {
		if w.known && subs[w.val] {
			start = i + 1
			if w.val == "sync" || w.val == "rsync" {
				rec = true
			}
			break
		}
	}
	if start < 0 || len(words)-start < 2 {
		return c.filter()
	}
	remote := func(v string) (string, bool) {
		if m := shObjectURLRE.FindStringSubmatch(v); m != nil {
			return m[1] + m[2], true
		}
		if c.prog == "rclone" && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, ".") {
			if m := shRcloneRemoteRE.FindStringSubmatch(v); m != nil && len(m[1]) > 1 {
				return m[1], true
			}
		}
		return "", false
	}
	ops := words[start:]
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	dhost, dremote := remote(dst.val)
	if !dst.known {
		return c.filter()
	}
	for _, s := range srcs {
		if !s.known {
			if c.unknownSource(s, dremote) {
				c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: dhost, Port: "443"}})
			}
			continue
		}
		shost, sremote := remote(s.val)
		switch {
		case dremote && !sremote:
			c.file(Read, s, func(e *Effect) { e.Recursive = e.Recursive || rec })
			c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: dhost, Port: "443"}})
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: dhost, Port: "443", URL: dst.val, Source: c.r.path(s.val, false)}, Recursive: rec})
		case sremote && !dremote:
			c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: shost, Port: "443"}})
			c.r.s.add(Effect{Kind: Download, Program: c.prog, Detail: &Detail{Host: shost, URL: s.val}, Path: c.r.path(dst.val, false), Recursive: rec})
		}
	}
	return c.filter()
}

// hHttpie reads HTTPie (http, https, xh): the first URL-like operand is
// where it connects, and request items that name a file (field@path,
// @path, field=@path, field:=@path) send that file.
func hHttpie(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-a --auth -A --auth-type -o --output --session --session-read-only --verify --cert --cert-key --proxy --timeout --max-redirects --pretty -s --style -p --print --boundary --format-options --raw --ssl --ciphers --default-scheme"), false)
	url := ""
	var items []sword
	for _, w := range p.ops {
		if !w.known {
			continue
		}
		if url == "" && !strings.ContainsAny(w.val, "@=") && (strings.Contains(w.val, ".") || strings.Contains(w.val, "://") || strings.HasPrefix(w.val, ":")) && !strings.Contains(w.val, " ") {
			if w.val == strings.ToUpper(w.val) && !strings.Contains(w.val, ".") {
				continue // the method
			}
			url = w.val
			continue
		}
		items = append(items, w)
	}
	if url == "" {
		return c.filter()
	}
	if !strings.Contains(url, "://") {
		url = "http://" + strings.TrimPrefix(url, ":")
	}
	host, port := shURLParts(url)
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: url}})
	for _, it := range items {
		i := strings.Index(it.val, "@")
		if i < 0 || i+1 >= len(it.val) {
			continue
		}
		f := it.val[i+1:]
		f = strings.SplitN(f, ";", 2)[0]
		fw := shLit(f)
		if strings.HasPrefix(f, "~/") && c.r.s.ctx.Home != "" {
			fw = shLit(c.r.s.ctx.Home + f[1:])
		}
		c.file(Read, fw, nil)
		c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: url, Source: c.r.path(fw.val, false)}})
	}
	return c.filter()
}

// hFtp reads ftp, sftp's batch input, tftp and lftp: the first operand is the
// host (user@host for sftp); commands fed on standard input as literal text
// (a here-document or here-string) that upload a file (put, mput, send,
// append) are a Read of the file and a Send of it to the host, and those
// that fetch one (get, mget, recv) a Download into the local file.
func hFtp(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-P -p -o -b -i -F -c -e -u -s -r -m"), false)
	if len(p.ops) == 0 || !p.ops[0].known {
		return c.filter()
	}
	host := shStripUser(strings.TrimPrefix(strings.TrimPrefix(p.ops[0].val, "ftp://"), "sftp://"))
	if i := strings.IndexAny(host, ":/"); i >= 0 {
		host = host[:i]
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host}})
	if c.in != nil && c.in.kind == sText {
		for _, line := range strings.Split(c.in.text, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "put", "mput", "send", "append", "reput":
				w := shLit(f[1])
				c.file(Read, w, nil)
				c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Source: c.r.path(f[1], false)}})
			default:
				c.sessionGet(f, c.prog+"://"+host, host, "")
			}
		}
	}
	return &shStream{kind: sNet, host: host, prog: c.prog}
}

// hSmbclient reads smbclient //HOST/SHARE -c 'CMD; CMD': put LOCAL is a
// Read and a Send of LOCAL to HOST, get REMOTE [LOCAL] a Download into
// LOCAL. Commands not known statically, or typed on standard input from
// elsewhere than the command, are not read.
func hSmbclient(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts("-c --command -U --user -W --workgroup -p --port -I --ip-address -m --max-protocol -A --authentication-file -s --configfile -d --debuglevel -D --directory -T --tar -n --netbiosname -O --socket-options -t --timeout -M --message -L --list"), false)
	host := ""
	if len(p.ops) > 0 && p.ops[0].known {
		svc := strings.TrimLeft(strings.ReplaceAll(p.ops[0].val, "\\", "/"), "/")
		host, _, _ = strings.Cut(svc, "/")
	}
	if host == "" {
		return c.filter()
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: "445"}})
	var cmds []string
	if cmd, ok := p.get("-c", "--command"); ok {
		if !cmd.known {
			c.r.s.unknown(false, "smbclient: commands not known statically: %s", cmd.arg)
			return nil
		}
		cmds = strings.Split(cmd.val, ";")
	} else if c.in != nil && c.in.kind == sText {
		cmds = strings.Split(c.in.text, "\n")
	}
	for _, line := range cmds {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "put" || f[0] == "mput") {
			c.file(Read, shLit(f[1]), nil)
			c.r.s.add(Effect{Kind: Send, Program: c.prog, Detail: &Detail{Host: host, Port: "445", Source: c.r.path(f[1], false)}})
		}
		c.sessionGet(f, "smb://"+host, host, "445")
	}
	return nil
}

// hLwpDownload reads lwp-download URL [LOCAL]: a Download into LOCAL (by
// default the URL's base name in the working directory).
func hLwpDownload(c *shCall) *shStream {
	p := c.parseOpts(c.args(), shOpts(""), false)
	if len(p.ops) == 0 || !p.ops[0].known {
		return nil
	}
	u := p.ops[0].val
	host, port := shURLParts(u)
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Detail: &Detail{Host: host, Port: port, URL: u}})
	to := shLit(path.Base(u))
	if len(p.ops) > 1 {
		to = p.ops[1]
	}
	c.downloadTo(u, host, port, to)
	return nil
}

// unixConnect records a connection to the local socket a word names (a
// connect effect with its path and no host), or an unknown when the word
// is not known.
func (c *shCall) unixConnect(w sword) {
	if !w.known {
		c.r.s.unknown(false, "%s: socket not known statically: %s", c.prog, w.arg)
		return
	}
	if w.val == "" {
		return
	}
	c.r.s.add(Effect{Kind: Connect, Program: c.prog, Path: c.r.path(w.val, false)})
}
