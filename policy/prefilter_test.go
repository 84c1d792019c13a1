package policy

import (
	"regexp"
	"strings"
	"testing"
)

func TestPrefilterLiterals(t *testing.T) {
	cases := map[string]string{
		`git push .*--force`:                             "git push ",
		`(?:^|[\s;&|()])(?:sudo\s+)?rm\s+-rf`:            "-rf",
		`(?:mkfs(?:\.[a-z0-9]+)?|mke2fs|wipefs)(?:\s|$)`: "mk|wipefs",
		`(?i)\b(?:drop\s+table|truncate)\b`:              "table|truncate",
		`(?:curl|wget)[^|]*\|\s*sh`:                      "curl|wget",
		`a+b{2,}`:                                        "a",
		`.*`:                                             "",
		`x?y*`:                                           "",
		`(?:a|.)z`:                                       "z",
		`(?:a|b*)`:                                       "",
	}
	for pat, want := range cases {
		var got []string
		for _, l := range newPrefilter(pat) {
			got = append(got, l.text)
		}
		if strings.Join(got, "|") != want {
			t.Errorf("%s: got %q, want %q", pat, strings.Join(got, "|"), want)
		}
	}
}

// TestPrefilterNeverRejectsAMatch checks the prefilter against the regular
// expression on texts that match.
func TestPrefilterNeverRejectsAMatch(t *testing.T) {
	pats := []string{
		`(?:^|[\s;&|()])(?:sudo\s+)?rm\s+(?:-\S*\s+)*(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\s+/`,
		`(?i)\b(?:drop\s+(?:database|schema|table)|truncate\s+table)\b`,
		`(?i)kelvin`, `(?i)straße`, `café|tea`, `(?:ab)+c`, `x{3}`,
	}
	texts := []string{
		"sudo rm -rf /", "DROP TABLE users;", "please Truncate Table x", "\u212Aelvin", "KELVIN",
		"STRASSE straße", "café", "ababc", "xxx", "tea time",
	}
	for _, p := range pats {
		re := regexp.MustCompile(p)
		pre := newPrefilter(p)
		for _, s := range texts {
			if re.MatchString(s) && !pre.mayMatch(s) {
				t.Errorf("prefilter of %s rejects %q, which matches", p, s)
			}
		}
	}
	if newPrefilter(`rm\s`).mayMatch("ls -la") {
		t.Error("prefilter let a text without the literal through")
	}
}
