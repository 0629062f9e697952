package redact

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// escapers turn a value into the forms it takes when quoted into a
// message. Forms applies them twice, for a quote inside a quote (a Go %q
// error inside terraform's JSON diagnostics).
var escapers = []func(string) string{
	jsonEscape(true), jsonEscape(false), jsonASCII,
	goQuote, goQuoteASCII,
	hclEscape,
	libpqEscape,
	url.QueryEscape, url.PathEscape, userinfoEscape,
	lowerHex(url.QueryEscape), lowerHex(url.PathEscape), lowerHex(userinfoEscape),
}

// Forms lists the strings that reveal secret: the value itself; its JSON,
// Go (strconv.Quote, also ASCII-only), HCL and libpq escaped forms; its
// URL-encoded forms (query, path, userinfo; upper- and lower-case hex);
// those forms escaped once more; and, when secret is a connection string,
// the same for the password it holds.
func Forms(secret string) []string {
	if secret == "" {
		return nil
	}
	seeds := []string{secret}
	if pw := ConnPassword(secret); pw != "" && pw != secret {
		seeds = append(seeds, pw)
	}
	var out []string
	for _, v := range seeds {
		if len(v) < MinLen {
			continue
		}
		out = append(out, v)
		for _, e := range escapers {
			once := e(v)
			out = append(out, once)
			for _, e2 := range escapers {
				out = append(out, e2(once))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ConnPassword returns the password of a connection URL
// (scheme://user:password@host/...) or of a key=value connection string
// (password=... or password='...'), or "".
func ConnPassword(conn string) string {
	conn = strings.TrimSpace(conn)
	if i := strings.Index(conn, "://"); i >= 0 {
		u, err := url.Parse(conn)
		switch {
		case err == nil && u.User != nil:
			pw, _ := u.User.Password()
			return pw
		case err == nil:
			return u.Query().Get("password")
		}
		// Not a valid URL (an unescaped '%', '#' or '/' in the password):
		// take what lies between user: and the last '@'.
		rest := conn[i+3:]
		at := strings.LastIndex(rest, "@")
		colon := strings.Index(rest, ":")
		if at < 0 || colon < 0 || colon > at {
			return ""
		}
		return rest[colon+1 : at]
	}
	m := kvValue.FindStringSubmatch(conn)
	if m == nil {
		return ""
	}
	if m[1] != "" {
		return unescapeLibpq(m[1][1 : len(m[1])-1])
	}
	return m[2]
}

var kvValue = regexp.MustCompile(`(?i)(?:^|\s)password\s*=\s*(?:('(?:[^'\\]|\\.)*')|([^\s']+))`)

func unescapeLibpq(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func jsonEscape(html bool) func(string) string {
	return func(s string) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s)
		q := strings.TrimSuffix(b.String(), "\n")
		return q[1 : len(q)-1]
	}
}

// jsonASCII is JSON with every non-ASCII rune as \uXXXX (as some encoders
// write it).
func jsonASCII(s string) string {
	var b strings.Builder
	for _, r := range jsonEscape(false)(s) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16Surrogates(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

func goQuote(s string) string      { q := strconv.Quote(s); return q[1 : len(q)-1] }
func goQuoteASCII(s string) string { q := strconv.QuoteToASCII(s); return q[1 : len(q)-1] }

// hclEscape is the body of an HCL quoted string (what terraform prints).
var hclEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`, "${", "$${", "%{", "%%{").Replace

// libpqEscape is the body of a single-quoted libpq key=value value.
var libpqEscape = strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace

// userinfoEscape is the password as net/url writes it into a URL.
func userinfoEscape(s string) string {
	return strings.TrimPrefix(url.UserPassword("u", s).String(), "u:")
}

var pctHex = regexp.MustCompile(`%[0-9A-F]{2}`)

func lowerHex(f func(string) string) func(string) string {
	return func(s string) string { return pctHex.ReplaceAllStringFunc(f(s), strings.ToLower) }
}
