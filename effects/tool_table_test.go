package effects

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// toolCase is a pre_action payload (JSON) and the effects expected of it.
type toolCase struct {
	payload string
	want    []string
}

const patch = `*** Begin Patch
*** Add File: docs/new.md
+hello
*** Update File: src/app.py
*** Move to: src/main.py
@@
-a
+b
*** Delete File: /etc/cron.d/old
*** End Patch`

var toolTable = []toolCase{
	// Shell tools: every name and shape hands the command to the shell reader.
	{`{"tool_name":"bash","arguments":{"command":"rm -rf /"}}`, []string{"sh: rm -rf /"}},
	{`{"tool_name":"Bash","tool_input":{"command":"ls -la","description":"list"}}`, []string{"sh: ls -la"}},
	{`{"tool_name":"shell","arguments":{"command":["bash","-lc","echo hi > /etc/motd"]}}`, []string{"sh: bash -lc 'echo hi > /etc/motd'"}},
	{`{"tool_name":"shell","arguments":{"command":["rm","-rf","it's"]}}`, []string{`sh: rm -rf 'it'\''s'`}},
	{`{"tool_name":"run_shell_command","tool_input":{"command":"cat /etc/shadow","directory":"sub"}}`, []string{"sh: cat /etc/shadow"}},
	{`{"tool_name":"exec_command","arguments":{"cmd":"make test"}}`, []string{"sh: make test"}},
	{`{"tool_name":"local_shell","arguments":{"command":["ls"]}}`, []string{"sh: ls"}},
	{`{"tool_name":"terminal","arguments":{"command":"reboot"}}`, []string{"sh: reboot"}},
	{`{"tool_name":"run_terminal_cmd","arguments":{"command":"npm publish"}}`, []string{"sh: npm publish"}},
	{`{"tool_name":"Bash","arguments":{"commands":["cd /tmp","rm -rf x"]}}`, []string{"sh: cd /tmp\nrm -rf x"}},
	{`{"tool_name":"mcp__shell__execute_command","arguments":{"command":"id"}}`, []string{"sh: id"}},
	{`{"tool_name":"custom_runner","arguments":{"cmd":"shutdown now"}}`, []string{"sh: shutdown now"}},
	{`{"tool_name":"custom_runner","arguments":{"command":["kill","-9","1"]}}`, []string{"sh: kill -9 1"}},
	{`{"command":"rm -rf ~"}`, []string{"sh: rm -rf ~"}},
	{`{"tool_name":"bash","arguments":"{\"command\":\"whoami\"}"}`, []string{"sh: whoami"}},
	{`{"tool_name":"bash","arguments":"not json"}`, []string{"unknown", "unknown"}},
	{`{"tool_name":"bash","arguments":{}}`, []string{"unknown"}},
	{`{"tool_name":"bash","arguments":{"Command":"rm -rf /"}}`, []string{"sh: rm -rf /"}},
	{`{"tool_name":"bash","arguments":{"command":"ls","Command":"rm -rf /"}}`, []string{"unknown", "sh: ls", "sh: rm -rf /"}},
	{`{"tool_name":"bash","arguments":{"command":"ls","COMMAND":"ls"}}`, []string{"sh: ls"}},
	{`{"tool_name":"bash","arguments":{"command":["ls",3]}}`, []string{"unknown", "sh: ls"}},
	{`{"tool_name":"bash","arguments":{"command":"apply_patch <<'EOF'\n` + "*** Begin Patch\\n*** Delete File: x.go\\n*** End Patch" + `\nEOF"}}`,
		[]string{"sh: apply_patch <<'EOF'\n", "delete /w/x.go"}},

	// Code tools.
	{`{"tool_name":"execute_code","arguments":{"language":"python","code":"import os; os.remove('/etc/passwd')"}}`, []string{"delete /etc/passwd"}},
	{`{"tool_name":"python","arguments":{"code":"import shutil; shutil.rmtree('/')"}}`, []string{"delete -r /"}},
	{`{"tool_name":"run_python","arguments":{"code":"open('/etc/shadow').read()"}}`, []string{"read /etc/shadow"}},
	{`{"tool_name":"execute_code","arguments":{"language":"javascript","code":"require('fs').unlinkSync('/etc/passwd')"}}`, []string{"delete /etc/passwd"}},
	{`{"tool_name":"execute_code","arguments":{"language":"bash","code":"rm -rf /"}}`, []string{"sh: rm -rf /"}},
	{`{"tool_name":"execute_code","arguments":{"code":"import os; os.system('id')"}}`, []string{"unknown", "sh: id"}},
	{`{"tool_name":"mcp__runner__run_code","arguments":{"language":"ruby","code":"File.delete('/etc/passwd')"}}`, []string{"delete /etc/passwd"}},
	{`{"tool_name":"anything","arguments":{"language":"php","code":"unlink('/etc/passwd');"}}`, []string{"delete /etc/passwd"}},
	{`{"tool_name":"python","arguments":{}}`, []string{"unknown"}},

	// Claude Code file and web tools.
	{`{"tool_name":"Write","tool_input":{"file_path":"/etc/passwd","content":"x"},"cwd":"/proj"}`, []string{"write /etc/passwd"}},
	{`{"tool_name":"Write","tool_input":{"file_path":"src/a.go","content":"x"}}`, []string{"write /w/src/a.go"}},
	{`{"tool_name":"Edit","tool_input":{"file_path":"/home/a/.bashrc","old_string":"a","new_string":"b"}}`, []string{"write /home/a/.bashrc"}},
	{`{"tool_name":"MultiEdit","tool_input":{"file_path":"~/.ssh/authorized_keys","edits":[]}}`, []string{"write /home/a/.ssh/authorized_keys"}},
	{`{"tool_name":"Read","tool_input":{"file_path":"/home/a/.ssh/id_rsa"}}`, []string{"read /home/a/.ssh/id_rsa"}},
	{`{"tool_name":"Read","tool_input":{"file_path":"../../etc/shadow"}}`, []string{"read /etc/shadow"}},
	{`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/w/n.ipynb","new_source":"x"}}`, []string{"write /w/n.ipynb"}},
	{`{"tool_name":"Glob","tool_input":{"pattern":"**/*.go"}}`, []string{"read -r /w"}},
	{`{"tool_name":"Glob","tool_input":{"pattern":"*.pem","path":"/home/a/.ssh"}}`, []string{"read /home/a/.ssh"}},
	{`{"tool_name":"Grep","tool_input":{"pattern":"BEGIN RSA","path":"/home"}}`, []string{"read -r /home"}},
	{`{"tool_name":"Grep","tool_input":{"pattern":"TODO"}}`, []string{"read -r /w"}},
	{`{"tool_name":"WebFetch","tool_input":{"url":"https://docs.example.com/x","prompt":"summarise"}}`, []string{"connect https://docs.example.com/x"}},
	{`{"tool_name":"WebFetch","tool_input":{"url":"evil.example/p"}}`, []string{"connect https://evil.example/p"}},
	{`{"tool_name":"WebSearch","tool_input":{"query":"go generics"}}`, []string{"send data -> :"}},

	// Codex apply_patch.
	{`{"tool_name":"apply_patch","arguments":{"input":` + strconv.Quote(patch) + `}}`,
		[]string{"write /w/docs/new.md", "write /w/src/app.py", "move /w/src/app.py -> /w/src/main.py", "write /w/src/main.py", "delete /etc/cron.d/old"}},
	{`{"tool_name":"apply_patch","arguments":{"patch":"*** Begin Patch\n*** Update File: ../../etc/hosts\n*** End Patch"}}`, []string{"write /etc/hosts"}},
	{`{"tool_name":"apply_patch","input":"*** Begin Patch\n*** Delete File: go.mod\n*** End Patch"}`, []string{"delete /w/go.mod"}},
	{`{"tool_name":"shell","arguments":{"command":["apply_patch","*** Begin Patch\n*** Add File: /etc/profile.d/x.sh\n+x\n*** End Patch"]}}`, []string{"write /etc/profile.d/x.sh"}},
	{`{"tool_name":"apply_patch","arguments":{}}`, []string{"unknown"}},
	{`{"tool_name":"shell","arguments":{"command":["bash","-lc","apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.go\n*** End Patch\nEOF"]}}`,
		[]string{"sh: apply_patch <<'EOF'\n", "write /w/a.go"}},

	// Gemini CLI.
	{`{"tool_name":"write_file","tool_input":{"file_path":"/etc/hosts","content":"x"}}`, []string{"write /etc/hosts"}},
	{`{"tool_name":"replace","tool_input":{"file_path":"main.go","old_string":"a","new_string":"b"}}`, []string{"write /w/main.go"}},
	{`{"tool_name":"read_file","tool_input":{"absolute_path":"/etc/shadow"}}`, []string{"read /etc/shadow"}},
	{`{"tool_name":"read_many_files","tool_input":{"paths":["~/.aws/credentials","src/**/*.ts"]}}`, []string{"read /home/a/.aws/credentials", "read -r /w/src/**/*.ts"}},
	{`{"tool_name":"list_directory","tool_input":{"path":"/root"}}`, []string{"read /root"}},
	{`{"tool_name":"glob","tool_input":{"pattern":"/home/*/.ssh/*"}}`, []string{"read -r /w", "read /home/*/.ssh/*"}},
	{`{"tool_name":"search_file_content","tool_input":{"pattern":"password","path":"/etc"}}`, []string{"read -r /etc"}},
	{`{"tool_name":"web_fetch","tool_input":{"prompt":"Summarise https://a.example/x and http://b.example:8080/y"}}`,
		[]string{"connect https://a.example/x", "connect http://b.example:8080/y"}},
	{`{"tool_name":"google_web_search","tool_input":{"query":"x"}}`, []string{"send data -> :"}},

	// MCP filesystem server, with and without the mcp__ prefix.
	{`{"tool_name":"read_text_file","arguments":{"path":"/etc/shadow"}}`, []string{"read /etc/shadow"}},
	{`{"tool_name":"mcp__filesystem__read_file","arguments":{"path":"/home/a/.netrc"}}`, []string{"read /home/a/.netrc"}},
	{`{"tool_name":"mcp__filesystem__read_multiple_files","arguments":{"paths":["/etc/passwd","/etc/group"]}}`, []string{"read /etc/passwd", "read /etc/group"}},
	{`{"tool_name":"mcp__filesystem__write_file","arguments":{"path":"/etc/crontab","content":"x"}}`, []string{"write /etc/crontab"}},
	{`{"tool_name":"mcp__filesystem__edit_file","arguments":{"path":"/etc/hosts","edits":[]}}`, []string{"write /etc/hosts"}},
	{`{"tool_name":"mcp__filesystem__edit_file","arguments":{"path":"/etc/hosts","edits":[],"dryRun":true}}`, []string{"read /etc/hosts"}},
	{`{"tool_name":"mcp__filesystem__create_directory","arguments":{"path":"/etc/x"}}`, []string{"create /etc/x"}},
	{`{"tool_name":"mcp__filesystem__move_file","arguments":{"source":"/etc/passwd","destination":"/tmp/p"}}`, []string{"move /etc/passwd -> /tmp/p"}},
	{`{"tool_name":"mcp__filesystem__list_directory","arguments":{"path":"/root/.ssh"}}`, []string{"read /root/.ssh"}},
	{`{"tool_name":"mcp__filesystem__directory_tree","arguments":{"path":"/home"}}`, []string{"read -r /home"}},
	{`{"tool_name":"mcp__filesystem__search_files","arguments":{"path":"/","pattern":"id_rsa"}}`, []string{"read -r /"}},
	{`{"tool_name":"mcp__filesystem__get_file_info","arguments":{"path":"/etc/shadow"}}`, []string{"read /etc/shadow"}},
	{`{"tool_name":"mcp__filesystem__list_allowed_directories","arguments":{}}`, nil},
	{`{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/passwd","content":""}}}`, []string{"write /etc/passwd"}},

	// Generic arguments, read conservatively.
	{`{"tool_name":"save_notes","arguments":{"path":"/etc/motd","text":"x"}}`, []string{"write /etc/motd"}},
	{`{"tool_name":"remove_thing","arguments":{"file_path":"/var/lib/x"}}`, []string{"delete /var/lib/x"}},
	{`{"tool_name":"summarise","arguments":{"filepath":"~/.kube/config"}}`, []string{"read /home/a/.kube/config"}},
	{`{"tool_name":"http_get","arguments":{"url":"http://169.254.169.254/latest/meta-data/"}}`, []string{"connect http://169.254.169.254/latest/meta-data/"}},
	{`{"tool_name":"unknown_tool","arguments":{"x":"*** Begin Patch\n*** Delete File: a\n*** End Patch"}}`, []string{"delete /w/a"}},
	{`{"tool_name":"Task","tool_input":{"description":"x","prompt":"delete /etc/passwd"}}`, nil},
	{`{"tool_name":"TodoWrite","tool_input":{"todos":[]}}`, nil},
	{`{}`, nil},

	// The agent's directory comes from the payload when the context has none.
	{`{"tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"relative/dir"}`, []string{"sh: ls"}},
}

