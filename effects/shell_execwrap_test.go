package effects

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExecWrappers: programs that run the command in their remaining
// words are read as that command, whatever options come before it.
func TestExecWrappers(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, c := range []shellCase{
		{cmd: `uv run rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `uv run --python 3.12 rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `uv --quiet run --frozen --made-up-option x rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `poetry run rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `conda run -n base rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `bundle exec rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `npm exec -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `npx -c 'rm -rf ~'`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `npm exec --call='rm -rf ~'`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `nix-shell -p go --run 'rm -rf ~'`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `nix develop -c rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `direnv exec . rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `aws-vault exec prod -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `gosu ann rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `tini -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `setpriv --reuid=1000 rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `prlimit --nofile=10 rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `cpulimit -l 10 -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `numactl -N 0 rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `valgrind --leak-check=full rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `toybox rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `ssh-agent rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `mise x node@20 -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `doppler run --command='rm -rf ~'`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `infisical run --command 'rm -rf ~'`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `aws-vault exec prod --no-session -- rm -rf ~`, want: []Effect{eDelR("/home/ann")}},
		// ordinary uses: the command is read, nothing else
		{cmd: `uv run pytest -q`, want: []Effect{eRun("pytest")}},
		{cmd: `poetry run python manage.py test`, want: []Effect{eRun("python"), eRead("/work/proj/manage.py")}, unk: shUnkAny},
		{cmd: `npm install`, not: []Effect{eRun("install")}},
		{cmd: `uv pip install x`, not: []Effect{eRun("install")}},
		{cmd: `nix develop`},
		{cmd: `npx tsc --init`, not: []Effect{eRun("tsc")}},
	} {
		checkShellCase(t, ctx, c)
	}
}

// TestExecWrapStarts: an option not listed is read both as a flag and as
// taking the next word; "--" ends the options.
func TestExecWrapStarts(t *testing.T) {
	w := func(ss ...string) []sword {
		out := make([]sword, len(ss))
		for i, s := range ss {
			out[i] = shLit(s)
		}
		return out
	}
	for _, c := range []struct {
		args   []sword
		valued shOptSet
		skip   int
		want   []int
	}{
		{w("rm", "-rf", "~"), nil, 0, []int{0}},
		{w("--x", "3", "rm"), nil, 0, []int{1, 2}},
		{w("--x", "3", "rm"), shOpts("--x"), 0, []int{2}},
		{w("--x=3", "rm"), nil, 0, []int{1}},
		{w("-a", "--", "rm"), nil, 0, []int{2}},
		{w("ann", "rm"), nil, 1, []int{1}},
		{w("node@20", "--", "rm"), nil, 0, []int{0, 2}},
	} {
		got := execWrapStarts(c.args, c.valued, c.skip)
		if len(got) != len(c.want) {
			t.Errorf("%v: starts %v, want %v", shArgvOf(c.args), got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: starts %v, want %v", shArgvOf(c.args), got, c.want)
			}
		}
	}
}

// TestPackageScripts: npm/yarn/pnpm/bun run NAME runs package.json's
// script NAME through sh: written in the same action, or on disk.
func TestPackageScripts(t *testing.T) {
	ctx := Context{Cwd: "/work/proj", Home: "/home/ann", User: "ann"}
	for _, c := range []shellCase{
		{cmd: `echo '{"scripts":{"x":"rm -rf ~"}}' > package.json && npm run x`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `echo '{"scripts":{"pretest":"rm -rf ~","test":"jest"}}' > package.json && npm test`, want: []Effect{eDelR("/home/ann"), eRun("jest")}},
		{cmd: `echo '{"scripts":{"x":"rm -rf ~"}}' > package.json && yarn x`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `npm pkg set scripts.x='rm -rf ~' && npm run x`, want: []Effect{eDelR("/home/ann")}},
		{cmd: `echo '{"scripts":{"build":"tsc -p ."}}' > package.json && pnpm run build`, want: []Effect{eRun("tsc")}},
		{cmd: `echo '{"scripts":{"dev":"vite"}}' > package.json && yarn add lodash`, not: []Effect{eRun("vite")}},
		{cmd: `npm run "$S"`, want: []Effect{eOpaqueInto("sh")}, unk: shUnkYes},
		{cmd: `echo '{"scripts":{"x":"rm -rf ~"}}' > package.json && bun run x`, want: []Effect{eDelR("/home/ann")}, unk: shUnkAny},
		{cmd: `bun -e 'require("fs").rmSync(require("os").homedir(),{recursive:true})'`, want: []Effect{eDelR("/home/ann")}},
		// make's default makefile, written by the same action
		{cmd: "printf 'all:\\n\\trm -rf ~\\n' > Makefile && make", want: []Effect{eDelR("/home/ann")}},
		{cmd: "printf 'all:\\n\\trm -rf ~\\n' > sub/Makefile && make -C sub", want: []Effect{eDelR("/home/ann")}},
	} {
		checkShellCase(t, ctx, c)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"scripts":{"clean":"rm -rf ~"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	checkShellCase(t, Context{Cwd: dir, Home: "/home/ann", User: "ann", FS: shTestFS{}},
		shellCase{cmd: `npm run clean`, want: []Effect{eDelR("/home/ann")}})
}
