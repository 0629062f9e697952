package renderer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/lbmodel"
)

// Tokens for literal values. hclwrite.TokensForValue does the escaping of
// every primitive (quotes, backslashes, ${ and %{, control characters); the
// layout here is ours: non-empty collections put one element per line, so a
// reviewer's diff shows exactly the target, listener or tag that changed,
// map keys are always quoted, and object attributes come in a reading order.

// keyOrder is the reading order of object attributes; others follow,
// sorted.
var keyOrder = []string{
	"source", "version",
	// A rule's head, a backend's pool, a redirect's target: only rules
	// have these, so the other objects read as before rules existed.
	"name", "listener_port", "priority", "order_key", "hostnames", "path_type", "target_pool_id", "scheme", "hostname",
	"protocol", "port", "target_port", "proxy_protocol",
	"certificates", "certificate_ids", "redirect_to_https_port", "sticky_sessions", "cookie_name", "ttl_seconds",
	"certificate_pem", "private_key_version", "path", "path_prefix",
	"interval_seconds", "timeout_seconds", "healthy_threshold", "unhealthy_threshold",
	// The rest of a rule: its conditions, then what it does.
	"method", "headers", "query_params", "backends", "weight", "redirect", "status_code", "request_headers", "response_headers",
	"rewrite", "set", "add", "remove",
}

func valueTokens(v cty.Value) hclwrite.Tokens {
	t := v.Type()
	switch {
	case v.IsNull() || t.IsPrimitiveType():
		return hclwrite.TokensForValue(v)
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		var elems []hclwrite.Tokens
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			elems = append(elems, valueTokens(e))
		}
		return multiline("[", "]", elems, true)
	case t.IsMapType():
		var entries []hclwrite.Tokens
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			entries = append(entries, entry(hclwrite.TokensForValue(k), valueTokens(e)))
		}
		return multiline("{", "}", entries, false)
	case t.IsObjectType():
		var entries []hclwrite.Tokens
		for _, name := range objectKeys(t) {
			entries = append(entries, entry(keyTokens(name), valueTokens(v.GetAttr(name))))
		}
		return multiline("{", "}", entries, false)
	}
	panic("renderer: no tokens for " + t.FriendlyName())
}

// commentedMapTokens renders a map of strings with a trailing comment per
// entry (comments are sanitised).
func commentedMapTokens(keys []string, values, comments map[string]string) hclwrite.Tokens {
	var entries []hclwrite.Tokens
	for _, k := range keys {
		e := entry(hclwrite.TokensForValue(cty.StringVal(k)), hclwrite.TokensForValue(cty.StringVal(values[k])))
		if c := comments[k]; c != "" {
			// A line comment token carries its newline, as the HCL scanner's do.
			e = append(e, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte("# " + sanitizeComment(c) + "\n")})
		}
		entries = append(entries, e)
	}
	return multiline("{", "}", entries, false)
}

func entry(key, value hclwrite.Tokens) hclwrite.Tokens {
	t := append(hclwrite.Tokens{}, key...)
	t = append(t, &hclwrite.Token{Type: hclsyntax.TokenEqual, Bytes: []byte("=")})
	return append(t, value...)
}

func multiline(open, close string, items []hclwrite.Tokens, commas bool) hclwrite.Tokens {
	openType, closeType := hclsyntax.TokenOBrack, hclsyntax.TokenCBrack
	if open == "{" {
		openType, closeType = hclsyntax.TokenOBrace, hclsyntax.TokenCBrace
	}
	t := hclwrite.Tokens{{Type: openType, Bytes: []byte(open)}}
	if len(items) > 0 {
		t = append(t, newline())
	}
	for _, it := range items {
		t = append(t, it...)
		if commas {
			t = append(t, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")})
		}
		if last := it[len(it)-1]; last.Type != hclsyntax.TokenComment {
			t = append(t, newline())
		}
	}
	return append(t, &hclwrite.Token{Type: closeType, Bytes: []byte(close)})
}

func newline() *hclwrite.Token {
	return &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}
}

// keyTokens writes an object key bare when HCL reads it back as that same
// string; keywords such as null would be read as values, so they are quoted.
func keyTokens(name string) hclwrite.Tokens {
	if hclsyntax.ValidIdentifier(name) && name != "null" && name != "true" && name != "false" {
		return hclwrite.TokensForIdentifier(name)
	}
	return hclwrite.TokensForValue(cty.StringVal(name))
}

func objectKeys(t cty.Type) []string {
	var names []string
	for n := range t.AttributeTypes() {
		names = append(names, n)
	}
	rank := func(n string) int {
		if i := slices.Index(keyOrder, n); i >= 0 {
			return i
		}
		return len(keyOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return names
}

// sanitizeComment keeps a comment on its line: anything that is not a
// printable character (newlines above all) becomes '?'.
func sanitizeComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// commentTokens turns lines into '#' comment tokens.
func commentTokens(lines ...string) hclwrite.Tokens {
	var t hclwrite.Tokens
	for _, l := range lines {
		text := "#"
		if l != "" {
			text += " " + sanitizeComment(l)
		}
		t = append(t, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte(text + "\n")})
	}
	return t
}

// checkUTF8 rejects strings that are not valid UTF-8: HCL has no way to
// write them, and hclwrite would silently replace the bad bytes.
func checkUTF8(field string, v cty.Value) error {
	var bad error
	check := func(s string) {
		if bad == nil && !utf8.ValidString(s) {
			bad = &lbmodel.InputError{Field: field, Reason: "contains a string that is not valid UTF-8"}
		}
	}
	_ = cty.Walk(v, func(_ cty.Path, v cty.Value) (bool, error) {
		switch {
		case v.IsNull() || !v.IsKnown():
		case v.Type() == cty.String:
			check(v.AsString())
		case v.Type().IsMapType():
			for k := range v.AsValueMap() {
				check(k)
			}
		}
		return bad == nil, nil
	})
	return bad
}
