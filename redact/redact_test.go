package redact_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/redact"
)

// hostile passwords: every character that some quoting or encoding changes.
var hostile = []string{
	`pa"ss\word`,
	`p@ss:w/rd%41 x`,
	`ünï©ødé-密码-🔑`,
	`${var.x}%{if}'q'`,
	"tab\tnew\nline",
	`<&>+=?#`,
}

// forms a password takes in real messages, none of which may survive.
func leakForms(pw string) map[string]string {
	q, _ := json.Marshal(pw)
	gq := strconv.Quote(pw)
	u := &url.URL{Scheme: "postgres", User: url.UserPassword("ccm", pw), Host: "127.0.0.1:5432", Path: "/db"}
	return map[string]string{
		"exact":        "auth failed with " + pw + " here",
		"json":         `{"detail":` + string(q) + `}`,
		"go %q":        fmt.Sprintf("parse %q: invalid", "postgres://ccm:"+pw+"@h/db"),
		"go %q of url": fmt.Sprintf("parse %q: invalid", u.String()),
		"ascii %+q":    fmt.Sprintf("%+q", pw),
		"json of go":   func() string { b, _ := json.Marshal(gq); return string(b) }(),
		"query":        "GET /x?token=" + url.QueryEscape(pw) + "&a=b",
		"path":         "GET /states/" + url.PathEscape(pw),
		"url":          "dial " + u.String() + ": refused",
		"hcl":          `password = "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "${", "$${", "%{", "%%{").Replace(pw) + `"`,
		"libpq":        `host=h password='` + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + `' dbname=x`,
	}
}

func TestEveryFormOfAKnownSecret(t *testing.T) {
	for _, pw := range hostile {
		s := redact.New(pw)
		baseline := leakForms("XXXX")
		for name, text := range leakForms(pw) {
			got := s.String(text)
			if !strings.Contains(got, redact.Marker) {
				t.Errorf("%q %s: nothing redacted in %q", pw, name, got)
			}
			for _, f := range []string{pw, mustJSON(pw), strconv.Quote(pw)[1 : len(strconv.Quote(pw))-1], url.QueryEscape(pw), url.PathEscape(pw)} {
				if len(f) >= redact.MinLen && strings.Contains(got, f) {
					t.Errorf("%q %s: %q survives in %q", pw, name, f, got)
				}
			}
			// No 4-character piece of the password survives either.
			for _, piece := range pieces(pw) {
				if strings.Contains(got, piece) && !strings.Contains(baseline[name], piece) {
					t.Errorf("%q %s: piece %q survives in %q", pw, name, piece, got)
				}
			}
		}
	}
}

// pieces are the 4-rune windows of pw made of letters and digits only (the
// punctuation alone would match the surrounding text).
func pieces(pw string) []string {
	r := []rune(pw)
	var out []string
	for i := 0; i+4 <= len(r); i++ {
		w := string(r[i : i+4])
		if strings.IndexFunc(w, func(c rune) bool { return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c > 127) }) < 0 {
			out = append(out, w)
		}
	}
	return out
}

func mustJSON(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }

// A connection string registered whole also has its password redacted
// alone (PostgreSQL may print just the password's context).
func TestConnectionStringPasswordIsASecretToo(t *testing.T) {
	pw := `s"e\c r@t/%`
	for _, conn := range []string{
		(&url.URL{Scheme: "postgres", User: url.UserPassword("ccm", pw), Host: "db:5432", Path: "/x"}).String(),
		"postgres://ccm:" + pw + "@db:5432/x", // not a valid URL: '%' unescaped
		`host=db user=ccm password='` + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + `' dbname=x`,
		"postgres://db/x?password=" + url.QueryEscape(pw),
	} {
		if got := redact.ConnPassword(conn); got != pw {
			t.Errorf("ConnPassword(%q) = %q", conn, got)
		}
		s := redact.New(conn)
		if got := s.String("the password is " + pw + "."); got != "the password is "+redact.Marker+"." {
			t.Errorf("%q: %q", conn, got)
		}
	}
	if got := redact.ConnPassword("host=db password=plain dbname=x"); got != "plain" {
		t.Errorf("unquoted key=value: %q", got)
	}
}

