package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

const lbAddr = "example_load_balancer.web"

// lbConfig is a load balancer with the given name, extra arguments and
// listeners (map entries, comma separated).
func lbConfig(name, extra, listeners string) string {
	return fmt.Sprintf(`
resource "example_load_balancer" "web" {
  name = %q
%s
  listeners = {%s}
}
`, name, extra, listeners)
}

const (
	listenerHTTP  = `"tcp/80" = { protocol = "tcp", port = 80, target_port = 8080 }`
	listenerHTTPS = `"tcp/443" = { protocol = "tcp", port = 443, target_port = 8443, proxy_protocol = true }`
	listenerDNS   = `"udp/53" = { protocol = "udp", port = 53, target_port = 5353 }`
)

// checkLBsDestroyed verifies through the API that every load balancer in
// the final state is gone.
func (e *testEnv) checkLBsDestroyed(s *terraform.State) error {
	ctx, cancel := bg()
	defer cancel()
	for _, rs := range s.RootModule().Resources {
		if rs.Type != "example_load_balancer" {
			continue
		}
		_, err := e.client.GetLoadBalancer(ctx, rs.Primary.ID)
		if err == nil {
			return fmt.Errorf("load balancer %s still exists", rs.Primary.ID)
		}
		if !exampleapi.IsNotFound(err) {
			return err
		}
	}
	if lbs := e.loadBalancersNoT(); len(lbs) != 0 {
		return fmt.Errorf("%d load balancers left in the cloud", len(lbs))
	}
	return nil
}

func (e *testEnv) loadBalancersNoT() []exampleapi.LoadBalancer {
	ctx, cancel := bg()
	defer cancel()
	lbs, _ := e.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{})
	return lbs
}

