package exampleapi_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// TestTargetPoolLifecycle drives every target pool method, and a load
// balancer referencing a pool, through the client.
func TestTargetPoolLifecycle(t *testing.T) {
	c := startClient(t)
	a := mustInstance(t, c, "pool-a", "ex-west-1a")
	b := mustInstance(t, c, "pool-b", "ex-west-1b")

	tp, err := c.CreateTargetPool(testkit.Context(t), exampleapi.CreateTargetPoolRequest{
		Name: "workers", Region: region, Targets: []string{a.ID}, Tags: map[string]string{"cluster": "prod"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tp.ID, "tp-") || tp.Version != 1 || !slices.Equal(tp.Targets, []string{a.ID}) {
		t.Fatalf("created %+v", tp)
	}
	if got, err := c.GetTargetPool(testkit.Context(t), tp.ID); err != nil || got.Name != "workers" || got.Tags["cluster"] != "prod" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := c.CreateTargetPool(testkit.Context(t), exampleapi.CreateTargetPoolRequest{Name: "workers", Region: region}); !exampleapi.IsConflict(err) {
		t.Fatalf("duplicate name: want conflict, got %v", err)
	}

	spec := lbSpec("web")
	spec.TargetPoolID = tp.ID
	lb, err := c.CreateLoadBalancer(testkit.Context(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if lb.TargetPoolID != tp.ID || len(lb.Targets) != 0 {
		t.Fatalf("load balancer on a pool: %+v", lb.LoadBalancerSpec)
	}

	upd := exampleapi.UpdateTargetPoolRequest{Targets: []string{a.ID, b.ID}, Tags: map[string]string{"cluster": "prod"}}
	got, err := c.UpdateTargetPool(testkit.Context(t), tp.ID, upd, tp.Version)
	if err != nil || got.Version != 2 || len(got.Targets) != 2 {
		t.Fatalf("update: %+v %v", got, err)
	}
	if _, err := c.UpdateTargetPool(testkit.Context(t), tp.ID, upd, tp.Version); !exampleapi.IsPreconditionFailed(err) {
		t.Fatalf("stale If-Match: want precondition failed, got %v", err)
	}
	list, err := c.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{Name: "workers", Region: region})
	if err != nil || len(list) != 1 || list[0].ID != tp.ID {
		t.Fatalf("list by name: %+v %v", list, err)
	}

	checkDeleteInUse(t, c, "target pool", tp.ID, lb.ID, c.DeleteTargetPool, c.GetTargetPool)
}

// checkDeleteInUse: deleting the object id (a kind, deleted with del and
// read with get) that the load balancer lbID uses is a conflict naming the
// load balancer; once that is deleted, the object can be.
func checkDeleteInUse[T any](t *testing.T, c *exampleapi.Client, kind, id, lbID string,
	del func(context.Context, string) error, get func(context.Context, string) (*T, error)) {
	t.Helper()
	err := del(testkit.Context(t), id)
	var apiErr *exampleapi.APIError
	if !exampleapi.IsConflict(err) || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, lbID) {
		t.Fatalf("delete of a %s in use: want a conflict naming %s, got %v", kind, lbID, err)
	}
	if err := c.DeleteLoadBalancer(testkit.Context(t), lbID); err != nil {
		t.Fatal(err)
	}
	if err := del(testkit.Context(t), id); err != nil {
		t.Fatal(err)
	}
	if _, err := get(testkit.Context(t), id); !exampleapi.IsNotFound(err) {
		t.Fatalf("deleted %s: want not found, got %v", kind, err)
	}
}

// TestTargetPoolFieldErrors: a 400 keeps the field the API named.
func TestTargetPoolFieldErrors(t *testing.T) {
	c := startClient(t)
	spec := lbSpec("web", "i-x")
	spec.TargetPoolID = "tp-x"
	_, err := c.CreateLoadBalancer(testkit.Context(t), spec)
	var apiErr *exampleapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Field != "target_pool_id" || !errors.Is(err, exampleapi.ErrInvalid) {
		t.Fatalf("pool and targets: %v", err)
	}
	_, err = c.CreateTargetPool(testkit.Context(t), exampleapi.CreateTargetPoolRequest{Name: "p", Region: region, Targets: []string{"i-gone"}})
	if !errors.As(err, &apiErr) || apiErr.Field != "targets[0]" {
		t.Fatalf("unknown target: %v", err)
	}
}
