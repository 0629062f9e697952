package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
)

// Switching the distribution (terraform to tofu and back, a controller restart
// with another terraform.distribution) keeps the states: each reads the
// other's. A plan awaiting approval made by one is never applied
// by the other (which would refuse its plan file: "plan files cannot be
// transferred between different versions"): its approval finds a fresh
// plan with another id (show -json names the binary's version), which
// waits for its own approval.
func TestSwitchingDistributions(t *testing.T) {
	tofu := tftest.OpenTofu(t)
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	if f.tc.Distribution != tftest.Terraform {
		t.Skipf("starts on terraform; EXAMPLE_DISTRIBUTION=%s", f.tc.Distribution)
	}
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("switch", 80)
	manual := annotations.ApplyManual

	// terraform creates it.
	applied(t, f.eng, svc, nodes)
	// terraform plans a change that waits for approval.
	svc.Spec.Ports[0].Port = 8080
	id, out := planned(t, f.eng, svc, nodes)
	store.keep(t, string(svc.UID), out)

	// Restarted on tofu: the approval of terraform's plan applies nothing.
	f.tc = tofu
	onTofu := f.engine(t, 2, engine.Options{Plans: store})
	_, out, err := onTofu.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	id2 := awaiting(t, err)
	if id2 == id || out.Superseded == nil || out.Superseded.ID != id || out.Applied != nil {
		t.Fatalf("terraform's approved plan on tofu: %+v", out)
	}
	if lbs := f.allLBs(t); len(lbs) != 1 || lbs[0].Listeners[0].Port != 80 {
		t.Fatalf("changed before tofu's plan was approved: %+v", lbs)
	}
	store.keep(t, string(svc.UID), out)
	// tofu applies its own plan, over terraform's state.
	lb, out, err := onTofu.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id2))
	if err != nil || out.Applied == nil || out.Applied.ID != id2 || lb == nil {
		t.Fatalf("tofu's plan approved: %+v %v", out, err)
	}
	if lbs := f.allLBs(t); len(lbs) != 1 || lbs[0].Listeners[0].Port != 8080 {
		t.Fatalf("after tofu's apply: %+v", lbs)
	}
	store.keep(t, string(svc.UID), out)

	// Back on terraform: it updates and deletes over tofu's state.
	f.tc = tftest.Get(t)
	back := f.engine(t, 2, engine.Options{Plans: store})
	svc.Spec.Ports[0].Port = 9090
	if _, out, err = back.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err != nil || out.Applied == nil || out.Applied.Summary.Change != 1 {
		t.Fatalf("terraform over tofu's state: %+v %v", out, err)
	}
	if _, err := back.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err)
	}
	if n := f.countLBs(t); n != 0 {
		t.Fatalf("%d LBs after delete", n)
	}
}

func (f *fixture) allLBs(t *testing.T) []exampleapi.LoadBalancer {
	t.Helper()
	l, err := f.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
