package effects

import ("testing";"os")

func TestZZTry(t *testing.T) {
	withShellProbe(t)
	src, _ := os.ReadFile(os.Getenv("PYSRC"))
	for _, e := range Code(os.Getenv("LANGX"), string(src), Context{Cwd: "/w", Home: "/home/a"}) {
		t.Logf("%s   [%s] %s", brief(e), e.Via, e.Reason)
	}
}