// TestAccLoadBalancer_lifecycle: create, in-place update of listeners,
// targets and type, import, replacement on name and on internal, destroy.
func TestAccLoadBalancer_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	updated := fmt.Sprintf(`
  type      = "lb-medium"
  algorithm = "least_connections"
  targets   = [%q, %q]
  tags      = { team = "web", env = "test" }
  allowed_source_cidrs = ["2001:db8::/32", "192.0.2.0/24"]
  health_check = {
    protocol = "http"
    port     = 8080
    path     = "/healthz"
  }`, b.ID, a.ID)
	allListeners := listenerHTTP + ", " + listenerHTTPS + ", " + listenerDNS
	var version int64
	sameID := sameInEachStep()
	newID := newInEachStep()

	accTest(t, e.checkLBsDestroyed, []resource.TestStep{
		{
			Config: e.config(lbConfig("web", fmt.Sprintf(`
  targets = [%q]
  tags    = { team = "web" }
  allowed_source_cidrs = ["192.0.2.0/24", "2001:db8::/32"]`, a.ID), listenerHTTP)),
			ConfigPlanChecks: beforeApply(
				planIs(lbAddr, "region", "ex-west-1"),
				planIs(lbAddr, "ipv6", nil),
				planUnknown(lbAddr, "ipv4"),
			),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				newID(lbAddr, "id"),
				stateIs(lbAddr, "status", "active"),
				stateIs(lbAddr, "region", "ex-west-1"),
				stateIs(lbAddr, "type", "lb-small"),
				stateIs(lbAddr, "algorithm", "round_robin"),
				stateIs(lbAddr, "ip_family", "ipv4"),
				stateIs(lbAddr, "internal", false),
				stateIs(lbAddr, "ipv6", nil),
				stateIs(lbAddr, "listeners.tcp/80.proxy_protocol", false),
				stateIs(lbAddr, "health_check", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestMatchResourceAttr(lbAddr, "id", regexp.MustCompile(`^lb-`)),
				resource.TestMatchResourceAttr(lbAddr, "ipv4", regexp.MustCompile(`^203\.0\.113\.`)),
				resource.TestMatchResourceAttr(lbAddr, "hostname", regexp.MustCompile(`\.lb\.example\.com$`)),
				resource.TestCheckResourceAttrSet(lbAddr, "created_at"),
				resource.TestCheckResourceAttr(lbAddr, "targets.#", "1"),
				resource.TestCheckResourceAttr(lbAddr, "tags.team", "web"),
			),
		},
		{
			// In place: listeners, targets, type, health check, tags.
			Config: e.config(lbConfig("web", updated, allListeners)),
			ConfigPlanChecks: beforeApply(
				planUpdate(lbAddr),
				planIs(lbAddr, "status", "active"),
				planIs(lbAddr, "ipv4", notNull),
			),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "type", "lb-medium"),
				stateIs(lbAddr, "listeners", mapLen(3)),
				stateIs(lbAddr, "targets", setOf(a.ID, b.ID)),
				stateIs(lbAddr, "health_check", object{"protocol": "http", "port": 8080, "path": "/healthz",
					"interval_seconds": 10, "timeout_seconds": 5, "healthy_threshold": 3, "unhealthy_threshold": 3}),
			},
			Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
				// Sent sorted by protocol and port: tcp/80, tcp/443, udp/53.
				if lb.Type != "lb-medium" || len(lb.Listeners) != 3 || len(lb.Targets) != 2 || !lb.Listeners[1].ProxyProtocol {
					return fmt.Errorf("API object not updated: %+v", lb.LoadBalancerSpec)
				}
				version = lb.Version
				return nil
			}),
		},
		{
			// Only timeouts change: state is updated, the API is not called.
			Config: e.config(lbConfig("web", updated+`
  timeouts = { update = "1m" }`, allListeners)),
			ConfigPlanChecks: beforeApply(planUpdate(lbAddr)),
			Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
				if lb.Version != version {
					return fmt.Errorf("a timeouts-only change updated the API object (version %d -> %d)", version, lb.Version)
				}
				return nil
			}),
		},
		importStep(lbAddr, "timeouts"),
		{
			// Renaming replaces.
			Config:           e.config(lbConfig("web-2", "", listenerHTTP)),
			ConfigPlanChecks: beforeApply(planReplace(lbAddr, false)),
			ConfigStateChecks: stateChecks{
				newID(lbAddr, "id"),
				stateIs(lbAddr, "name", "web-2"),
			},
			Check: func(*terraform.State) error { return e.expectLBCount(1) },
		},
		{
			// internal replaces too, and gets an internal address.
			Config: e.config(lbConfig("web-2", `  internal = true
  ip_family = "dualstack"`, listenerHTTP)),
			ConfigPlanChecks: beforeApply(
				planReplace(lbAddr, false),
				planUnknown(lbAddr, "ipv6"),
			),
			ConfigStateChecks: stateChecks{
				newID(lbAddr, "id"),
				stateIs(lbAddr, "ipv6", notNull),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestMatchResourceAttr(lbAddr, "ipv4", regexp.MustCompile(`^10\.255\.`)),
				func(*terraform.State) error { return e.expectLBCount(1) },
			),
		},
	})
}

// checkAPI runs fn on the load balancer in state, read through the API.
func (e *testEnv) checkAPI(fn func(*exampleapi.LoadBalancer) error) resource.TestCheckFunc {
	return checkInCloud(lbAddr, e.client.GetLoadBalancer, fn)
}

// checkInCloud runs fn on the object at state address addr, read through
// the API with get.
func checkInCloud[T any](addr string, get func(context.Context, string) (*T, error), fn func(*T) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var id string
		if err := stateID(addr, &id)(s); err != nil {
			return err
		}
		ctx, cancel := bg()
		defer cancel()
		obj, err := get(ctx, id)
		if err != nil {
			return err
		}
		return fn(obj)
	}
}

