package effects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOSFS: globs and links are resolved on the real file system, scripts
// are read only under the script roots and never when Deny refuses them,
// and a glob that would read too much is a limit.
func TestOSFS(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(dir, "proj")
	secret := filepath.Join(dir, "secret")
	for _, d := range []string{proj, secret, filepath.Join(proj, "ahp-data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, "build.sh"), "#!/bin/sh\nrm -rf /srv/cache\n")
	write(filepath.Join(secret, "notes.sh"), "echo top-secret-words\n")
	write(filepath.Join(proj, "ahp-data", "admin.token"), "tok-123\n")
	if err := os.Symlink(secret, filepath.Join(proj, "lnk")); err != nil {
		t.Fatal(err)
	}
	fs := (&OSFS{Deny: func(p string) bool { return strings.Contains(p, "ahp-data") }}).Within(proj)
	ctx := Context{Cwd: proj, FS: fs}

	has := func(es []Effect, kind Kind, path string) bool {
		for _, e := range es {
			if e.Kind == kind && e.Path == path {
				return true
			}
		}
		return false
	}
	// A script in the working directory is read.
	if es := Shell("bash build.sh", ctx); !has(es, Delete, "/srv/cache") {
		t.Errorf("the project's script was not read: %+v", es)
	}
	// A script outside the roots (through a link) is not read: its words
	// must not appear.
	for _, cmd := range []string{"bash " + filepath.Join(secret, "notes.sh"), "bash lnk/notes.sh", "sh ahp-data/admin.token"} {
		for _, e := range Shell(cmd, ctx) {
			for _, a := range e.Argv {
				if strings.Contains(a, "top-secret") || strings.Contains(a, "tok-123") {
					t.Errorf("%s: the harness read a file outside its script roots: %+v", cmd, e)
				}
			}
		}
	}
	// Globs expand; links resolve.
	if es := Shell("cat lnk/*.sh", ctx); !has(es, Read, filepath.Join(proj, "lnk", "notes.sh")) && !has(es, Read, filepath.Join(secret, "notes.sh")) {
		t.Errorf("glob not expanded: %+v", es)
	}
	got, err := fs.Glob(filepath.Join(proj, "*.sh"), 10)
	if err != nil || len(got) != 1 || got[0] != filepath.Join(proj, "build.sh") {
		t.Errorf("Glob: %v %v", got, err)
	}
	// A glob that reads too many entries is a limit, not silence.
	small := &OSFS{MaxEntries: 2}
	if _, err := small.Glob(filepath.Join(proj, "*", "*"), 10); err == nil {
		t.Error("a glob over its budget did not fail")
	}
	limited := false
	for _, e := range Shell("cat "+filepath.Join(proj, "*", "*"), Context{Cwd: proj, FS: small}) {
		limited = limited || (e.Kind == Unknown && e.Limit)
	}
	if !limited {
		t.Error("a glob over its budget is not a limit Unknown")
	}
}
