package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
)

const poolAddr = "example_target_pool.workers"

// poolConfig is a target pool "workers" (resource name res) with the given
// targets (instance ids) and extra arguments.
func poolConfig(res, name, extra string, targets ...string) string {
	q := make([]string, len(targets))
	for i, t := range targets {
		q[i] = fmt.Sprintf("%q", t)
	}
	return fmt.Sprintf(`
resource "example_target_pool" %q {
  name    = %q
  targets = [%s]
%s
}
`, res, name, strings.Join(q, ", "), extra)
}

// poolLB is the load balancer "web" forwarding to the pool pool (a
// resource name).
func poolLB(pool string) string {
	return lbConfig("web", fmt.Sprintf("  target_pool_id = example_target_pool.%s.id", pool), listenerHTTP)
}

// checkPoolsDestroyed verifies through the API that no target pool (and no
// load balancer) is left.
func (e *testEnv) checkPoolsDestroyed(s *terraform.State) error {
	if err := e.checkLBsDestroyed(s); err != nil {
		return err
	}
	return noneLeft("target pools", func(ctx context.Context) ([]exampleapi.TargetPool, error) {
		return e.client.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
	})
}

// checkPool runs fn on the target pool in state, read through the API.
func (e *testEnv) checkPool(fn func(*exampleapi.TargetPool) error) resource.TestCheckFunc {
	return checkInCloud(poolAddr, e.client.GetTargetPool, fn)
}

// TestAccTargetPool_lifecycle: a pool and a load balancer forwarding to
// it; changing the pool's targets updates the pool only (the load
// balancer's plan is a no-op and its API object keeps its version); import;
// moving the load balancer to another pool while the first one is
// destroyed, in one apply; back to targets; destroy.
func TestAccTargetPool_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	// create_before_destroy (kept in state) makes Terraform update the
	// load balancers that used a pool before it destroys the pool.
	tags := `  tags = { cluster = "c1" }
  lifecycle {
    create_before_destroy = true
  }`
	var lbVersion int64
	samePool := sameInEachStep()
	lbOnPool := stateSame(poolAddr, "id", lbAddr, "target_pool_id")

	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config:           e.config(poolConfig("workers", "workers", tags, a.ID) + poolLB("workers")),
			ConfigPlanChecks: beforeApply(planIs(poolAddr, "region", "ex-west-1")),
			ConfigStateChecks: stateChecks{
				samePool(poolAddr, "id"),
				lbOnPool,
				stateIs(poolAddr, "id", matching(`^tp-`)),
				stateIs(poolAddr, "targets", setOf(a.ID)),
				stateIs(poolAddr, "created_at", notNull),
				stateIs(poolAddr, "on_name_conflict", onConflictError),
				stateIs(lbAddr, "targets", nil),
			},
			Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
				if lb.TargetPoolID == "" || len(lb.Targets) != 0 {
					return fmt.Errorf("load balancer not on the pool: %+v", lb.LoadBalancerSpec)
				}
				lbVersion = lb.Version
				return nil
			}),
		},
		{
			// A node joins: the pool is updated, the load balancer not.
			Config: e.config(poolConfig("workers", "workers", tags, a.ID, b.ID) + poolLB("workers")),
			ConfigPlanChecks: beforeApply(
				planUpdate(poolAddr),
				planNoop(lbAddr),
			),
			ConfigStateChecks: stateChecks{
				samePool(poolAddr, "id"),
				stateIs(poolAddr, "targets", setLen(2)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkPool(func(tp *exampleapi.TargetPool) error {
					if got := slices.Sorted(slices.Values(tp.Targets)); !slices.Equal(got, slices.Sorted(slices.Values([]string{a.ID, b.ID}))) {
						return fmt.Errorf("pool targets %v", tp.Targets)
					}
					return nil
				}),
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if lb.Version != lbVersion {
						return fmt.Errorf("the pool update changed the load balancer (version %d -> %d)", lbVersion, lb.Version)
					}
					return nil
				}),
			),
		},
		importStep(poolAddr),
		{
			// Another pool for the load balancer, the first one
			// destroyed in the same apply: Terraform moves the load
			// balancer before deleting the pool it used.
			Config: e.config(poolConfig("other", "other", tags, b.ID) + poolLB("other")),
			ConfigPlanChecks: beforeApply(
				planDestroy(poolAddr),
				planCreate("example_target_pool.other"),
				planUpdate(lbAddr),
			),
			ConfigStateChecks: stateChecks{
				stateSame("example_target_pool.other", "id", lbAddr, "target_pool_id"),
			},
		},
		{
			// Back to listing targets: in place, and the pool can go.
			Config: e.config(lbConfig("web", fmt.Sprintf("  targets = [%q]", a.ID), listenerHTTP)),
			ConfigPlanChecks: beforeApply(
				planUpdate(lbAddr),
				planDestroy("example_target_pool.other"),
			),
			Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
				if lb.TargetPoolID != "" || !slices.Equal(lb.Targets, []string{a.ID}) {
					return fmt.Errorf("load balancer not back on targets: %+v", lb.LoadBalancerSpec)
				}
				return nil
			}),
		},
	})
}

