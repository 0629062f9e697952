package state

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// labelValue is a valid Kubernetes label value; keys must also never end
// in "-<digits>" (the kubernetes backend refuses such a secret_suffix).
var (
	labelValue  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	digitSuffix = regexp.MustCompile(`-[0-9]+$`)
)

// randomObject draws namespaces and names of every shape: long, short,
// unicode, punctuation, all digits, empty (routes).
func randomObject(r *rand.Rand) Object {
	alphabets := []string{"abcdefghijklmnopqrstuvwxyz", "0123456789", "abc-.", "ABC_Z9", "名前ü/\n${}%"}
	word := func(max int) string {
		a := []rune(alphabets[r.IntN(len(alphabets))])
		n := r.IntN(max + 1)
		var b strings.Builder
		for range n {
			b.WriteRune(a[r.IntN(len(a))])
		}
		return b.String()
	}
	kinds := []string{"service", "routes"}
	return Object{Cluster: word(12), Kind: kinds[r.IntN(2)], Namespace: word(63), Name: word(63)}
}

func checkKey(t *testing.T, o Object, key string) {
	t.Helper()
	switch {
	case len(key) > MaxKeyLen:
		t.Fatalf("%q: key %q has %d characters, over %d", o, key, len(key), MaxKeyLen)
	case !labelValue.MatchString(key):
		t.Fatalf("%q: key %q is not [a-z0-9-] starting and ending alphanumeric", o, key)
	case digitSuffix.MatchString(key):
		t.Fatalf("%q: key %q ends in -<digits>", o, key)
	case len(key) < suffixLen || strings.Trim(key[len(key)-suffixLen:], "abcdefghijklmnop") != "":
		t.Fatalf("%q: key %q lacks its %d-letter hash suffix", o, key, suffixLen)
	}
}

// Properties over many random objects: every key is short enough and
// valid for every backend, never ends in digits, and distinct objects get
// distinct keys.
func TestKeyProperties(t *testing.T) {
	for _, tmpl := range []string{"", "{{.Namespace}}/{{.Name}}", "x", "{{.Name}}{{.Name}}{{.Name}}"} {
		k, err := newKeyer(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(len(tmpl))))
		seen := map[string]Object{}
		for range 20000 {
			o := randomObject(r)
			key, err := k.Key(o)
			if err != nil {
				t.Fatal(err)
			}
			checkKey(t, o, key)
			if prev, dup := seen[key]; dup && prev != o {
				t.Fatalf("template %q: %q and %q share key %q", tmpl, o, prev, key)
			}
			seen[key] = o
		}
	}
}

// The old 8-hex suffix was all digits for ~2.3 % of objects, and the
// kubernetes backend refused their state; no key ends in digits now.
func TestKeyNeverEndsInDigits(t *testing.T) {
	k, _ := newKeyer("")
	digits := 0
	for i := range 2000 {
		o := Object{Cluster: "prod", Kind: "service", Namespace: "default", Name: fmt.Sprintf("web-%d", i)}
		if legacy, _ := k.LegacyKey(o); !digitSuffix.MatchString(legacy) {
			continue
		}
		digits++
		if key, _ := k.Key(o); digitSuffix.MatchString(key) {
			t.Fatalf("%q: key %q ends in -<digits>: the kubernetes backend refuses it", o, key)
		}
	}
	if digits == 0 {
		t.Fatal("no legacy key ended in digits: the test shows nothing")
	}
	// The simplest Service of all was one of them.
	if legacy, _ := k.LegacyKey(Object{"prod", "service", "default", "web"}); !digitSuffix.MatchString(legacy) {
		t.Fatalf("legacy key %q", legacy)
	}
}

// Legacy keys reached 80 characters, over the 63 of the label the
// kubernetes backend puts the key in.
func TestKeyFitsALabel(t *testing.T) {
	k, _ := newKeyer("")
	for n := 40; n < 100; n++ {
		o := Object{Cluster: "prod", Kind: "service", Namespace: "default", Name: strings.Repeat("n", n)}
		if key, _ := k.Key(o); len(key) > MaxKeyLen || !labelValue.MatchString(key) {
			t.Fatalf("%q: key %q (%d characters) is no label value", o, key, len(key))
		}
	}
}

// Keys are stable across releases: they name existing states. These are
// the keys this scheme has always given; LegacyKey those of the previous
// scheme, which the migration finds states under.
func TestKeysAreStable(t *testing.T) {
	k, _ := newKeyer("")
	for _, c := range []struct {
		o           Object
		key, legacy string
	}{
		{Object{"prod", "service", "default", "web"}, "prod-service-default-web-aaiacdgfemjnpcnj", "prod-service-default-web-00802365"},
		{Object{"prod", "routes", "", "cluster"}, "prod-routes-cluster-gpckebakplbfbbhb", "prod-routes-cluster-6f2a410a"},
		{Object{"c", "service", "ns", "a-very-long-name-that-will-be-cut-because-it-is-way-too-long-for-a-key-x"},
			"c-service-ns-a-very-long-name-that-will-be-cut-onndfepdlhjfdjjj",
			"c-service-ns-a-very-long-name-that-will-be-cut-because-it-is-way-too-lo-edd354f3"},
	} {
		key, _ := k.Key(c.o)
		legacy, _ := k.LegacyKey(c.o)
		if key != c.key || legacy != c.legacy {
			t.Errorf("%q: key %q legacy %q, want %q and %q", c.o, key, legacy, c.key, c.legacy)
		}
	}
}

// Objects that sanitise alike, or differ only beyond the cut, keep apart;
// the readable part still reads as the object.
func TestKeysKeepLookAlikesApart(t *testing.T) {
	k, _ := newKeyer("")
	long := strings.Repeat("very-long-name-", 20)
	pairs := [][2]Object{
		{{"prod", "service", "a-b", "c"}, {"prod", "service", "a", "b-c"}},
		{{"prod", "service", "ns", long + "1"}, {"prod", "service", "ns", long + "2"}},
		{{"prod", "service", "team.x", "web"}, {"prod", "service", "team-x", "web"}},
	}
	for _, p := range pairs {
		a, _ := k.Key(p[0])
		b, _ := k.Key(p[1])
		if a == b {
			t.Errorf("%q and %q share key %q", p[0], p[1], a)
		}
	}
	if key, _ := k.Key(Object{"prod", "service", "team.x", "Web_Frontend"}); !strings.HasPrefix(key, "prod-service-team-x-web-frontend-") {
		t.Errorf("key %q does not read as its object", key)
	}
	byName, _ := newKeyer("{{.Name}}")
	if key, _ := byName.Key(Object{"c", "routes", "", "/"}); len(key) != suffixLen {
		t.Errorf("empty template result: key %q, want the suffix alone", key)
	}
}
