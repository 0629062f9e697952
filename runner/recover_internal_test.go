package runner

import (
	"slices"
	"strings"
	"testing"
)

func TestInstancesOf(t *testing.T) {
	raw := []byte(`{"version":4,"resources":[
{"module":"module.certificates","mode":"managed","type":"example_certificate","name":"this","instances":[
 {"index_key":"web-tls","attributes":{"id":"cert-1"}},{"index_key":"api \"tls\"","attributes":{"id":"cert-2"}}]},
{"mode":"managed","type":"example_certificate","name":"one","instances":[{"attributes":{"id":"cert-3"}}]},
{"mode":"managed","type":"example_certificate","name":"counted","instances":[{"index_key":1,"attributes":{"id":"cert-4"}}]},
{"mode":"data","type":"example_certificate","name":"read","instances":[{"attributes":{"id":"cert-5"}}]},
{"module":"module.load_balancer","mode":"managed","type":"example_load_balancer","name":"this","instances":[{"attributes":{"id":"lb-1"}}]}]}`)
	got, err := instancesOf(raw, "example_certificate")
	if err != nil {
		t.Fatal(err)
	}
	want := []Instance{
		{Address: `module.certificates.example_certificate.this["web-tls"]`, ID: "cert-1"},
		{Address: `module.certificates.example_certificate.this["api \"tls\""]`, ID: "cert-2"},
		{Address: "example_certificate.one", ID: "cert-3"},
		{Address: "example_certificate.counted[1]", ID: "cert-4"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got, err := instancesOf([]byte("\n"), "example_certificate"); err != nil || got != nil {
		t.Errorf("no state: %v, %v", got, err)
	}
	if _, err := instancesOf([]byte("{"), "example_certificate"); err == nil {
		t.Error("a broken state read without error")
	}
}

// Two states hold the same when their resources and outputs are:
// terraform numbers a pushed copy anew, and gives one pushed into an empty
// backend a new lineage, so neither counts.
func TestSameContent(t *testing.T) {
	base := `{"version":4,"serial":2,"lineage":"l-1","outputs":{"id":{"value":"lb-1","type":"string"}},"resources":[{"mode":"managed","type":"example_load_balancer","name":"this","instances":[{"attributes":{"id":"lb-1"}}]}]}`
	for _, c := range []struct {
		name string
		b    string
		want bool
	}{
		{"renumbered", strings.Replace(base, `"serial":2`, `"serial":3`, 1), true},
		{"new lineage", strings.Replace(base, `"l-1"`, `"l-2"`, 1), true},
		{"other resource", strings.Replace(base, `"id":"lb-1"}}]`, `"id":"lb-2"}}]`, 1), false},
		{"other output", strings.Replace(base, `"value":"lb-1"`, `"value":"lb-2"`, 1), false},
		{"no resources", `{"version":4,"serial":9,"lineage":"l-1","outputs":{},"resources":[]}`, false},
		{"no state", ``, false},
		{"not a state", `not json`, false},
	} {
		if got := sameContent([]byte(base), []byte(c.b)); got != c.want {
			t.Errorf("%s: sameContent = %v, want %v", c.name, got, c.want)
		}
	}
}