// TestAccTargetPool_drift: targets changed, an instance deleted and the
// pool deleted outside Terraform: refresh shows each, apply corrects it.
func TestAccTargetPool_drift(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	c := e.createInstance(t, "node-c", "ex-west-1c", nil)
	cfg := e.config(poolConfig("workers", "workers", `  tags = {}`, a.ID, b.ID))
	var poolID string
	expectTargets := func(ids ...string) resource.TestCheckFunc {
		return e.checkPool(func(tp *exampleapi.TargetPool) error {
			poolID = tp.ID
			if got, want := slices.Sorted(slices.Values(tp.Targets)), slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
				return fmt.Errorf("pool targets %v, want %v", got, want)
			}
			return nil
		})
	}
	put := func(targets ...string) func() {
		return func() {
			ctx, cancel := bg()
			defer cancel()
			if _, err := e.client.UpdateTargetPool(ctx, poolID, exampleapi.UpdateTargetPoolRequest{Targets: targets}, 0); err != nil {
				t.Fatalf("changing the pool out of band: %v", err)
			}
		}
	}

	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config: cfg,
			// An empty tags map stays empty, not null.
			ConfigStateChecks: stateChecks{
				stateIs(poolAddr, "tags", mapLen(0)),
			},
			Check: expectTargets(a.ID, b.ID),
		},
		driftStep(cfg, put(c.ID)),
		updateStep(cfg, poolAddr, "targets", setLen(2), expectTargets(a.ID, b.ID)),
		// A deleted instance leaves the pool: drift too.
		driftStep(cfg, func() {
			ctx, cancel := bg()
			defer cancel()
			if err := e.client.DeleteInstance(ctx, b.ID); err != nil {
				t.Fatal(err)
			}
		}),
		{
			// Without the deleted instance, nothing to do.
			Config:           e.config(poolConfig("workers", "workers", `  tags = {}`, a.ID)),
			ConfigPlanChecks: beforeApply(planNoop(poolAddr)),
			Check:            expectTargets(a.ID),
		},
		// Deleted out of band: created again.
		recreateStep(e.config(poolConfig("workers", "workers", `  tags = {}`, a.ID)), poolAddr, &poolID, func() {
			ctx, cancel := bg()
			defer cancel()
			if err := e.client.DeleteTargetPool(ctx, poolID); err != nil {
				t.Fatal(err)
			}
		}, func(*terraform.State) error { return nil }),
	})
}

