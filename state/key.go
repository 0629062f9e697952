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
	Cluster   string
	Kind      string // "service" or "routes"
	Namespace string
	Name      string
}

// DefaultKeyTemplate names a state after its object.
const DefaultKeyTemplate = "{{.Cluster}}-{{.Kind}}-{{.Namespace}}-{{.Name}}"

// maxKeyLen keeps keys valid as Kubernetes Secret name suffixes, file
// names, pg workspace names and S3 keys.
const maxKeyLen = 80

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

// Key is the sanitised template result plus a short hash of the object's
// identity: sanitising maps distinct objects ("a-b"/"c" and "a"/"b-c") to
// the same text, the hash keeps their states apart.
func (k *keyer) Key(o Object) (string, error) {
	raw, err := render(k.tmpl, o)
	if err != nil {
		return "", fmt.Errorf("state key for %s/%s: %w", o.Namespace, o.Name, err)
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{o.Cluster, o.Kind, o.Namespace, o.Name}, "\x00")))
	suffix := hex.EncodeToString(sum[:])[:8]
	s := sanitize(raw)
	if len(s) > maxKeyLen-len(suffix)-1 {
		s = strings.TrimRight(s[:maxKeyLen-len(suffix)-1], "-")
	}
	if s == "" {
		return suffix, nil
	}
	return s + "-" + suffix, nil
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
