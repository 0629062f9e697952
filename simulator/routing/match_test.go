package routing

import (
	"net/http"
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A header added to one the request has is one value more, after the
// request's own, whatever the case of its name: the backend reads both
// (Gateway API conformance's HTTPRouteRequestHeaderModifier joins them
// as "a,b").
func TestModifyHeadersAppends(t *testing.T) {
	h := http.Header{}
	h.Add("X-Header-Add", "original")
	h.Add("X-Header-Set", "original")
	h.Add("X-Header-Remove", "original")
	ModifyHeaders(h, &exampleapi.HeaderModifier{
		Set:    []exampleapi.HeaderMatch{{Name: "x-header-set", Value: "set"}},
		Add:    []exampleapi.HeaderMatch{{Name: "x-header-add", Value: "added"}, {Name: "x-header-new", Value: "new"}},
		Remove: []string{"x-header-remove"},
	})
	for name, want := range map[string][]string{
		"X-Header-Add": {"original", "added"}, "X-Header-New": {"new"}, "X-Header-Set": {"set"}, "X-Header-Remove": nil,
	} {
		if got := h.Values(name); !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
