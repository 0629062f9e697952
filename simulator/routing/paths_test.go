package routing

import "testing"

// A full path replaces the request's; a prefix replaces what the rule's
// prefix matched, by whole elements (the Gateway API's conformance
// cases among them).
func TestReplacedPath(t *testing.T) {
	for _, c := range []struct{ path, rulePath, full, prefix, want string }{
		{"/prefix/one/two", "/prefix/one", "", "/one", "/one/two"},
		{"/strip-prefix/three", "/strip-prefix", "", "/", "/three"},
		{"/strip-prefix", "/strip-prefix", "", "/", "/"},
		{"/original-prefix/lemon", "/original-prefix", "", "/replacement-prefix", "/replacement-prefix/lemon"},
		{"/path-and-host", "/path-and-host", "", "/replacement-prefix", "/replacement-prefix"},
		{"/web/a/", "/web/", "", "/v2/", "/v2/a/"},
		{"/a", "/", "", "/root", "/root/a"},
		{"/full/one/two", "/full/one", "/one", "", "/one"},
		{"/kept", "/kept", "", "", "/kept"},
	} {
		if got := replacedPath(c.path, c.rulePath, c.full, c.prefix); got != c.want {
			t.Errorf("%s matched by %s, full %q, prefix %q: %s, want %s", c.path, c.rulePath, c.full, c.prefix, got, c.want)
		}
	}
}
