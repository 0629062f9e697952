package gateway

import (
	"slices"
	"testing"
)

// Route and listener host names intersect as the Gateway API's
// HTTPRouteSpec.Hostnames describes.
func TestIntersect(t *testing.T) {
	for _, c := range []struct {
		listener string
		route    []string
		want     []string
	}{
		{"", nil, []string{""}},
		{"a.example", nil, []string{"a.example"}},
		{"", []string{"a.example", "*.b.example"}, []string{"a.example", "*.b.example"}},
		{"a.example", []string{"a.example", "b.example"}, []string{"a.example"}},
		{"*.example", []string{"a.example", "x.y.example", "example", "other.test"}, []string{"a.example", "x.y.example"}},
		{"a.example", []string{"*.example"}, []string{"a.example"}},
		{"*.example", []string{"*.a.example"}, []string{"*.a.example"}},
		{"*.a.example", []string{"*.example"}, []string{"*.a.example"}},
		{"*.example", []string{"*.example"}, []string{"*.example"}},
		{"a.example", []string{"b.example"}, nil},
		{"*.example", []string{"example"}, nil},
	} {
		if got := intersect(c.listener, c.route); !slices.Equal(got, c.want) {
			t.Errorf("intersect(%q, %q) = %q, want %q", c.listener, c.route, got, c.want)
		}
	}
}
