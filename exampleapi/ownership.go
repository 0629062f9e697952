package exampleapi

import (
	"fmt"
	"slices"
)

// OwnerConflicts applies the ownership rule for taking over an existing
// object (import, adoption): keys are the tag keys whose values name the
// owner (a cluster id, a Kubernetes Service uid), want the tags of the
// configuration taking it over, got the existing object's tags. Every
// owner key that got has with a value other than want's (or that want
// does not set at all) shows another owner and is a conflict. An owner key
// got lacks is no conflict: an untagged object belongs to nobody yet.
//
// The result is human readable, one entry per key, sorted; empty means the
// object may be taken over.
func OwnerConflicts(want, got map[string]string, keys []string) []string {
	var out []string
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		g, tagged := got[k]
		if !tagged {
			continue
		}
		switch w, ok := want[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("tag %q is %q, and this configuration sets no such tag", k, g))
		case w != g:
			out = append(out, fmt.Sprintf("tag %q is %q, not this configuration's %q", k, g, w))
		}
	}
	return out
}
