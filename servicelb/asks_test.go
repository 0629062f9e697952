package servicelb

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

func dur(d time.Duration) *time.Duration { return &d }

// A pool drains for the longest delay its applied load balancers ask for
// (one without the annotation asks the cluster's), and names those that
// ask it; another selection's do not count; what is forgotten, or
// re-applied with another ask, counts no more.
func TestPoolDelays(t *testing.T) {
	var a poolAsks
	changes := 0
	a.changed = func() { changes++ }
	svc := func(name string) objectref.Ref {
		return objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: name, UID: "u-" + name}
	}
	a.applied(svc("short"), "", dur(5*time.Second))
	a.applied(svc("plain"), "", nil)
	a.applied(svc("web-long"), "role=web", dur(2*time.Minute))
	a.applied(objectref.Group("shop", "front"), "role=web", dur(2*time.Minute))
	a.applied(svc("web-none"), "role=web", dur(0))
	a.applied(svc("db"), "role=db", dur(time.Second))
	a.applied(svc("gone"), "", dur(time.Hour))
	a.forget(svc("gone"))
	a.applied(svc("moved"), "", dur(50*time.Minute))
	a.applied(svc("moved"), "role=db", dur(50*time.Minute))
	if changes != 10 {
		t.Errorf("%d changes heard, want 10 (one per ask that changed)", changes)
	}
	a.applied(svc("db"), "role=db", dur(time.Second))
	a.forget(svc("never"))
	if changes != 10 {
		t.Errorf("an unchanged ask or forgetting nothing was heard as a change")
	}

	const cluster = 30 * time.Second
	d := a.delays(cluster)
	got := map[string]time.Duration{}
	for sel, pd := range d {
		got[sel] = pd.delay
	}
	want := map[string]time.Duration{"": cluster, "role=web": 2 * time.Minute, "role=db": 50 * time.Minute}
	if !maps.Equal(got, want) {
		t.Errorf("delays = %v, want %v", got, want)
	}
	if _, by := d.of("role=web"); !slices.Equal(by, []string{"Service shop/web-long", "load balancer group shop/front"}) {
		t.Errorf("role=web asked by %q", by)
	}
	if _, by := d.of(""); len(by) != 0 {
		t.Errorf("the cluster's delay is asked by nobody in particular, got %q", by)
	}
	if got, want := d.carried(cluster), slices.Sorted(slices.Values([]string{
		"pool " + engine.PoolKey("role=db") + ": deregistration delay 50m0s asked by Service shop/moved",
		"pool " + engine.PoolKey("role=web") + ": deregistration delay 2m0s asked by Service shop/web-long, load balancer group shop/front",
	})); !slices.Equal(got, want) {
		t.Errorf("carried = %q, want %q", got, want)
	}
	if delay, by := d.of("role=none"); delay != nil || by != nil {
		t.Errorf("a selection nobody applied asks nothing: %v %v", delay, by)
	}
}

// After a restart the pools are planned from what every load balancer
// applied before asks (its record's last apply), on the pool of its
// selection now, and not before that is read; a Service gone, or another
// of its name, asks nothing.
func TestPoolDelaysSeededFromRecords(t *testing.T) {
	cfg := &cloudconfig.Config{}
	cfg.LoadBalancer.TargetPools.DeregistrationDelay = &cloudconfig.Duration{Duration: 30 * time.Second}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	svc := func(name, uid, sel string) *v1.Service {
		s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid)}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
		if sel != "" {
			s.Annotations = map[string]string{string(annotations.LBNodeSelector): sel}
		}
		return s
	}
	for _, s := range []*v1.Service{svc("web", "u1", ""), svc("api", "u2", "role=api"), svc("front-a", "u3", "role=web"), svc("reborn", "u9", "")} {
		if err := idx.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	applied := func(secs string) *records.LastApply {
		out := map[string]json.RawMessage{"id": json.RawMessage(`"lb-1"`)}
		if secs != "" {
			out[engine.DelayOutput] = json.RawMessage(secs)
		}
		return &records.LastApply{Outputs: out}
	}
	ref := func(name, uid string) objectref.Ref {
		return objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: name, UID: uid}
	}
	recs := []*records.Record{
		{Object: ref("web", "u1"), Applied: applied("600")},
		{Object: ref("api", "u2"), Applied: applied("")},
		{Object: objectref.Group("shop", "front"), Members: []objectref.Ref{ref("front-a", "u3")}, Applied: applied("900")},
		{Object: ref("gone", "u4"), Applied: applied("3600")},
		{Object: ref("reborn", "u5"), Applied: applied("3600")}, // an earlier Service of the name
		{Object: ref("planned", "u6")},                          // never applied
		{Object: objectref.TargetPools, Applied: applied("")},
	}
	readable := false
	list := func(context.Context) ([]*records.Record, error) {
		if !readable {
			return nil, context.DeadlineExceeded
		}
		return recs, nil
	}
	l := &targetPools{shared: &shared{cfg: cfg, lifecycle: newNodeLifecycle(cfg), groups: &groups{services: idx, records: list}}}
	if _, err := l.poolDelays(t.Context()); err == nil {
		t.Fatal("the pools were given delays before the records were read")
	}
	readable = true
	d, err := l.poolDelays(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for sel, pd := range d {
		got[sel] = pd.delay
	}
	want := map[string]time.Duration{"": 10 * time.Minute, "role=api": 30 * time.Second, "role=web": 15 * time.Minute}
	if !maps.Equal(got, want) {
		t.Errorf("seeded delays = %v, want %v", got, want)
	}
}
