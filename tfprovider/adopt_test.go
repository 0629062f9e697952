package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/example/cloud-provider-example/exampleapi"
)

// warningRecorder serves the provider like protoV6Factories and keeps the
// warnings its applies return: terraform-plugin-testing has no check for
// warnings, and adoption must say what it did.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *warningRecorder
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.mu.Lock()
		for _, d := range resp.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityWarning {
				s.rec.warnings = append(s.rec.warnings, d.Summary+": "+d.Detail)
			}
		}
		s.rec.mu.Unlock()
	}
	return resp, err
}

func (r *warningRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"example": func() (tfprotov6.ProviderServer, error) {
			srv, err := providerserver.NewProtocol6WithError(New(Version)())()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: srv, rec: r}, nil
		},
	}
}

// expect checks that exactly one recorded warning matches re.
func (r *warningRecorder) expect(re *regexp.Regexp) resource.TestCheckFunc {
	return func(*terraform.State) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for _, w := range r.warnings {
			if re.MatchString(w) {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("want one warning matching %s, have %d among %q", re, n, r.warnings)
		}
		return nil
	}
}

// diagRE matches the given texts in order, anything between them; spaces
// match any white space, as Terraform wraps diagnostics.
func diagRE(texts ...string) *regexp.Regexp {
	quoted := make([]string, len(texts))
	for i, t := range texts {
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(t), " ", `\s+`)
	}
	return regexp.MustCompile(strings.Join(quoted, `[\s\S]*`))
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
		Name: "orphan", Type: "lb-small", IPFamily: exampleapi.IPFamilyIPv4, Targets: []string{a.ID},
		Tags: map[string]string{"cluster": "c1", "service-uid": "u-1", "stale": "yes"},
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
				Config: e.config(body(onNameConflictAdopt)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("id"), knownvalue.StringExact(orphan.ID)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("status"), knownvalue.StringExact("active")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("on_name_conflict"), knownvalue.StringExact(onNameConflictAdopt)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ipv4"), knownvalue.NotNull()),
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
				Config: e.config(body(onConflictError)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionUpdate)},
				},
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
		Tags: map[string]string{"cluster": "other", "service-uid": "u-9"}})
	internal := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "internal", Internal: true, IPFamily: exampleapi.IPFamilyIPv4,
		Tags: map[string]string{"cluster": "c1"}})
	sibling := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "sibling", IPFamily: exampleapi.IPFamilyIPv4,
		Tags: map[string]string{"cluster": "c1", "service-uid": "u-9"}})
	cfg := func(name, extra string) string { return e.config(lbConfig(name, extra, listenerHTTP)) }

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             func(*terraform.State) error { return e.expectLBCount(3) },
		Steps: []resource.TestStep{
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

// TestAccRoute_adoptOnDestinationConflict: a route left by an interrupted
// apply is adopted when it has the configured target, and refused (as is
// any conflict by default) when it has another.
func TestAccRoute_adoptOnDestinationConflict(t *testing.T) {
	e := newTestEnv(t)
	nodeA := e.createInstance(t, "node-a", "ex-west-1a", nil)
	nodeB := e.createInstance(t, "node-b", "ex-west-1b", nil)
	netID := e.defaultNetwork(t)
	ctx, cancel := bg()
	defer cancel()
	mine, err := e.client.CreateRoute(ctx, netID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.5.0/24", TargetInstanceID: nodeA.ID})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.client.CreateRoute(ctx, netID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.6.0/24", TargetInstanceID: nodeB.ID})
	if err != nil {
		t.Fatal(err)
	}
	rec := &warningRecorder{}
	adopted := routeConfig(nodeA.ID, "10.244.5.0/24")
	adopted = strings.Replace(adopted, "target_instance_id", `on_destination_conflict = "adopt_if_same_target"
  target_instance_id`, 1)
	other := func(mode string) string {
		return adopted + fmt.Sprintf(`
resource "example_route" "other" {
  network_id              = data.example_network.default.id
  destination_cidr        = "10.244.6.0/24"
  target_instance_id      = %q
  on_destination_conflict = %q
}
`, nodeA.ID, mode)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy: func(*terraform.State) error {
			// Terraform destroyed the adopted route; the foreign one stays.
			ctx, cancel := bg()
			defer cancel()
			routes, err := e.client.ListRoutes(ctx, netID)
			if err != nil {
				return err
			}
			if len(routes) != 1 || routes[0].ID != theirs.ID {
				return fmt.Errorf("want only %s left, have %+v", theirs.ID, routes)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.config(adopted),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(routeAddr, tfjsonpath.New("id"), knownvalue.StringExact(mine.ID)),
					statecheck.ExpectKnownValue(routeAddr, tfjsonpath.New("status"), knownvalue.StringExact("active")),
					statecheck.ExpectKnownValue(routeAddr, tfjsonpath.New("on_destination_conflict"), knownvalue.StringExact(onDestinationConflictAdopt)),
				},
				Check: rec.expect(regexp.MustCompile(`^Adopted existing route ` + mine.ID + `: Adopted existing route ` + mine.ID +
					` \(10\.244\.5\.0/24 to ` + nodeA.ID + ` in ` + netID + `\) whose target matches; it was probably created by an interrupted apply`)),
			},
			{
				Config: e.config(other(onDestinationConflictAdopt)),
				ExpectError: diagRE("Route already exists", fmt.Sprintf("It is %s and sends traffic to %s, not to %s", theirs.ID, nodeB.ID, nodeA.ID),
					"terraform import <address> "+netID+"/"+theirs.ID),
			},
			{
				Config:      e.config(other(onConflictError)),
				ExpectError: diagRE("Route already exists", `set on_destination_conflict = "adopt_if_same_target"`),
			},
		},
	})
}