// TestAccTargetPool_deleteInUse: destroying a pool that a load balancer
// outside this configuration still uses fails with a diagnostic naming the
// load balancer and the way out, keeps the pool in state, and succeeds once
// the load balancer has moved.
func TestAccTargetPool_deleteInUse(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	var poolID string
	var foreign *exampleapi.LoadBalancer

	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config: e.config(poolConfig("workers", "workers", "", a.ID) + `
resource "terraform_data" "keep" {}
`),
			Check: func(s *terraform.State) error {
				poolID = s.RootModule().Resources[poolAddr].Primary.ID
				return nil
			},
		},
		{
			// Another workspace's load balancer uses the pool.
			PreConfig: func() {
				foreign = e.createLB(t, exampleapi.LoadBalancerSpec{Name: "elsewhere", IPFamily: exampleapi.IPFamilyIPv4,
					LoadBalancerSettings: exampleapi.LoadBalancerSettings{TargetPoolID: poolID}})
			},
			Config: e.config(`
resource "terraform_data" "keep" {}
`),
			// The ids are not known yet when the steps are built.
			ExpectError: regexp.MustCompile(`Cannot delete target pool tp-[0-9a-f]+: it is in use[\s\S]*still\s+referenced\s+by\s+1\s+load\s+balancer\s+\(lb-[0-9a-f]+\)[\s\S]*then\s+apply\s+again[\s\S]*managed\s+elsewhere[\s\S]*create_before_destroy\s+=\s+true`),
		},
		{
			// Still in state: the plan still wants to delete it.
			Config: e.config(`
resource "terraform_data" "keep" {}
`),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		},
		{
			PreConfig: func() {
				ctx, cancel := bg()
				defer cancel()
				if err := e.client.DeleteLoadBalancer(ctx, foreign.ID); err != nil {
					t.Fatal(err)
				}
			},
			Config: e.config(`
resource "terraform_data" "keep" {}
`),
			Check: func(*terraform.State) error {
				ctx, cancel := bg()
				defer cancel()
				if _, err := e.client.GetTargetPool(ctx, poolID); !exampleapi.IsNotFound(err) {
					return fmt.Errorf("pool %s not deleted: %v", poolID, err)
				}
				return nil
			},
		},
	})
}

// TestAccTargetPool_adoptOnNameConflict: a pool left by an interrupted
// apply is adopted when its tags match (and gets the configuration's
// targets and tags, with a warning); a pool whose tags do not match, or
// whose owner tag names another owner, or a configuration without tags,
// is refused and the pool left untouched.
func TestAccTargetPool_adoptOnNameConflict(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	create := func(name string, tags map[string]string, targets ...string) *exampleapi.TargetPool {
		ctx, cancel := bg()
		defer cancel()
		tp, err := e.client.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: name, Region: "ex-west-1", Targets: targets, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	orphan := create("orphan", map[string]string{"cluster": "c1", "stale": "yes"}, a.ID)
	foreign := create("foreign", map[string]string{"cluster": "c2"})
	rec := &warningRecorder{}
	adopt := `  on_name_conflict = "adopt_if_tags_match"
  owner_tags       = ["cluster"]`

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy: func(*terraform.State) error {
			ctx, cancel := bg()
			defer cancel()
			pools, err := e.client.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
			if err != nil {
				return err
			}
			if len(pools) != 1 || pools[0].ID != foreign.ID || pools[0].Version != foreign.Version || !maps.Equal(pools[0].Tags, foreign.Tags) {
				return fmt.Errorf("want only the untouched %s left, have %+v", foreign.ID, pools)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.config(poolConfig("workers", "orphan", adopt+`
  tags = { cluster = "c1" }`, a.ID, b.ID)),
				ConfigPlanChecks: beforeApply(planCreate(poolAddr)),
				ConfigStateChecks: stateChecks{
					stateIs(poolAddr, "id", orphan.ID),
					stateIs(poolAddr, "targets", setLen(2)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					e.checkPool(func(tp *exampleapi.TargetPool) error {
						if len(tp.Targets) != 2 || !maps.Equal(tp.Tags, map[string]string{"cluster": "c1"}) {
							return fmt.Errorf("adopted pool not updated to the configuration: %+v", tp)
						}
						return nil
					}),
					rec.expect(regexp.MustCompile(`^Adopted existing target pool `+orphan.ID+`: Adopted existing target pool `+
						orphan.ID+` \(name "orphan"\) whose tags match; it was probably created by an interrupted apply`)),
				),
			},
			{
				Config: e.config(poolConfig("workers", "orphan", adopt+`
  tags = { cluster = "c1" }`, a.ID, b.ID) + poolConfig("other", "foreign", adopt+`
  tags = { cluster = "c1" }`)),
				ExpectError: diagRE("Target pool name already in use", foreign.ID, "its tags show another owner",
					`tag "cluster" is "c2", not this configuration's "c1"`, "it was not adopted"),
			},
			{
				Config: e.config(poolConfig("workers", "orphan", adopt+`
  tags = { cluster = "c1" }`, a.ID, b.ID) + poolConfig("other", "foreign", `  on_name_conflict = "adopt_if_tags_match"
  tags = { cluster = "c1" }`)),
				ExpectError: diagRE("Target pool name already in use", foreign.ID, "tags do not match",
					`Mismatched tags: "cluster" is "c2" (want "c1").`),
			},
			{
				Config: e.config(poolConfig("workers", "orphan", adopt+`
  tags = { cluster = "c1" }`, a.ID, b.ID) + poolConfig("other", "foreign", `  on_name_conflict = "adopt_if_tags_match"`)),
				ExpectError: diagRE("Target pool name already in use", "sets no tags", "it was not adopted"),
			},
			{
				Config: e.config(poolConfig("workers", "orphan", adopt+`
  tags = { cluster = "c1" }`, a.ID, b.ID) + poolConfig("other", "foreign", `  tags = { cluster = "c1" }`)),
				ExpectError: diagRE("Target pool name already in use", `named "foreign" already exists in region ex-west-1`,
					`set on_name_conflict = "adopt_if_tags_match"`),
			},
		},
	})
}

