package ccm

import (
	"maps"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
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

// A pool drains for the longest delay its Services ask for; a Service
// without the annotation asks for the cluster's. Another selection's
// Services do not count.
func TestPoolDelays(t *testing.T) {
	cfg := &cloudconfig.Config{}
	cfg.LoadBalancer.TargetPools.DeregistrationDelay = &cloudconfig.Duration{Duration: 30 * time.Second}
	l := &loadBalancers{cfg: cfg, lifecycle: newNodeLifecycle(cfg)}
	svc := func(name string, ann map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Annotations: ann}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
	}
	gone := svc("gone", map[string]string{string(annotations.LBDeregistrationDelay): "1h"})
	changed := svc("changed", map[string]string{string(annotations.LBDeregistrationDelay): "50m"})
	for _, s := range []*v1.Service{
		svc("short", map[string]string{string(annotations.LBDeregistrationDelay): "5s"}),
		svc("plain", nil),
		svc("web-long", map[string]string{string(annotations.LBDeregistrationDelay): "2m", string(annotations.LBNodeSelector): "role=web"}),
		svc("web-none", map[string]string{string(annotations.LBDeregistrationDelay): "0s", string(annotations.LBNodeSelector): "role=web"}),
		svc("db", map[string]string{string(annotations.LBDeregistrationDelay): "1s", string(annotations.LBNodeSelector): "role=db"}),
		svc("broken", map[string]string{string(annotations.LBDeregistrationDelay): "2h"}),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cluster-ip", Annotations: map[string]string{string(annotations.LBDeregistrationDelay): "10m"}}},
		gone, changed,
	} {
		l.lifecycle.askDelay(s)
	}
	l.lifecycle.forgetDelay(gone)
	changed = changed.DeepCopy()
	changed.Annotations = nil
	l.lifecycle.askDelay(changed)
	got := map[string]time.Duration{}
	for sel, d := range l.poolDelays() {
		got[sel] = *d
	}
	want := map[string]time.Duration{"": 30 * time.Second, "role=web": 2 * time.Minute, "role=db": time.Second}
	if !maps.Equal(got, want) {
		t.Errorf("poolDelays = %v, want %v", got, want)
	}
}
