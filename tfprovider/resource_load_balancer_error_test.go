package tfprovider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/simulator/simtest"
)

// TestAccLoadBalancer_provisionError: a load balancer that ends in status
// error (address pool exhausted) fails the apply with the cloud's status
// message and stays tracked as tainted; the next apply replaces it.
func TestAccLoadBalancer_provisionError(t *testing.T) {
	e := newTestEnv(t, simtest.WithLBPublicPoolSize(1))
	two := func(bInternal bool) string {
		return e.config(fmt.Sprintf(`
resource "example_load_balancer" "a" {
  name      = "a"
  listeners = { "tcp/80" = { protocol = "tcp", port = 80, target_port = 80 } }
}

resource "example_load_balancer" "b" {
  name       = "b"
  internal   = %t
  listeners  = { "tcp/80" = { protocol = "tcp", port = 80, target_port = 80 } }
  depends_on = [example_load_balancer.a]
}
`, bInternal))
	}
	tfresource.ParallelTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed,
		Steps: []tfresource.TestStep{
			{
				Config:      two(false),
				ExpectError: regexp.MustCompile(`Load balancer did not become active[\s\S]*failed to provision:\s+cannot\s+allocate\s+an\s+address[\s\S]*kept in state as tainted`),
			},
			{
				// Unchanged configuration, yet b is replaced: it is tainted.
				Config:             two(false),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("example_load_balancer.a", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("example_load_balancer.b", plancheck.ResourceActionDestroyBeforeCreate),
					},
				},
			},
			{
				Config: two(true),
				Check: tfresource.ComposeAggregateTestCheckFunc(
					tfresource.TestCheckResourceAttr("example_load_balancer.b", "status", "active"),
					func(*terraform.State) error { return e.expectLBCount(2) },
				),
			},
		},
	})
}

// TestDeleteAlreadyGone: deleting objects that no longer exist succeeds.
func TestDeleteAlreadyGone(t *testing.T) {
	e := newTestEnv(t)
	data, err := newProviderData(settings{Endpoint: e.sim.URL, Token: e.sim.Token, RequestTimeout: 5e9, MaxRetries: 1}, Version, "", cleanhttp.DefaultPooledTransport())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		r     resource.Resource
		state any
	}{
		{&loadBalancerResource{resourceBase: resourceBase{data: data}}, nullLoadBalancer("lb-0000000000000000")},
		{&routeResource{resourceBase: resourceBase{data: data}}, routeModel{ID: types.StringValue("rt-0"), NetworkID: types.StringValue("net-0"),
			DestinationCIDR: types.StringValue("10.0.0.0/24"), TargetInstanceID: types.StringValue("i-0"), Status: types.StringValue("active")}},
		{&targetPoolResource{resourceBase: resourceBase{data: data}}, targetPoolModel{ID: types.StringValue("tp-0"), Name: types.StringValue("p"),
			Targets: types.SetValueMust(types.StringType, nil), Tags: types.MapNull(types.StringType), OwnerTags: types.SetNull(types.StringType)}},
	} {
		var sresp resource.SchemaResponse
		c.r.Schema(ctx, resource.SchemaRequest{}, &sresp)
		state := tfsdk.State{Schema: sresp.Schema}
		if d := state.Set(ctx, c.state); d.HasError() {
			t.Fatal(d)
		}
		var resp resource.DeleteResponse
		c.r.Delete(ctx, resource.DeleteRequest{State: state}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%T: %v", c.r, resp.Diagnostics)
		}
	}
}

// nullLoadBalancer is a state with only the id set; zero framework
// values are null, collections need their element types.
func nullLoadBalancer(id string) loadBalancerModel {
	return loadBalancerModel{
		ID:                 types.StringValue(id),
		Listeners:          types.MapNull(types.ObjectType{AttrTypes: listenerAttrTypes}),
		HealthCheck:        types.ObjectNull(healthCheckAttrTypes),
		AllowedSourceCIDRs: types.SetNull(types.StringType),
		Targets:            types.SetNull(types.StringType),
		Rules:              types.MapNull(ruleType),
		Tags:               types.MapNull(types.StringType),
		OwnerTags:          types.SetNull(types.StringType),
		Timeouts:           timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)},
	}
}
