package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"text/template"
)

// Object identifies what a state belongs to.
type Object struct {
	Cluster string
	// Kind is the object's kind as workspace names spell it
	// (objectref.Ref.StateKind): service, group, routes or targetpools.
	Kind      string
	Namespace string
	Name      string
}

// DefaultKeyTemplate names a workspace after its object.
const DefaultKeyTemplate = "{{.Cluster}}-{{.Kind}}-{{.Namespace}}-{{.Name}}"

// MaxKeyLen bounds state keys so that a key is valid everywhere a backend
// puts it: a label value (63, the kubernetes backend labels its Secret
// with it), a Secret name suffix, a file name, a pg workspace name, an S3
// key and a URL path element.
const MaxKeyLen = 63

// suffixLen is the length of the identity hash suffix: 16 letters a-p, one
// per 4 bits, so 64 bits. Letters only: the kubernetes backend refuses a
// secret_suffix ending in '-<digits>', which an all-digit hex suffix did
// for ~2.3 % of objects.
const suffixLen = 16

// keyer renders state keys from a template.
type keyer struct{ tmpl *template.Template }

func newKeyer(text string) (*keyer, error) {
	if text == "" {
		text = DefaultKeyTemplate
	}
	t, err := template.New("key").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("state key template %q: %w", text, err)
	}
	if _, err := render(t, Object{Cluster: "c", Kind: "service", Namespace: "ns", Name: "n"}); err != nil {
		return nil, fmt.Errorf("state key template %q: %w", text, err)
	}
	return &keyer{tmpl: t}, nil
}

// Key is the sanitised template result, cut to fit, plus "-" and a 64-bit
// hash of the object's identity in letters: sanitising maps distinct
// objects ("a-b"/"c" and "a"/"b-c") to the same text, and cutting maps
// long names alike; the hash keeps their states apart, and is too long for
// a tenant to search for a name whose key equals another namespace's.
func (k *keyer) Key(o Object) (string, error) {
	raw, err := render(k.tmpl, o)
	if err != nil {
		return "", fmt.Errorf("state key for %s/%s: %w", o.Namespace, o.Name, err)
	}
	sum := identity(o)
	suffix := make([]byte, suffixLen)
	for i := range suffix {
		nibble := sum[i/2] >> (4 * (1 - i%2)) & 0xf
		suffix[i] = 'a' + nibble
	}
	return join(sanitize(raw), string(suffix), MaxKeyLen), nil
}

// LegacyKey is the key scheme before 64-bit letter suffixes: 8 hex digits
// of the same hash, keys up to 80 characters. States under such keys are
// moved to Key (see docs/state.md, "Migration").
func (k *keyer) LegacyKey(o Object) (string, error) {
	raw, err := render(k.tmpl, o)
	if err != nil {
		return "", fmt.Errorf("state key for %s/%s: %w", o.Namespace, o.Name, err)
	}
	sum := identity(o)
	return join(sanitize(raw), hex.EncodeToString(sum[:])[:8], legacyMaxKeyLen), nil
}

// legacyMaxKeyLen bounded legacy keys.
const legacyMaxKeyLen = 80

func identity(o Object) [sha256.Size]byte {
	return sha256.Sum256([]byte(strings.Join([]string{o.Cluster, o.Kind, o.Namespace, o.Name}, "\x00")))
}

// join is prefix-suffix within max characters, the prefix cut to fit.
func join(prefix, suffix string, max int) string {
	if len(prefix) > max-len(suffix)-1 {
		prefix = strings.TrimRight(prefix[:max-len(suffix)-1], "-")
	}
	if prefix == "" {
		return suffix
	}
	return prefix + "-" + suffix
}

func render(t *template.Template, o Object) (string, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, o); err != nil {
		return "", err
	}
	return b.String(), nil
}

// sanitize keeps [a-z0-9-], folding everything else to single dashes.
func sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}