// TestAccTargetPool_importOwnership: importing a pool whose owner tag
// names another owner is refused at plan time; a pool of this owner is
// imported and updated to the configuration.
func TestAccTargetPool_importOwnership(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	ctx, cancel := bg()
	victim, err := e.client.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "victim", Region: "ex-west-1",
		Targets: []string{a.ID}, Tags: map[string]string{"cluster": "c2"}})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := e.client.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "mine", Region: "ex-west-1",
		Tags: map[string]string{"cluster": "c1"}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	imported := func(name, id string) string {
		return poolConfig("workers", name, `  owner_tags = ["cluster"]
  tags       = { cluster = "c1" }`, a.ID) + fmt.Sprintf(`
import {
  to = example_target_pool.workers
  id = %q
}
`, id)
	}

	accTest(t, func(*terraform.State) error {
		ctx, cancel := bg()
		defer cancel()
		got, err := e.client.GetTargetPool(ctx, victim.ID)
		if err != nil || got.Version != victim.Version {
			return fmt.Errorf("victim %s changed: %+v (%v)", victim.ID, got, err)
		}
		return nil
	}, []resource.TestStep{
		{
			Config:      e.config(imported("victim", "tp-0000000000000000")),
			ExpectError: diagRE("Cannot import target pool tp-0000000000000000", "does not exist"),
		},
		{
			Config: e.config(imported("victim", victim.ID)),
			ExpectError: diagRE("Cannot import a target pool of another owner", victim.ID, `(name "victim", region ex-west-1)`,
				`tag "cluster" is "c2", not this configuration's "c1"`),
		},
		{
			Config:           e.config(imported("mine", mine.ID)),
			ConfigPlanChecks: beforeApply(planUpdate(poolAddr)),
			ConfigStateChecks: stateChecks{
				stateIs(poolAddr, "id", mine.ID),
				stateIs(poolAddr, "targets", setOf(a.ID)),
			},
		},
	})
}

