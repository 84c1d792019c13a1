package intent

import (
	"strings"
	"unicode"
)

// codeType returns the kind of name token k is written as in code or in a
// file system (file, directory, symbol, url), or "" for an ordinary word.
// These rules read how a name is written, not a language, and hold for
// every phrase table.
func (a *analysis) codeType(k int) string {
	t := a.toks[k]
	if t.call {
		return TargetSymbol
	}
	if typ := nameType(t.text); typ != "" {
		return typ
	}
	// A capitalized word after "defines", "type", "struct"… names a symbol.
	if k > 0 && isTitle(t.text) && (a.toks[k-1].norm == "defines" || a.toks[k-1].norm == "declares" ||
		a.lx.heads[a.toks[k-1].norm] == TargetSymbol) {
		return TargetSymbol
	}
	return ""
}

// quotedType is the kind of a quoted name: as written when it looks like
// code or a path; a backticked single word is a symbol; other quoted text
// is a concept.
func (a *analysis) quotedType(k int) string {
	t := a.toks[k]
	if typ := nameType(t.text); typ != "" {
		return typ
	}
	if t.quote == '`' && !strings.ContainsFunc(t.text, unicode.IsSpace) {
		return TargetSymbol
	}
	return TargetConcept
}

// nameType classifies one written name; "" when it is an ordinary word.
func nameType(s string) string {
	lower := strings.ToLower(s)
	switch {
	case len(s) < 2 || strings.ContainsFunc(s, unicode.IsSpace) || notCode[lower]:
		return ""
	case strings.Contains(s, "://"):
		return TargetURL
	case knownFiles[lower]:
		return TargetFile
	case strings.ContainsAny(s, "/\\"):
		if strings.HasSuffix(s, "/") || strings.HasSuffix(s, "\\") {
			return TargetDirectory
		}
		last := s[strings.LastIndexAny(s, "/\\")+1:]
		if hasExtension(last) || (strings.HasPrefix(last, ".") && len(last) > 1) {
			return TargetFile
		}
		return TargetDirectory
	case s[0] == '.' && isIdent(s[1:]):
		return TargetFile // .env, .gitignore
	case hasExtension(s):
		return TargetFile
	case strings.Contains(s, "::") || strings.Contains(s, "->") || strings.Contains(s, "#"):
		return TargetSymbol
	case strings.Contains(s, "."):
		for _, seg := range strings.Split(s, ".") {
			if !isIdent(seg) {
				return ""
			}
		}
		return TargetSymbol // Foo.Bar, http.Client
	case strings.Contains(s, "_") && strings.ContainsFunc(s, unicode.IsLetter) && isIdent(s):
		return TargetSymbol // max_depth, MAX_DEPTH
	case isIdent(s) && hasInnerUpper(s):
		return TargetSymbol // parseConfig, HandleIntent
	}
	return ""
}

// hasExtension reports whether name ends in a known file extension.
func hasExtension(name string) bool {
	i := strings.LastIndexByte(name, '.')
	return i > 0 && i < len(name)-1 && extensions[strings.ToLower(name[i+1:])] && isIdentish(name[:i])
}

// isIdent reports whether s is an identifier: a letter or underscore,
// then letters, digits and underscores.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

// isIdentish reports whether s may be a file name stem.
func isIdentish(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.+@", r))
	})
}

// hasInnerUpper reports whether a lower-case letter is followed by an
// upper-case one (camelCase, PascalCase with two words).
func hasInnerUpper(s string) bool {
	prevLower := false
	for _, r := range s {
		if prevLower && unicode.IsUpper(r) {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

// isTitle reports whether s is one capitalized word (Handler).
func isTitle(s string) bool {
	for i, r := range s {
		if i == 0 && !unicode.IsUpper(r) {
			return false
		}
	}
	return isIdent(s)
}

// extensions are file extensions common in a workspace.
var extensions = words(`go mod sum py pyi js mjs cjs ts tsx jsx rs rb java kt kts scala c h cc cpp
	cxx hpp cs swift m mm php pl sh bash zsh fish ps1 bat lua r sql md markdown rst txt adoc json
	jsonl yaml yml toml ini cfg conf env xml html htm css scss less vue svelte proto graphql gql lock
	csv tsv log bin tf hcl nix gradle properties ex exs erl hs ml clj dart zig cmake mk ipynb svg png
	jpg jpeg gif pdf wasm db sqlite tmpl tpl j2 dockerfile service`)

// knownFiles are file names without an extension.
var knownFiles = words(`makefile dockerfile containerfile readme license licence changelog
	jenkinsfile gemfile procfile rakefile vagrantfile justfile codeowners go.mod go.sum
	package.json cargo.toml pyproject.toml`)

// notCode are words written like code that are ordinary words or
// product names in a prompt.
var notCode = words(`and/or i/o tcp/ip read/write input/output yes/no true/false on/off
	client/server e.g i.e etc vs github gitlab javascript typescript websocket websockets
	postgresql mysql mongodb macos ios grpc openai chatgpt graphql youtube iphone nodejs powershell
	devops sqlite pypi npm dockerhub bitbucket linkedin`)