func (e *testEnv) expectLBCount(n int) error {
	lbs := e.loadBalancersNoT()
	if len(lbs) != n {
		ids := make([]string, 0, len(lbs))
		for _, lb := range lbs {
			ids = append(ids, lb.ID)
		}
		slices.Sort(ids)
		return fmt.Errorf("want %d load balancers in the cloud, have %d: %v", n, len(lbs), ids)
	}
	return nil
}

// createLB creates a load balancer behind Terraform's back, as an apply
// killed right after its create request would have left it.
func (e *testEnv) createLB(t *testing.T, spec exampleapi.LoadBalancerSpec) *exampleapi.LoadBalancer {
	t.Helper()
	ctx, cancel := bg()
	defer cancel()
	if spec.Region == "" {
		spec.Region = "ex-west-1"
	}
	if len(spec.Listeners) == 0 {
		spec.Listeners = []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 8080}}
	}
	lb, err := e.client.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatalf("creating load balancer %s: %v", spec.Name, err)
	}
	return lb
}

// TestAccLoadBalancer_adoptOnNameConflict: an apply interrupted after the
// cloud created its load balancer left an object that state does not
// know. With on_name_conflict = "adopt_if_tags_match" the next apply
// adopts it (its tags match) instead of failing on the 409 forever, puts
// the configuration on it, and says so in a warning.
func TestAccLoadBalancer_adoptOnNameConflict(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	// What the interrupted apply created: an older spec, plus a tag the
	// configuration does not have (a superset still matches).
	orphan := e.createLB(t, exampleapi.LoadBalancerSpec{
		Name: "orphan", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Targets: []string{a.ID},
			Tags: map[string]string{"cluster": "c1", "service-uid": "u-1", "stale": "yes"},
		},
	})
	rec := &warningRecorder{}
	body := func(mode string) string {
		return lbConfig("orphan", fmt.Sprintf(`
  on_name_conflict = %q
  type             = "lb-medium"
  targets          = [%q, %q]
  tags             = { cluster = "c1", "service-uid" = "u-1" }`, mode, a.ID, b.ID), listenerHTTP+", "+listenerDNS)
	}
	var version int64

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy:             e.checkLBsDestroyed,
		Steps: []resource.TestStep{
			{
				Config:           e.config(body(onNameConflictAdopt)),
				ConfigPlanChecks: beforeApply(planCreate(lbAddr)),
				ConfigStateChecks: stateChecks{
					stateIs(lbAddr, "id", orphan.ID),
					stateIs(lbAddr, "status", "active"),
					stateIs(lbAddr, "on_name_conflict", onNameConflictAdopt),
					stateIs(lbAddr, "ipv4", notNull),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					func(*terraform.State) error { return e.expectLBCount(1) },
					e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
						want := map[string]string{"cluster": "c1", "service-uid": "u-1"}
						if lb.Type != "lb-medium" || len(lb.Listeners) != 2 || len(lb.Targets) != 2 || !maps.Equal(lb.Tags, want) {
							return fmt.Errorf("adopted load balancer not updated to the configuration: %+v", lb.LoadBalancerSpec)
						}
						version = lb.Version
						return nil
					}),
					rec.expect(regexp.MustCompile(`^Adopted existing load balancer `+orphan.ID+`: Adopted existing load balancer `+
						orphan.ID+` \(name "orphan"\) whose tags match; it was probably created by an interrupted apply`)),
				),
			},
			{
				// on_name_conflict lives in state only: changing it is an
				// update that does not call the API.
				Config:           e.config(body(onConflictError)),
				ConfigPlanChecks: beforeApply(planUpdate(lbAddr)),
				Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if lb.Version != version {
						return fmt.Errorf("changing on_name_conflict updated the API object (version %d -> %d)", version, lb.Version)
					}
					return nil
				}),
			},
		},
	})
}

