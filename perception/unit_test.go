package perception

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

func TestTermsFromNamesAndText(t *testing.T) {
	var s termSet
	s.addName("config.ParseConfig")
	s.addName("main.go")
	s.addName("x")
	s.addWords("Where is the retry logic in client.go? Where is the RETRY logic!", weightWord)
	got := s.lowers()
	want := []string{"config.parseconfig", "parseconfig", "main.go", "retry", "logic", "client.go"}
	if !slices.Equal(got, want) {
		t.Errorf("terms %q, want %q", got, want)
	}
	var many termSet
	many.addWords(strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ", 5)+
		"nu xi omicron rho sigma tau upsilon phi chi psi omega one two three four five", weightWord)
	if len(many.list) != maxTerms {
		t.Errorf("%d terms kept, want at most %d", len(many.list), maxTerms)
	}
	var long termSet
	long.addName(strings.Repeat("a", maxTermLen+1))
	if len(long.list) != 0 {
		t.Error("over-long term kept")
	}
}

func TestWindowAndHead(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 30; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString("\n")
	}
	data := []byte(b.String())
	off := strings.Index(b.String(), "line \n") // first line with i%3==0: line 3
	ex := window(data, off)
	if ex.start != 1 || ex.end != 8 {
		t.Errorf("window of line 3: lines %d-%d, want 1-8", ex.start, ex.end)
	}
	ex = window(data, len(data)-2)
	if ex.start != 25 || ex.end != 30 || strings.HasSuffix(ex.text, "\n") {
		t.Errorf("window of the last line: lines %d-%d text %q", ex.start, ex.end, ex.text)
	}
	ex = head(data, 4)
	if ex.start != 1 || ex.end != 4 || strings.Count(ex.text, "\n") != 3 {
		t.Errorf("head: lines %d-%d text %q", ex.start, ex.end, ex.text)
	}

	// One enormous line is cut to maxSnippetBytes at rune boundaries.
	huge := []byte(strings.Repeat("日", 10000))
	ex = window(huge, 15000)
	if len(ex.text) > maxSnippetBytes || !utf8.ValidString(ex.text) || ex.text == "" {
		t.Errorf("huge line: %d bytes, valid %v", len(ex.text), utf8.ValidString(ex.text))
	}
}

func TestTruncateChars(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"héllo", 2, "hé"}, {"héllo", 5, "héllo"}, {"héllo", 9, "héllo"}, {"日本", 0, ""}, {"日本", 1, "日"},
	} {
		if got := truncateChars(c.in, c.n); got != c.want {
			t.Errorf("truncateChars(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestRegexIgnoresEmptyMatches(t *testing.T) {
	pr, note := patternProbe(&protocol.PatternTarget{Pattern: "z*", PatternType: "regex"})
	if note != "" {
		t.Fatal(note)
	}
	if pr.pathHit("a/b.go", "a/b.go") {
		t.Error("empty match counted in a path")
	}
	if f, n := pr.contentHits([]byte("abc zz"), nil); f != 4 || n != 1 {
		t.Errorf("contentHits = %d, %d; want 4, 1", f, n)
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		base, p string
		want    bool
	}{
		{"/r", "/r", true}, {"/r", "/r/a/b", true}, {"/r", "/ra", false}, {"/r", "/", false}, {"/r", "/r/../x", false},
	} {
		if got := within(c.base, c.p); got != c.want {
			t.Errorf("within(%q, %q) = %v", c.base, c.p, got)
		}
	}
}
