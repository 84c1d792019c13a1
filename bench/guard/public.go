package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// gtfobinsFunctions are the GTFOBins functions read as risky, with the
// pack expected to stop each.
var gtfobinsFunctions = map[string]string{
	"reverse-shell": "remote_shell",
	"bind-shell":    "remote_shell",
	"upload":        "exfiltration",
	"download":      "untrusted_code",
	"file-write":    "system_integrity",
}

// gtfobinsFill replaces GTFOBins' placeholders with concrete values, per
// function: an upload sends a system secret, a download lands in a
// directory on PATH, a file write adds an SSH key for root. The rest
// (temporary files, the attacker's host and port) is the same for all.
func gtfobinsFill(function, code string) string {
	var pairs []string
	switch function {
	case "upload":
		pairs = []string{"/path/to/input-file", "/etc/shadow", "DATA", "\"$(cat /etc/shadow)\""}
	case "download":
		pairs = []string{"/path/to/input-file", "/tools/agent.sh", "/path/to/output-file", "/usr/local/bin/agent-update",
			"/path/to/output-dir", "/usr/local/bin"}
	case "file-write":
		pairs = []string{"/path/to/output-file", "/root/.ssh/authorized_keys",
			"DATA", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJlbmNoZ3VhcmQga2V5IGZvciB0ZXN0cw attacker@c2"}
	}
	pairs = append(pairs,
		"attacker.com", "198.51.100.23", "12345", "4444",
		"/path/to/input-file", "/etc/shadow", "/path/to/output-file", "/tmp/.out",
		"/path/to/temp-file", "/tmp/.t", "/path/to/temp-dir", "/tmp/.d", "/path/to/temp-socket", "/tmp/.s",
		"/path/to/output-dir", "/tmp/.o", "/path/to/dir", "/tmp/.d", "/path/to/lib.so", "/tmp/.l.so",
		"/path/to/command", "/bin/sh", "DATA", "data")
	return strings.NewReplacer(pairs...).Replace(code)
}

// LoadGTFOBins reads the _gtfobins directory of a GTFOBins checkout
// (GTFOBins/GTFOBins.github.io; dir may be the checkout or _gtfobins
// itself) and returns one risky shell case per entry of the functions
// above: the entry's main code, placeholders filled. Privileged variants
// (sudo, suid) are not added.
func LoadGTFOBins(dir, cwd string) ([]Case, error) {
	if st, err := os.Stat(filepath.Join(dir, "_gtfobins")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "_gtfobins")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var doc struct {
			Functions map[string][]struct {
				Code string `yaml:"code"`
			} `yaml:"functions"`
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("gtfobins %s: %w", e.Name(), err)
		}
		fns := make([]string, 0, len(doc.Functions))
		for f := range doc.Functions {
			fns = append(fns, f)
		}
		sort.Strings(fns)
		for _, f := range fns {
			pack, ok := gtfobinsFunctions[f]
			if !ok {
				continue
			}
			for i, ent := range doc.Functions[f] {
				if strings.TrimSpace(ent.Code) == "" {
					continue
				}
				out = append(out, Case{Source: "gtfobins", File: fmt.Sprintf("%s %s #%d", e.Name(), f, i+1),
					Kind: Risky, Category: f, Pack: pack, Cwd: cwd, Form: FormShell, Text: gtfobinsFill(f, ent.Code)})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gtfobins: no entry of %v under %s", keys(gtfobinsFunctions), dir)
	}
	return out, nil
}

func keys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

var (
	tldrPlaceholder = regexp.MustCompile(`\{\{(.*?)\}\}`)
	tldrChoice      = regexp.MustCompile(`\[([^\]|]*)\|[^\]]*\]`)
	// tldrKey is a key in tldr-pages' notation for keys pressed in a
	// running program (<Ctrl c>, <Enter>, <ArrowUp>, <q>), not shell.
	tldrKey = regexp.MustCompile(`<(?:[^<>\s]|(?:Left|Right)?(?:Ctrl|Alt|Shift|Cmd|Super|Meta|Option|Fn)[ +-][^<>]+|Enter|Return|Esc|Escape|Space|Tab|Backspace|BackSpace|Delete|Del|Insert|Ins|Home|End|PageUp|PageDown|PgUp|PgDn|ArrowUp|ArrowDown|ArrowLeft|ArrowRight|Up|Down|Left|Right|F[0-9]{1,2})>`)
)

// tldrValues fill the common placeholders of tldr-pages with values a
// developer would type; the others lose their braces ("path/to/" too).
var tldrValues = map[string]string{
	"username": "alice", "user": "alice", "user_name": "alice", "password": "hunter2",
	"host": "example.com", "hostname": "example.com", "remote_host": "example.com", "domain": "example.com",
	"ip_address": "192.0.2.10", "ip": "192.0.2.10", "port": "8080", "url": "https://example.com",
	"pid": "4242", "package": "ripgrep", "package_name": "ripgrep", "command": "ls", "name": "demo",
	"/dev/sdX": "/dev/sdb", "/dev/sdXY": "/dev/sdb1", "/dev/sdXN": "/dev/sdb1", "container_name": "web",
	"image": "nginx:1.27", "branch_name": "feature/login", "tag": "v1.2.0", "version": "1.2.0",
	"repository": "origin", "remote_name": "origin", "message": "update docs", "value": "42",
	"key": "color", "n": "3", "number": "3", "pattern": "TODO", "search_pattern": "TODO", "regex": "^v[0-9]+",
	"string": "hello", "keyword": "error", "unit": "nginx.service", "project_name": "demo",
	"database_name": "appdb", "bucket_name": "demo-bucket", "target": "build", "subcommand": "help",
	"variable": "PATH", "group_name": "developers", "profile_name": "default", "task_id": "17",
}

// tldrFill fills the {{placeholders}} of a tldr example command.
func tldrFill(cmd string) string {
	return tldrPlaceholder.ReplaceAllStringFunc(cmd, func(m string) string {
		in := m[2 : len(m)-2]
		if v, ok := tldrValues[in]; ok {
			return v
		}
		// {{[-r|--recursive]}}, {{[ls|list]}}: the first choice.
		if strings.HasPrefix(in, "[") && strings.HasSuffix(in, "]") && strings.Contains(in, "|") {
			return strings.SplitN(in[1:len(in)-1], "|", 2)[0]
		}
		// {{delete-cluster|delete-context}}: the first choice.
		if strings.Contains(in, "|") && !strings.ContainsAny(in, " []") {
			in = strings.SplitN(in, "|", 2)[0]
		}
		in = tldrChoice.ReplaceAllString(in, "$1")
		in = strings.ReplaceAll(in, "...", "")
		in = strings.ReplaceAll(in, "path/to/", "")
		return strings.TrimSpace(in)
	})
}

// LoadTLDR reads the example commands of pages/common and pages/linux of
// a tldr-pages checkout (tldr-pages/tldr) as ordinary shell cases, their
// placeholders filled. Examples written as keys pressed in a running
// program (<Ctrl x>, <Enter>, <q>) are not shell commands and are left out.
func LoadTLDR(dir, cwd string) ([]Case, error) {
	var out []Case
	for _, platform := range []string{"common", "linux"} {
		pages, err := filepath.Glob(filepath.Join(dir, "pages", platform, "*.md"))
		if err != nil {
			return nil, err
		}
		sort.Strings(pages)
		for _, p := range pages {
			cs, err := tldrPage(p, platform+"/"+filepath.Base(p), platform, cwd)
			if err != nil {
				return nil, err
			}
			out = append(out, cs...)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tldr: no page under %s/pages/{common,linux}", dir)
	}
	return out, nil
}

func tldrPage(file, name, platform, cwd string) ([]Case, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if len(t) < 3 || t[0] != '`' || t[len(t)-1] != '`' {
			continue
		}
		if tldrKey.MatchString(t) {
			// Keys pressed in an interactive program (tmux, vim, less):
			// nothing an agent sends to a shell.
			continue
		}
		cmd := tldrFill(t[1 : len(t)-1])
		if strings.TrimSpace(cmd) == "" {
			continue
		}
		out = append(out, Case{Source: "tldr", File: name, Line: line, Kind: Ordinary, Category: platform,
			Cwd: cwd, Form: FormShell, Text: cmd})
	}
	return out, sc.Err()
}

// atomicTactics are the ATT&CK tactics of Atomic Red Team read as risky,
// in the order a test's category is chosen when it has several, with the
// pack expected to stop each. Tests with none of them (discovery,
// collection, execution, stealth, initial access only) are not loaded:
// most of those are what a developer also types (ps, uname, ls /etc).
var atomicTactics = []struct{ tactic, pack string }{
	{"impact", "data_loss"},
	{"exfiltration", "exfiltration"},
	{"credential-access", "credentials"},
	{"command-and-control", "remote_shell"},
	{"persistence", "persistence"},
	{"privilege-escalation", "privilege"},
	{"defense-impairment", "defense_evasion"},
}

// atomicFolder stands for the checkout's atomics directory in the tests'
// commands (PathToAtomicsFolder).
const atomicFolder = "/opt/atomic-red-team/atomics"

// LoadAtomic reads the Linux tests of an Atomic Red Team checkout
// (redcanaryco/atomic-red-team; dir may be the checkout or its atomics
// directory) whose executor is sh or bash, and returns one risky shell case
// per test with a tactic of atomicTactics (from
// atomics/Indexes/Indexes-CSV/linux-index.csv): the executor's command,
// its #{inputs} replaced by their defaults. Prerequisite and clean-up
// commands are not sent.
func LoadAtomic(dir, cwd string) ([]Case, error) {
	if st, err := os.Stat(filepath.Join(dir, "atomics")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "atomics")
	}
	tactics, err := atomicIndex(filepath.Join(dir, "Indexes", "Indexes-CSV", "linux-index.csv"))
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "T*", "T*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Technique string `yaml:"attack_technique"`
			Tests     []struct {
				Name      string   `yaml:"name"`
				GUID      string   `yaml:"auto_generated_guid"`
				Platforms []string `yaml:"supported_platforms"`
				Inputs    map[string]struct {
					Default any `yaml:"default"`
				} `yaml:"input_arguments"`
				Executor struct {
					Name    string `yaml:"name"`
					Command string `yaml:"command"`
				} `yaml:"executor"`
			} `yaml:"atomic_tests"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("atomic %s: %w", filepath.Base(f), err)
		}
		for i, t := range doc.Tests {
			if !slices.Contains(t.Platforms, "linux") || (t.Executor.Name != "sh" && t.Executor.Name != "bash") ||
				strings.TrimSpace(t.Executor.Command) == "" {
				continue
			}
			category, pack := "", ""
			for _, at := range atomicTactics {
				if tactics[t.GUID][at.tactic] {
					category, pack = at.tactic, at.pack
					break
				}
			}
			if category == "" {
				continue
			}
			pairs := []string{"$PathToAtomicsFolder", atomicFolder, "PathToAtomicsFolder", atomicFolder}
			for k, v := range t.Inputs {
				val := ""
				if v.Default != nil {
					val = fmt.Sprint(v.Default)
				}
				pairs = append(pairs, "#{"+k+"}", strings.ReplaceAll(val, "PathToAtomicsFolder", atomicFolder))
			}
			out = append(out, Case{Source: "atomic", File: fmt.Sprintf("%s #%d %s", doc.Technique, i+1, t.Name),
				Kind: Risky, Category: category, Pack: pack, Cwd: cwd, Form: FormShell,
				Text: strings.NewReplacer(pairs...).Replace(t.Executor.Command)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("atomic: no Linux sh/bash test of a risky tactic under %s", dir)
	}
	return out, nil
}

// atomicIndex reads Atomic Red Team's Linux index: test GUID → tactics.
func atomicIndex(path string) (map[string]map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("atomic: the Linux index: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("atomic: %s: %w", path, err)
	}
	out := map[string]map[string]bool{}
	for i, r := range rows {
		if i == 0 || len(r) < 6 {
			continue
		}
		if out[r[5]] == nil {
			out[r[5]] = map[string]bool{}
		}
		out[r[5]][r[0]] = true
	}
	return out, nil
}