// TestAccLoadBalancer_nameConflictErrors: a taken name is an error by
// default, and adoption refuses a load balancer whose owner tags name
// another owner (even when every configured tag matches), whose tags do not
// match, a configuration without tags, and immutable fields that differ.
// None of them touches the existing load balancer.
func TestAccLoadBalancer_nameConflictErrors(t *testing.T) {
	e := newTestEnv(t)
	foreign := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "taken", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: map[string]string{"cluster": "other", "service-uid": "u-9"}}})
	internal := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "internal", Internal: true, IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: map[string]string{"cluster": "c1"}}})
	sibling := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "sibling", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: map[string]string{"cluster": "c1", "service-uid": "u-9"}}})
	cfg := func(name, extra string) string { return e.config(lbConfig(name, extra, listenerHTTP)) }

	accTest(t, func(*terraform.State) error { return e.expectLBCount(3) }, []resource.TestStep{
		{
			// Default: error, naming the way out.
			Config: cfg("taken", `  tags = { cluster = "c1", "service-uid" = "u-1" }`),
			ExpectError: diagRE("Load balancer name already in use", `named "taken" already exists in region ex-west-1`,
				`set on_name_conflict = "adopt_if_tags_match"`, "loadbalancer.example.com/adopt-id"),
		},
		{
			Config: cfg("taken", `  on_name_conflict = "adopt_if_tags_match"
  tags = { cluster = "c1", "service-uid" = "u-1" }`),
			ExpectError: diagRE("Load balancer name already in use", foreign.ID, "tags do not match",
				`Mismatched tags: "cluster" is "other" (want "c1"); "service-uid" is "u-9" (want "u-1").`, "someone else"),
		},
		{
			// Every configured tag matches, but the service uid shows
			// another owner: the owner rule of imports applies.
			Config: cfg("sibling", `  on_name_conflict = "adopt_if_tags_match"
  owner_tags = ["cluster", "service-uid"]
  tags = { cluster = "c1" }`),
			ExpectError: diagRE("Load balancer name already in use", sibling.ID, "its tags show another owner",
				`tag "service-uid" is "u-9", and this configuration sets no such tag`, "it was not adopted"),
		},
		{
			Config: cfg("sibling", `  on_name_conflict = "adopt_if_tags_match"
  owner_tags = ["cluster", "service-uid"]
  tags = { cluster = "c1", "service-uid" = "u-1" }`),
			ExpectError: diagRE("Load balancer name already in use", "its tags show another owner",
				`tag "service-uid" is "u-9", not this configuration's "u-1"`),
		},
		{
			Config:      cfg("taken", `  on_name_conflict = "adopt_if_tags_match"`),
			ExpectError: diagRE("Load balancer name already in use", "sets no tags", "it was not adopted"),
		},
		{
			Config: cfg("internal", `  on_name_conflict = "adopt_if_tags_match"
  tags = { cluster = "c1" }`),
			ExpectError: diagRE("Cannot adopt load balancer "+internal.ID, "internal is true, the configuration wants false"),
		},
	})

	// The refused load balancers are untouched.
	for _, lb := range []*exampleapi.LoadBalancer{foreign, internal, sibling} {
		ctx, cancel := bg()
		got, err := e.client.GetLoadBalancer(ctx, lb.ID)
		cancel()
		if err != nil || got.Version != lb.Version || !maps.Equal(got.Tags, lb.Tags) {
			t.Errorf("load balancer %s changed by a refused adoption: %+v (%v)", lb.ID, got, err)
		}
	}
}

