package policy

import (
	"net/url"
	"regexp"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// urlHost returns the lower-case host name of a URL ("" if there is none).
// A URL without a scheme (example.com/x) is read as a host and path.
func urlHost(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// hostAllowed reports whether host is on the allow-list. An entry matches
// the same host name; "*.example.com" matches every subdomain of
// example.com (not example.com itself); "*" matches every host.
func hostAllowed(host string, allowed []string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "*":
			return true
		case strings.HasPrefix(a, "*."):
			if strings.HasSuffix(host, a[1:]) && len(host) > len(a)-1 {
				return true
			}
		case a == host:
			return true
		}
	}
	return false
}

// urlTools take URLs (or bare host names) as arguments.
var urlTools = map[string]bool{
	"curl": true, "wget": true, "http": true, "https": true, "xh": true, "aria2c": true,
	"lynx": true, "links": true, "w3m": true, "ftp": true,
}

// socketTools take a host as their first operand.
var socketTools = map[string]bool{"nc": true, "ncat": true, "netcat": true, "telnet": true}

// remoteTools take [user@]host or [user@]host:path operands.
var remoteTools = map[string]bool{"ssh": true, "scp": true, "sftp": true, "rsync": true}

// valueFlags are, per tool, options whose next word is a value, not a
// host. Options whose value is itself a host (a proxy, a jump host) are in
// hostFlags instead.
var valueFlags = map[string]map[string]bool{
	"curl": flagSet("-o -d -H -u -X -A -e -b -c -F -T -w -m -K -E -r -C -y -Y -z --data --data-raw",
		"--data-binary --data-urlencode --header --output --user --request --user-agent --referer",
		"--cookie --cookie-jar --form --upload-file --write-out --max-time --config --cert --key",
		"--cacert --range --retry --connect-timeout --resolve --output-dir --connect-to"),
	"wget": flagSet("-O -o -a -P -U -e -t -T -w -Q -i -B -l --output-document --output-file",
		"--directory-prefix --user-agent --post-data --post-file --user --password --tries --timeout",
		"--wait --execute --input-file --header"),
	"nc":  flagSet("-p -w -s -i -q -x -X -e -c -I -O -T"),
	"ssh": flagSet("-p -P -i -l -o -F -L -R -D -b -c -E -e -m -O -Q -S -W -w -B --rsh --port"),
}

// toolFlags maps each tool to its entry in valueFlags.
var toolFlags = map[string]string{
	"curl": "curl", "wget": "wget", "http": "curl", "https": "curl", "xh": "curl", "aria2c": "curl",
	"lynx": "curl", "links": "curl", "w3m": "curl", "ftp": "curl",
	"nc": "nc", "ncat": "nc", "netcat": "nc", "telnet": "nc",
	"ssh": "ssh", "scp": "ssh", "sftp": "ssh", "rsync": "ssh",
}

func flagSet(groups ...string) map[string]bool {
	out := map[string]bool{}
	for _, g := range groups {
		for _, f := range strings.Fields(g) {
			out[f] = true
		}
	}
	return out
}

// hostFlags are options whose value is itself a host the command reaches.
var hostFlags = map[string]bool{"-x": true, "--proxy": true, "-J": true}

// bareHost matches a host name, IPv4 address or localhost, with an
// optional port and path: what curl accepts without a scheme.
var bareHost = regexp.MustCompile(
	`^(?:localhost|(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z][A-Za-z0-9-]*|\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?(?:/.*)?$`)

// shellHosts returns the hosts a command line reaches with common network
// tools: curl, wget and friends (URLs and bare hosts), nc/ncat/telnet (the
// host operand) and ssh/scp/sftp/rsync ([user@]host[:path]).
func shellHosts(line string) []string {
	var out []string
	for _, cmd := range splitCommands(line) {
		start := commandStart(cmd)
		if start >= len(cmd) {
			continue
		}
		tool := baseName(cmd[start].text)
		if !urlTools[tool] && !socketTools[tool] && !remoteTools[tool] {
			continue
		}
		positional := 0
		for i := start + 1; i < len(cmd); i++ {
			w := cmd[i].text
			if cmd[i].redirect {
				continue
			}
			if hostFlags[w] && i+1 < len(cmd) {
				i++
				if h := remoteHost(cmd[i].text); h != "" {
					out = append(out, h)
				}
				continue
			}
			if valueFlags[toolFlags[tool]][w] {
				i++
				continue
			}
			if strings.HasPrefix(w, "-") {
				if eq := strings.IndexByte(w, '='); eq > 0 && hostFlags[w[:eq]] {
					if h := remoteHost(w[eq+1:]); h != "" {
						out = append(out, h)
					}
				}
				continue
			}
			positional++
			if h := hostOperand(tool, w, positional); h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}

// hostOperand returns the host named by the positional-th operand w of tool.
func hostOperand(tool, w string, positional int) string {
	if strings.Contains(w, "://") {
		return urlHost(w)
	}
	switch {
	case urlTools[tool]:
		if bareHost.MatchString(w) {
			return urlHost(w)
		}
	case socketTools[tool]:
		if positional == 1 && !isNumber(w) {
			return strings.ToLower(w)
		}
	case tool == "ssh":
		if positional == 1 {
			return remoteHost(w)
		}
	case remoteTools[tool]:
		if colon := strings.IndexByte(w, ':'); colon > 0 && !strings.HasPrefix(w, "/") {
			return remoteHost(w[:colon])
		}
	}
	return ""
}

// remoteHost strips user@ and :port or :path from an ssh-style target.
func remoteHost(w string) string {
	if strings.Contains(w, "://") {
		return urlHost(w)
	}
	if at := strings.LastIndexByte(w, '@'); at >= 0 {
		w = w[at+1:]
	}
	if colon := strings.IndexByte(w, ':'); colon >= 0 {
		w = w[:colon]
	}
	return strings.ToLower(w)
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// urlKeys are argument names that hold a URL or host name.
var urlKeys = keys("url", "uri", "endpoint", "base_url", "host", "hostname", "urls")

// actionHosts returns the hosts an action reaches: URL arguments (of web
// fetch tools, for example) and the hosts in its shell command.
func actionHosts(payload ref.Val) []string {
	var out []string
	hs, n := holders(payload)
	for _, m := range hs[:n] {
		for _, k := range urlKeys {
			if v, found := m.Find(k); found {
				for _, s := range stringsOf(v) {
					if h := urlHost(s); h != "" {
						out = append(out, h)
					}
				}
			}
		}
	}
	return append(out, shellHosts(shellCommand(payload))...)
}

// celStringList reads a CEL string or list of strings.
func celStringList(v ref.Val) ([]string, ref.Val) {
	switch x := v.(type) {
	case types.String:
		return []string{string(x)}, nil
	case types.Null:
		return nil, nil
	}
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, types.NewErr("expected a string or a list of strings, got %s", v.Type().TypeName())
	}
	n, _ := l.Size().(types.Int)
	out := make([]string, 0, int(n))
	for i := types.Int(0); i < n; i++ {
		s, ok := l.Get(i).(types.String)
		if !ok {
			return nil, types.NewErr("expected a list of strings")
		}
		out = append(out, string(s))
	}
	return out, nil
}