// TestAccTargetPool_validation: plan-time diagnostics for pools and for a
// load balancer with both targets and a pool; what only the API knows
// (unknown instances or pools) fails at apply time on the attribute. An
// empty targets with a pool is fine: the loadbalancer module always passes
// one.
func TestAccTargetPool_validation(t *testing.T) {
	e := newTestEnv(t)
	pool := func(name, targets string) string {
		return fmt.Sprintf(`
resource "example_target_pool" "p" {
  name    = %q
  targets = %s
}
`, name, targets)
	}
	cases := []configError{
		{pool("p", manyStrings("i-", exampleapi.MaxTargets+1)), `Attribute targets set must contain at most 5000 elements,\s+got:\s+5001`},
		{pool("p", `["lb-1"]`), `must be an id starting with "i-"`},
		{pool("a b", `[]`), `Attribute name must start with a letter or digit`},
		{`
resource "example_target_pool" "p" {
  name = "p"
}
`, `argument\s+"targets"\s+is\s+required`},
		{lbConfig("web", `  target_pool_id = "tp-1"
  targets        = ["i-1", "i-2"]`, listenerHTTP),
			`Conflicting targets and target_pool_id[\s\S]*target_pool_id is set and targets lists 2\s+instances`},
		{lbConfig("web", `  target_pool_id = "lb-1"`, listenerHTTP), `must be an id starting with "tp-"`},
		// Found by the API at apply time, reported on the attribute.
		{pool("p", `["i-0000000000000000"]`),
			`Cannot create target pool[\s\S]*targets = \["i-0000000000000000"\][\s\S]*targets\[0\]: instance\s+"i-0000000000000000"\s+does\s+not\s+exist`},
		{lbConfig("web", `  target_pool_id = "tp-0000000000000000"`, listenerHTTP),
			`Cannot create load balancer[\s\S]*target_pool_id = "tp-0000000000000000"[\s\S]*target pool\s+"tp-0000000000000000"\s+does\s+not\s+exist`},
	}
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{{
		Config: e.config(poolConfig("workers", "workers", "") + lbConfig("web", `  target_pool_id = example_target_pool.workers.id
  targets        = []`, listenerHTTP)),
		ConfigStateChecks: stateChecks{
			stateIs(lbAddr, "targets", setLen(0)),
			stateIs(poolAddr, "targets", setLen(0)),
		},
	}})
	e.expectErrorsLeaving(t, e.checkPoolsDestroyed, cases)
}

// A target removed from a pool with a deregistration delay drains in the
// cloud for that long; the delay changes in place.
func TestAccTargetPool_draining(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	delay := "  deregistration_delay_seconds = 60"
	var removed time.Time
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config:      e.config(poolConfig("workers", "workers", "  deregistration_delay_seconds = 3601", a.ID)),
			ExpectError: regexp.MustCompile(`deregistration_delay_seconds`),
		},
		{
			Config: e.config(poolConfig("workers", "workers", delay, a.ID, b.ID)),
			ConfigStateChecks: stateChecks{
				stateIs(poolAddr, "deregistration_delay_seconds", 60),
			},
			Check: func(*terraform.State) error { removed = time.Now(); return nil },
		},
		{
			Config:           e.config(poolConfig("workers", "workers", delay, a.ID)),
			ConfigPlanChecks: beforeApply(planUpdate(poolAddr)),
			Check: e.checkPool(func(tp *exampleapi.TargetPool) error {
				if len(tp.Draining) != 1 || tp.Draining[0].ID != b.ID || tp.Draining[0].Until.Before(removed.Add(59*time.Second)) {
					return fmt.Errorf("draining %+v, want %s for 60 s", tp.Draining, b.ID)
				}
				return nil
			}),
		},
		{
			// Unset: 0, in place.
			Config:           e.config(poolConfig("workers", "workers", "", a.ID)),
			ConfigPlanChecks: beforeApply(planUpdate(poolAddr)),
			ConfigStateChecks: stateChecks{
				stateIs(poolAddr, "deregistration_delay_seconds", nil),
			},
			Check: e.checkPool(func(tp *exampleapi.TargetPool) error {
				if tp.DeregistrationDelaySeconds != 0 {
					return fmt.Errorf("delay %d in the cloud, want 0", tp.DeregistrationDelaySeconds)
				}
				return nil
			}),
		},
	})
}