// Passwords of connection strings nobody registered are redacted too.
func TestUnknownConnectionStrings(t *testing.T) {
	cases := map[string]string{
		`dial postgres://ccm:hunter2@10.0.0.1:5432/db failed`:            `dial postgres://ccm:[redacted]@10.0.0.1:5432/db failed`,
		`parse "postgres://u:p\"w@rd@h/db": invalid`:                     `parse "postgres://u:[redacted]@h/db": invalid`,
		`url https://user:tok%2Fen@git.example.com/x.git`:                `url https://user:[redacted]@git.example.com/x.git`,
		`host=db password=hunter2 sslmode=disable`:                       `host=db password=[redacted] sslmode=disable`,
		`host=db PASSWORD = 'it\'s secret' user=x`:                       `host=db PASSWORD = [redacted] user=x`,
		`sslpassword=abc123 x`:                                           `sslpassword=[redacted] x`,
		`{"user":"u","password":"p\"q"}`:                                 `{"user":"u","password":"[redacted]"}`,
		`no url here: http://example.com:8080/x and user:pass not a url`: `no url here: http://example.com:8080/x and user:pass not a url`,
	}
	for in, want := range cases {
		if got := redact.New().String(in); got != want {
			t.Errorf("\n in  %s\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestShortAndEmptyValuesAreIgnored(t *testing.T) {
	s := redact.New("", "ab", "abc")
	if got := s.String("abc ab"); got != "abc ab" {
		t.Fatalf("short values redacted: %q", got)
	}
	if s.Add("abc") {
		t.Fatal("a short value was added")
	}
	if !s.Add("abcd") || s.Add("abcd") {
		t.Fatal("Add does not report new values once")
	}
	if got := s.String("xabcdx"); got != "x[redacted]x" {
		t.Fatalf("got %q", got)
	}
	var nilScrubber *redact.Scrubber
	if got := nilScrubber.String("password=x1"); got != "password=[redacted]" {
		t.Fatalf("nil scrubber: %q", got)
	}
}

// A secret containing another is replaced whole, not piecewise.
func TestLongestFirst(t *testing.T) {
	s := redact.New("secret", "secret-and-more")
	if got := s.String("x secret-and-more y secret"); got != "x [redacted] y [redacted]" {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkNewAndString(b *testing.B) {
	text := strings.Repeat("terraform said something about the state backend. ", 40)
	for b.Loop() {
		s := redact.New("postgres://ccm:"+hostile[0]+"@127.0.0.1:5432/postgres?sslmode=disable", "example-token-0123456789", hostile[2])
		_ = s.String(text)
	}
}

// A source's values replace its earlier ones, which are scrubbed one
// generation more and then no longer held: the values held are bounded by
// the sources, not by how often each rotated.
func TestSetKeepsOneGeneration(t *testing.T) {
	s := redact.New("api-token-1")
	for i := range 100 {
		s.Set("secret/shop/web-tls", fmt.Sprintf("key-%03d", i))
	}
	if got := s.Len(); got != 3 {
		t.Errorf("%d values held after 100 rotations, want 3 (the token, the key and the one before)", got)
	}
	if got := s.String("key-099 key-098 key-097 api-token-1"); got != redact.Marker+" "+redact.Marker+" key-097 "+redact.Marker {
		t.Errorf("scrubbed %q", got)
	}
	if s.Set("secret/shop/web-tls", "key-099") {
		t.Error("setting the same values changed something")
	}
	s.Forget("secret/shop/web-tls")
	if got := s.Len(); got != 1 {
		t.Errorf("%d values held after Forget, want the token", got)
	}
	if got := s.String("key-099 api-token-1"); got != "key-099 "+redact.Marker {
		t.Errorf("scrubbed %q after Forget", got)
	}
}