// TestAccLoadBalancer_drift changes and then deletes the load balancer
// through the API: plan shows the drift, apply corrects it.
func TestAccLoadBalancer_drift(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	cfg := e.config(lbConfig("drift", fmt.Sprintf(`
  targets = [%q]
  allowed_source_cidrs = []
  tags = {}`, a.ID), listenerHTTP+", "+listenerHTTPS))
	var lbID string

	accTest(t, e.checkLBsDestroyed, []resource.TestStep{
		{
			Config: cfg,
			// Empty collections in configuration must not read back as null.
			ConfigStateChecks: stateChecks{
				stateIs(lbAddr, "allowed_source_cidrs", setLen(0)),
				stateIs(lbAddr, "tags", mapLen(0)),
			},
			Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error { lbID = lb.ID; return nil }),
		},
		// Out of band: listeners, targets and type changed.
		driftStep(cfg, func() {
			ctx, cancel := bg()
			defer cancel()
			_, err := e.client.UpdateLoadBalancer(ctx, lbID, exampleapi.UpdateLoadBalancerRequest{
				Type: "lb-large", Listeners: []exampleapi.Listener{{Protocol: "udp", Port: 9999, TargetPort: 9999}},
			}, 0)
			if err != nil {
				t.Fatalf("changing load balancer out of band: %v", err)
			}
		}),
		updateStep(cfg, lbAddr, "listeners", mapLen(2), e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
			if lb.Type != "lb-small" || len(lb.Listeners) != 2 || len(lb.Targets) != 1 {
				return fmt.Errorf("drift not corrected: %+v", lb.LoadBalancerSpec)
			}
			return nil
		})),
		// Out of band: deleted. Refresh drops it; apply creates it again.
		recreateStep(cfg, lbAddr, &lbID, func() {
			ctx, cancel := bg()
			defer cancel()
			if err := e.client.DeleteLoadBalancer(ctx, lbID); err != nil {
				t.Fatalf("deleting load balancer out of band: %v", err)
			}
		}, func(*terraform.State) error { return e.expectLBCount(1) }),
	})
}

// TestAccLoadBalancer_faults applies (load balancer, route, data source)
// through 25% injected 5xx answers,
// dropped connections and rate limiting: retries, idempotent creates and
// tolerant waits must still converge, with exactly one load balancer.
func TestAccLoadBalancer_faults(t *testing.T) {
	e := newTestEnv(t, simtest.WithProvisionDelay(300*time.Millisecond))
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	e.sim.SetFaults(t, exampleapi.Faults{ErrorRate: 0.25, DropRate: 0.05, RateLimit: 20, RateBurst: 5, ProvisionDelayMs: 300})
	fast := `
provider "example" {
  endpoint    = %q
  token       = %q
  region      = "ex-west-1"
  max_retries = 10
}
`
	prov := fmt.Sprintf(fast, e.sim.URL, e.sim.Token)

	accTest(t, e.checkLBsDestroyed, []resource.TestStep{
		{
			Config: prov + lbConfig("flaky", fmt.Sprintf(`  targets = [%q]`, a.ID), listenerHTTP),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(lbAddr, "status", "active"),
				func(*terraform.State) error { return e.expectLBCount(1) },
			),
		},
		{
			Config: prov + lbConfig("flaky", fmt.Sprintf(`  targets = [%q, %q]`, a.ID, b.ID), listenerHTTP+", "+listenerDNS) +
				routeConfig(a.ID, "10.244.0.0/24"),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(lbAddr, "listeners.%", "2"),
				resource.TestCheckResourceAttr(lbAddr, "targets.#", "2"),
				resource.TestCheckResourceAttr(routeAddr, "status", "active"),
				func(*terraform.State) error { return e.expectLBCount(1) },
			),
		},
	})
}

// ownedLB is a load balancer resource that names its owner the way the
// controller does (a cluster and a Service uid), optionally imported by id.
func ownedLB(res, name, uid, importID string) string {
	s := fmt.Sprintf(`
resource "example_load_balancer" %q {
  name       = %q
  listeners  = { %s }
  owner_tags = ["cluster", "service-uid"]
  tags       = { cluster = "c1", "service-uid" = %q, team = "web" }
}
`, res, name, listenerHTTP, uid)
	if importID != "" {
		s += fmt.Sprintf(`
import {
  to = example_load_balancer.%s
  id = %q
}
`, res, importID)
	}
	return s
}

