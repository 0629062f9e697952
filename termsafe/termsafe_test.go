package termsafe_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/example/cloud-provider-example/termsafe"
)

func TestTextAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, in, text, line string
	}{
		{"ascii", "alice@example.com", "alice@example.com", "alice@example.com"},
		{"letters", "Zoë Ünïcode ✓ 東京 Ελληνικά עברית العربية", "Zoë Ünïcode ✓ 東京 Ελληνικά עברית العربية", "Zoë Ünïcode ✓ 東京 Ελληνικά עברית العربية"},
		// A family emoji is joined by zero-width joiners: kept.
		{"emoji", "ok 👍🏽 👨‍👩‍👧 🇫🇷", "ok 👍🏽 👨‍👩‍👧 🇫🇷", "ok 👍🏽 👨‍👩‍👧 🇫🇷"},
		{"backslashes kept", `regex = "^a\\.b$" \x1b`, `regex = "^a\\.b$" \x1b`, `regex = "^a\\.b$" \x1b`},
		{"newlines and tabs", "Plan:\n\t1 to add\n", "Plan:\n\t1 to add\n", `Plan:\n\t1 to add\n`},
		// Clearing the screen and printing what the reviewer wants to see.
		{"screen clear", "\x1b[2J\x1b[HNo changes.", `\x1b[2J\x1b[HNo changes.`, `\x1b[2J\x1b[HNo changes.`},
		{"title and bell", "evil\x1b]0;pwned\a", `evil\x1b]0;pwned\x07`, `evil\x1b]0;pwned\x07`},
		// A carriage return lets the rest of a line overwrite its start.
		{"CR overwrite", "evil\rNo changes.", `evil\rNo changes.`, `evil\rNo changes.`},
		{"CRLF", "a\r\nb", "a\\r\nb", `a\r\nb`},
		{"NUL, backspace, DEL", "a\x00b\bc\x7fd", `a\x00b\x08c\x7fd`, `a\x00b\x08c\x7fd`},
		// C1: U+009B is CSI, an ESC [ of one character.
		{"C1 controls", "a\u009b2Jb\u0085c\u0080\u009f", `a\u009b2Jb\u0085c\u0080\u009f`, `a\u009b2Jb\u0085c\u0080\u009f`},
		// Right-to-left override: shown "deny" reads "yned".
		{"bidi override", "allow \u202eyned\u202c", `allow \u202eyned\u202c`, `allow \u202eyned\u202c`},
		{"bidi isolates and marks", "\u2066a\u2067b\u2068c\u2069\u200e\u200f\u061c\u202a\u202b\u202d",
			`\u2066a\u2067b\u2068c\u2069\u200e\u200f\u061c\u202a\u202b\u202d`, `\u2066a\u2067b\u2068c\u2069\u200e\u200f\u061c\u202a\u202b\u202d`},
		// Each bad byte is shown; a valid rune after it is kept.
		{"invalid UTF-8", "a\xffb\xc3(c\xe2\x82é", `a\xffb\xc3(c\xe2\x82é`, `a\xffb\xc3(c\xe2\x82é`},
		{"escape as bytes of a C1 in UTF-8", "\xc2\x9b", `\u009b`, `\u009b`},
		{"empty", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := termsafe.Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q; want %q", tc.in, got, tc.text)
			}
			if got := termsafe.Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q; want %q", tc.in, got, tc.line)
			}
		})
	}
}

// dangerous tells whether s holds anything a terminal acts on or that
// reorders text.
func dangerous(s string, line bool) bool {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return true
		case r == '\n' || r == '\t':
			if line {
				return true
			}
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0x61c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return true
		}
	}
	return false
}

// Whatever comes in, nothing dangerous comes out, and the output is valid
// UTF-8; a second pass changes nothing.
func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[2J\x1b[HNo changes.", "evil\rNo changes.", "\u202e", "\xff\xfe", "a\nb\tc", "👨‍👩‍👧"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, line := termsafe.Text(s), termsafe.Line(s)
		if dangerous(text, false) || !utf8.ValidString(text) {
			t.Errorf("Text(%q) = %q", s, text)
		}
		if dangerous(line, true) || !utf8.ValidString(line) {
			t.Errorf("Line(%q) = %q", s, line)
		}
		if termsafe.Text(text) != text || termsafe.Line(line) != line {
			t.Errorf("not idempotent on %q", s)
		}
		if !dangerous(s, true) && (text != s || line != s) {
			t.Errorf("harmless %q changed: %q, %q", s, text, line)
		}
	})
}

// JSON escapes what encoding/json leaves raw, as JSON escapes: the
// document decodes to the same value.
func TestJSON(t *testing.T) {
	v := map[string]string{
		"plan":    "Plan:\n\t\x1b[2J\rNo changes.",
		"c1":      "a\u009bb\x7f",
		"bidi":    "allow \u202eyned\u202c",
		"letters": "Zoë 👍🏽",
	}
	doc, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	safe := termsafe.JSON(doc)
	if dangerous(string(safe), false) {
		t.Errorf("JSON left something raw: %q", safe)
	}
	for _, want := range []string{`"a\u009bb\u007f"`, `"allow \u202eyned\u202c"`, `"Zoë 👍🏽"`, `"Plan:\n\t\u001b[2J\rNo changes."`} {
		if !strings.Contains(string(safe), want) {
			t.Errorf("JSON lacks %s:\n%s", want, safe)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatal(err)
	}
	for k := range v {
		if back[k] != v[k] {
			t.Errorf("%s: decoded %q, want %q", k, back[k], v[k])
		}
	}
	plain := []byte(`{"a": "b"}`)
	if got := termsafe.JSON(plain); &got[0] != &plain[0] {
		t.Error("JSON copied a document that needed nothing")
	}
}
