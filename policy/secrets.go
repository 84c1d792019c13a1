package policy

import (
	"sort"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/ahp-go/ahp/redact"
)

// The detectors live in package redact, which the harness also uses to
// keep secrets out of what it stores: has_secret and secret_kinds see the
// same secrets the redactor replaces, and count a redaction marker
// [REDACTED:kind:fingerprint] as a secret of its kind (so that replay of a
// redacted record decides as the live evaluation did).

// secretKindsIn adds the kinds of secret found in s to found.
func secretKindsIn(s string, found map[string]bool) { redact.FindKinds(s, found) }

// redactString replaces every secret in s with [REDACTED:kind].
func redactString(s string) string { return redact.Plain(s) }

// forEachString calls fn with every string inside v (map keys and values,
// list elements, nested), stopping early when fn returns false. Member
// names are visited too: a secret may be sent as a name.
func forEachString(v ref.Val, depth int, fn func(string) bool) (bool, error) {
	if depth > maxDepth {
		return false, errTooDeep
	}
	switch x := v.(type) {
	case types.String:
		return fn(string(x)), nil
	case *jsonObject:
		if err := x.scan(); err != nil {
			return false, err.(*types.Err)
		}
		for i := range x.members {
			if !fn(x.members[i].key) {
				return false, nil
			}
			val := x.value(i)
			if a, ok := memberAssignment(x.members[i].key, val); ok && !fn(a) {
				return false, nil
			}
			if more, err := forEachString(val, depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	case *types.Err:
		return false, x
	case traits.Mapper:
		it := x.Iterator()
		for it.HasNext() == types.True {
			key := it.Next()
			val := x.Get(key)
			if ks, ok := key.(types.String); ok {
				if !fn(string(ks)) {
					return false, nil
				}
				if a, ok := memberAssignment(string(ks), val); ok && !fn(a) {
					return false, nil
				}
			}
			if more, err := forEachString(val, depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	case traits.Lister:
		n, _ := x.Size().(types.Int)
		for i := types.Int(0); i < n; i++ {
			if more, err := forEachString(x.Get(i), depth+1, fn); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// memberAssignment returns "name=value" when the string value of the
// member name is a secret because of its name ({"OPENAI_API_KEY": "…"},
// redact.MemberSecret): the detectors then see it as the assignment it is.
func memberAssignment(name string, v ref.Val) (string, bool) {
	s, ok := v.(types.String)
	if !ok || !redact.MemberSecret(name, string(s)) {
		return "", false
	}
	return name + "=" + string(s), true
}

// celSecretKinds implements secret_kinds(dyn) -> list(string).
func celSecretKinds(v ref.Val) ref.Val {
	found := map[string]bool{}
	if _, err := forEachString(v, 0, func(s string) bool { secretKindsIn(s, found); return true }); err != nil {
		return types.WrapErr(err)
	}
	noteScan(v, len(found) > 0)
	kinds := make([]string, 0, len(found))
	for k := range found {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return types.NewStringList(types.DefaultTypeAdapter, kinds)
}

// SecretScan is what the built-in secret detectors found in an event's
// payload during one evaluation (Result.PayloadSecrets).
type SecretScan uint8

// The outcomes of a payload scan.
const (
	// SecretsUnknown: no rule scanned the whole payload.
	SecretsUnknown SecretScan = iota
	// SecretsNone: has_secret or secret_kinds scanned the whole payload and
	// found no secret.
	SecretsNone
	// SecretsFound: the payload holds at least one secret.
	SecretsFound
)

// noteScan records on a decoded JSON object that its strings were scanned
// (the payload object of an evaluation keeps it until the end).
func noteScan(v ref.Val, found bool) {
	if o, ok := v.(*jsonObject); ok {
		o.secrets = SecretsNone
		if found {
			o.secrets = SecretsFound
		}
	}
}

// celHasSecret implements has_secret(dyn) -> bool.
func celHasSecret(v ref.Val) ref.Val {
	if o, ok := v.(*jsonObject); ok && o.secrets != SecretsUnknown {
		return types.Bool(o.secrets == SecretsFound) // scanned before in this evaluation
	}
	hit := false
	_, err := forEachString(v, 0, func(s string) bool {
		hit = redact.HasSecret(s)
		return !hit
	})
	if err != nil {
		return types.WrapErr(err)
	}
	noteScan(v, hit)
	return types.Bool(hit)
}

// celRedactSecrets implements redact_secrets(dyn) -> dyn: the same value
// with every secret inside its strings replaced by [REDACTED:kind].
func celRedactSecrets(v ref.Val) ref.Val {
	if s, ok := v.(types.String); ok {
		return types.String(redactString(string(s)))
	}
	if has := celHasSecret(v); has != types.True {
		return v // nothing to redact (or an error to pass on)
	}
	if o, ok := v.(*jsonObject); ok {
		if out, ok := redactJSONText(o.src); ok {
			return decodeJSON(out)
		}
	}
	n, err := toNative(v, 0)
	if err != nil {
		return types.WrapErr(err)
	}
	out, err := nativeToVal(redactNative(n), 0)
	if err != nil {
		return types.WrapErr(err)
	}
	return out
}

// redactJSONText redacts the string values of the JSON text src in place:
// every other byte (numbers as written, member order, escapes) stays, so
// a modified payload changes only what holds a secret. It reports false,
// and the caller goes through Go values instead, when src is not what it
// can read, or when a member name holds a secret (renaming may need to
// keep names unique).
func redactJSONText(src string) (string, bool) {
	var b strings.Builder
	last := 0
	name, afterName := "", false // the member name whose value comes next
	for i := 0; i < len(src); i++ {
		if src[i] != '"' {
			continue
		}
		end, err := skipString(src, i)
		if err != nil {
			return "", false
		}
		lit, err := unquoteJSON(src[i:end])
		if err != nil {
			return "", false
		}
		isName := false
		if j := skipSpace(src, end); j < len(src) && src[j] == ':' {
			isName = true
		}
		red := redactString(lit)
		if red == lit && !isName && afterName && redact.MemberSecret(name, lit) {
			red = "[REDACTED:api_key]"
		}
		if red != lit {
			if isName {
				return "", false // a member name
			}
			b.WriteString(src[last:i])
			b.Write(appendString(nil, red))
			last = end
		}
		name, afterName = lit, isName
		i = end - 1
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// redactNative redacts the strings of a plain Go value in place, member
// names included. A name that holds a secret is renamed; when two names
// redact to the same text (markers here carry no fingerprint), the later
// ones in sorted order get a suffix " #2", " #3" ... so that no member is
// lost.
func redactNative(v any) any {
	switch x := v.(type) {
	case string:
		return redactString(x)
	case map[string]any:
		var renamed []string
		for k, e := range x {
			if v, ok := e.(string); ok && redact.MemberSecret(k, v) && !redact.HasSecret(v) {
				x[k] = "[REDACTED:api_key]"
			} else {
				x[k] = redactNative(e)
			}
			if redact.HasSecret(k) {
				renamed = append(renamed, k)
			}
		}
		sort.Strings(renamed)
		vals := make([]any, len(renamed))
		for i, k := range renamed {
			vals[i] = x[k]
			delete(x, k)
		}
		for i, k := range renamed {
			x[redact.UniqueName(x, redactString(k))] = vals[i]
		}
	case []any:
		for i, e := range x {
			x[i] = redactNative(e)
		}
	}
	return v
}

// indexFold is strings.Index ignoring ASCII case; needle is lower case.
func indexFold(s, needle string) int { return redact.IndexFold(s, needle) }