// TestAccLoadBalancer_importOwnership: an import (import block or
// terraform import) of a load balancer whose owner tags name another owner
// is refused at plan time, whatever name the configuration gives it; an
// untagged one, or one with this configuration's owner tags, is imported,
// and once applied it is managed like any other.
func TestAccLoadBalancer_importOwnership(t *testing.T) {
	e := newTestEnv(t)
	victim := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "victim", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: map[string]string{"cluster": "c1", "service-uid": "u-victim"}}})
	untagged := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "untagged", IPFamily: exampleapi.IPFamilyIPv4})
	mine := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "mine", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: map[string]string{"cluster": "c1", "service-uid": "u-1", "team": "old"}}})
	refused := diagRE("Cannot import a load balancer of another owner", victim.ID, `(name "victim", region ex-west-1)`,
		`was imported, but its tags show another owner:`, `tag "service-uid" is "u-victim", not this configuration's "u-1"`)

	accTest(t, func(*terraform.State) error {
		// The imported ones were destroyed with the configuration;
		// the victim is untouched.
		if err := e.expectLBCount(1); err != nil {
			return err
		}
		ctx, cancel := bg()
		defer cancel()
		got, err := e.client.GetLoadBalancer(ctx, victim.ID)
		if err != nil || got.Version != victim.Version || !maps.Equal(got.Tags, victim.Tags) {
			return fmt.Errorf("victim %s changed: %+v (%v)", victim.ID, got, err)
		}
		return nil
	}, []resource.TestStep{
		{
			Config:      e.config(ownedLB("web", "web", "u-1", "lb-0000000000000000")),
			ExpectError: diagRE("Cannot import load balancer lb-0000000000000000", `"lb-0000000000000000" does not exist`),
		},
		{
			// Import block, the victim's own name.
			Config:      e.config(ownedLB("web", "victim", "u-1", victim.ID)),
			ExpectError: refused,
		},
		{
			// Another name: the plan would replace (delete) the victim.
			Config:      e.config(ownedLB("web", "mine-now", "u-1", victim.ID)),
			ExpectError: refused,
		},
		{
			// terraform import itself succeeds (no configuration to
			// check against yet)...
			Config:             e.config(ownedLB("web", "victim", "u-1", "")),
			ResourceName:       "example_load_balancer.web",
			ImportState:        true,
			ImportStateId:      victim.ID,
			ImportStatePersist: true,
		},
		{
			// ...and every plan after it is refused.
			Config:      e.config(ownedLB("web", "victim", "u-1", "")),
			ExpectError: refused,
		},
		{
			// The way out: forget it without deleting it.
			Config: e.config(`
removed {
  from = example_load_balancer.web
  lifecycle {
    destroy = false
  }
}
`),
		},
		{
			// Untagged, or tagged for this configuration: imported
			// and updated to the configuration.
			Config: e.config(ownedLB("a", "untagged", "u-1", untagged.ID) + ownedLB("b", "mine", "u-1", mine.ID)),
			ConfigPlanChecks: beforeApply(
				planUpdate("example_load_balancer.a"),
				planUpdate("example_load_balancer.b"),
			),
			ConfigStateChecks: stateChecks{
				stateIs("example_load_balancer.a", "id", untagged.ID),
				stateIs("example_load_balancer.b", "id", mine.ID),
				stateIs("example_load_balancer.b", "tags.team", "web"),
			},
			Check: func(*terraform.State) error { return e.expectLBCount(3) },
		},
		{
			// Applied, the import is checked no more: its owner tags
			// may change like any argument.
			Config:           e.config(ownedLB("a", "untagged", "u-1", untagged.ID) + ownedLB("b", "mine", "u-2", mine.ID)),
			ConfigPlanChecks: beforeApply(planUpdate("example_load_balancer.b")),
			ConfigStateChecks: stateChecks{
				stateIs("example_load_balancer.b", "tags.service-uid", "u-2"),
			},
		},
	})
}
