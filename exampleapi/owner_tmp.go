package exampleapi

import (
	"fmt"
	"slices"
)

// OwnerConflicts is a placeholder until the provider branch lands it.
func OwnerConflicts(want, got map[string]string, keys []string) []string {
	var out []string
	for _, k := range keys {
		w, ok := want[k]
		g, has := got[k]
		if ok && has && g != w {
			out = append(out, fmt.Sprintf("tag %q is %q, not %q", k, g, w))
		}
	}
	slices.Sort(out)
	return out
}
