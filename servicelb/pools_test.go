package servicelb

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/annotations"
)

// A tenant's node selection gets a pool of its own only while the
// Service's policy applies unreviewed anyway, and within its namespace's
// bound; every node's pool is the cluster's.
func TestNewPoolRefused(t *testing.T) {
	cases := []struct {
		name, sel string
		pol       annotations.ApplyPolicy
		own       int
		want      string // "" allowed; else in the reason
	}{
		{name: "every node, under manual", sel: "", pol: annotations.ApplyManual, own: 8},
		{name: "own selection, auto", sel: "role=web", pol: annotations.ApplyAuto, own: 7},
		{name: "own selection, manual", sel: "role=web", pol: annotations.ApplyManual, want: "apply policy manual: a new pool would be created outside the Service's review"},
		{name: "own selection, plan-only", sel: "role=web", pol: annotations.ApplyPlanOnly, want: "apply policy plan-only"},
		{name: "over the bound", sel: "role=web", pol: annotations.ApplyAuto, own: 8, want: "namespace shop has 8 pools for node selections of its own (loadBalancer.targetPools.maxPerNamespace: 8)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := newPoolRefused("shop", c.sel, c.pol, c.own, 8)
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("newPoolRefused = %q; want %q", got, c.want)
			}
		})
	}
}
