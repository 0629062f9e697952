// Package termsafe is the one filter for text that others chose (a
// tenant's port name, a Terraform plan of their Service, a username, a
// comment, an error quoting any of them) before it reaches a terminal or
// is stored for people to read: examplectl's output, the plan records'
// texts and the controller's events.
//
// What it escapes, so that it is visible and inert:
//
//   - the C0 controls (U+0000–U+001F, ESC above all) and DEL, written \x1b;
//     newline and tab are kept by Text, written \n and \t by Line, and
//     carriage return (which lets a line overwrite itself) is always \r;
//   - the C1 controls (U+0080–U+009F, which some terminals read as CSI),
//     written \u009b;
//   - the bidirectional formatting characters (Unicode's Bidi_Control:
//     U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which make a
//     terminal or browser show characters in another order than they are
//     (Trojan Source), written \u202e;
//   - each byte of invalid UTF-8, written \xff.
//
// Everything else, letters of any script and emoji included, is kept as
// it is, and text that holds none of these comes back unchanged (the same
// string). A backslash is not escaped: the output is for reading, not for
// decoding back, and plan texts are full of backslashes.
package termsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with its control characters escaped (see the package
// documentation), keeping newlines and tabs: for multi-line text such as a
// plan, an error or a comment.
func Text(s string) string { return filter(s, false) }

// Line is Text that also escapes newlines and tabs: for a one-line value
// such as a table cell, a name inside a message or an event reason.
func Line(s string) string { return filter(s, true) }

// JSON escapes, in a JSON document such as encoding/json writes, the
// characters Text would, as JSON \u escapes (invalid UTF-8 as \ufffd), so
// that the document still means the same: encoding/json leaves DEL, the
// C1 controls and the bidi formatting characters raw in strings.
func JSON(doc []byte) []byte {
	if clean(string(doc), false) == len(doc) {
		return doc
	}
	var b strings.Builder
	b.Grow(len(doc) + 16)
	for s := string(doc); s != ""; {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case escaped(r, false):
			writeU(&b, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return []byte(b.String())
}

func filter(s string, line bool) string {
	n := clean(s, line)
	if n == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:n])
	for s = s[n:]; s != ""; {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			writeX(&b, s[0])
		case !escaped(r, line):
			b.WriteString(s[:size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			writeX(&b, byte(r)) //nolint:gosec // r < 0x80 here: one byte
		default:
			writeU(&b, r)
		}
		s = s[size:]
	}
	return b.String()
}

// clean is the length of s's prefix that needs no escaping.
func clean(s string, line bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if escaped(rune(c), line) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || escaped(r, line) {
			return i
		}
		i += size
	}
	return len(s)
}

// escaped tells whether r is shown escaped; newline and tab only in a line.
func escaped(r rune, line bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return line
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	}
	return r >= 0x600 && unicode.Is(unicode.Bidi_Control, r)
}

const hex = "0123456789abcdef"

func writeX(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&0xf])
}

func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}