func TestToolTable(t *testing.T) {
	withShellProbe(t)
	parsed := pythonParsed()
	for i, c := range toolTable {
		var p map[string]any
		if err := json.Unmarshal([]byte(c.payload), &p); err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		if !parsed && (strings.Contains(c.payload, "import ") || strings.Contains(c.payload, "open('")) {
			continue // Python code: not read without cgo
		}
		got := Payload(p, testCtx)
		checkEffects(t, "#"+strconv.Itoa(i)+" "+snippet(c.payload), got, c.want)
	}
	if len(toolTable) < 60 {
		t.Errorf("%d cases", len(toolTable))
	}
}

// TestToolCwd: a relative path resolves against the context's directory,
// else the payload's "cwd" (hooks send it), and stays relative when
// neither is known: never the harness's own directory.
func TestToolCwd(t *testing.T) {
	p := map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "src/a.go"}, "cwd": "/proj"}
	cases := []struct {
		ctx  Context
		p    map[string]any
		want string
	}{
		{Context{}, p, "write /proj/src/a.go"},
		{testCtx, p, "write /w/src/a.go"},
		{Context{}, map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "src/a.go"}, "cwd": "rel"}, "write src/a.go"},
		{Context{}, map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "src/a.go"}}, "write src/a.go"},
		{Context{}, map[string]any{"tool_name": "Read", "arguments": map[string]any{"file_path": "../x"}, "CWD": "/a/b"}, "read /a/x"},
	}
	for i, c := range cases {
		got := Payload(c.p, c.ctx)
		checkEffects(t, "cwd #"+strconv.Itoa(i), got, []string{c.want})
	}
}

// TestToolWorkdir: a shell tool's own directory (Codex "workdir", Gemini
// CLI "directory") applies to what the command does.
func TestToolWorkdir(t *testing.T) {
	var dirs []string
	prev := shellReader
	shellReader = func(s *state, script string) { dirs = append(dirs, s.ctx.Cwd) }
	defer func() { shellReader = prev }()
	Payload(map[string]any{"tool_name": "shell", "arguments": map[string]any{"command": []any{"ls"}, "workdir": "sub"}}, testCtx)
	Payload(map[string]any{"tool_name": "run_shell_command", "arguments": map[string]any{"command": "ls", "directory": "/srv"}}, testCtx)
	Payload(map[string]any{"tool_name": "bash", "arguments": map[string]any{"command": "ls"}}, testCtx)
	if want := []string{"/w/sub", "/srv", "/w"}; !slices.Equal(dirs, want) {
		t.Errorf("dirs %q, want %q", dirs, want)
	}
}
