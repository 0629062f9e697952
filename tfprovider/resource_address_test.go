package tfprovider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
)

const (
	addrAddr = "example_address.web"
	lbA      = "example_load_balancer.a"
	lbB      = "example_load_balancer.b"
)

// addressConfig is the address "web" with the given extra arguments.
func addressConfig(extra string) string {
	return fmt.Sprintf(`
resource "example_address" "web" {
  name = "web"
%s
}
`, extra)
}

// namedLB is the load balancer res (a resource name) named name, with
// extra arguments and one tcp listener.
func namedLB(res, name, extra string) string {
	return fmt.Sprintf(`
resource "example_load_balancer" %q {
  name      = %q
  listeners = {%s}
%s
}
`, res, name, listenerHTTP, extra)
}

// onLB is the address's load_balancer_id argument for the load balancer
// res (a resource name).
func onLB(res string) string {
	return fmt.Sprintf("  load_balancer_id = example_load_balancer.%s.id", res)
}

// checkAddressesDestroyed verifies through the API that no address (and
// no load balancer) is left.
func (e *testEnv) checkAddressesDestroyed(s *terraform.State) error {
	if err := e.checkLBsDestroyed(s); err != nil {
		return err
	}
	return noneLeft("addresses", func(ctx context.Context) ([]exampleapi.Address, error) {
		return e.client.ListAddresses(ctx, exampleapi.AddressFilter{})
	})
}

// addressOn checks through the API that the address in state is attached
// to lb (a load balancer's state address, or its id; "" for none), and
// that the load balancer shows the address's IP.
func (e *testEnv) addressOn(lb string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		want := lb
		if lb != "" && !strings.HasPrefix(lb, "lb-") {
			if err := stateID(lb, &want)(s); err != nil {
				return err
			}
		}
		return checkInCloud(addrAddr, e.client.GetAddress, func(a *exampleapi.Address) error {
			if a.LoadBalancerID != want {
				return fmt.Errorf("address %s on %q, want %q", a.ID, a.LoadBalancerID, want)
			}
			if want == "" {
				return nil
			}
			ctx, cancel := bg()
			defer cancel()
			got, err := e.client.GetLoadBalancer(ctx, want)
			if err != nil {
				return err
			}
			if got.IPv4 != a.IP && got.IPv6 != a.IP {
				return fmt.Errorf("load balancer %s shows %s / %s, not the address's %s", want, got.IPv4, got.IPv6, a.IP)
			}
			return nil
		})(s)
	}
}

// ownIP checks through the API that the load balancer lb (a state address)
// has an IPv4 of its own: not the address's in state, if any.
func (e *testEnv) ownIP(lb string) resource.TestCheckFunc {
	return checkInCloud(lb, e.client.GetLoadBalancer, func(got *exampleapi.LoadBalancer) error {
		ctx, cancel := bg()
		defer cancel()
		addrs, err := e.client.ListAddresses(ctx, exampleapi.AddressFilter{IP: got.IPv4})
		if got.IPv4 == "" || err != nil || len(addrs) != 0 {
			return fmt.Errorf("load balancer %s: ipv4 %q is not its own (reserved by %+v; %v)", got.ID, got.IPv4, addrs, err)
		}
		return nil
	})
}

// ipFromState is an ImportStateIdFunc: the address's IP.
func ipFromState(s *terraform.State) (string, error) {
	rs, ok := s.RootModule().Resources[addrAddr]
	if !ok {
		return "", fmt.Errorf("%s not in state", addrAddr)
	}
	return rs.Primary.Attributes["ip"], nil
}

// TestAccAddress_lifecycle: an address attached at its creation, moved to
// another load balancer in one in-place update (the first gets an IP of
// its own back), detached, imported by id and by IP, then kept (same IP)
// while its load balancer is replaced and attached to the new one;
// destroyed while attached.
func TestAccAddress_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	lbs := namedLB("a", "a", "") + namedLB("b", "b", "")
	tags := "  tags = { team = \"web\" }\n"
	sameIP, sameID := sameInEachStep(), sameInEachStep()

	accTest(t, e.checkAddressesDestroyed, []resource.TestStep{
		{
			Config: e.config(lbs + addressConfig(tags+onLB("a"))),
			ConfigPlanChecks: beforeApply(
				planIs(addrAddr, "region", "ex-west-1"),
				planIs(addrAddr, "family", "ipv4"),
				planUnknown(addrAddr, "ip"),
			),
			ConfigStateChecks: stateChecks{
				sameIP(addrAddr, "ip"),
				sameID(addrAddr, "id"),
				stateIs(addrAddr, "id", matching(`^addr-`)),
				stateIs(addrAddr, "ip", matching(`^203\.0\.113\.\d+$`)),
				stateIs(addrAddr, "tags", mapOf{"team": "web"}),
				stateIs(addrAddr, "created_at", notNull),
				stateSame(addrAddr, "load_balancer_id", lbA, "id"),
			},
			Check: e.addressOn(lbA),
		},
		{
			// The move: one in-place update of the address, nothing else.
			Config:           e.config(lbs + addressConfig(tags+onLB("b"))),
			ConfigPlanChecks: beforeApply(planUpdate(addrAddr), planNoop(lbA), planNoop(lbB)),
			ConfigStateChecks: stateChecks{
				sameIP(addrAddr, "ip"),
				sameID(addrAddr, "id"),
				stateSame(addrAddr, "load_balancer_id", lbB, "id"),
			},
			Check: resource.ComposeAggregateTestCheckFunc(e.addressOn(lbB), e.ownIP(lbA)),
		},
		{
			Config:           e.config(lbs + addressConfig(tags)),
			ConfigPlanChecks: beforeApply(planUpdate(addrAddr), planIs(addrAddr, "load_balancer_id", nil)),
			ConfigStateChecks: stateChecks{
				sameIP(addrAddr, "ip"),
				stateIs(addrAddr, "load_balancer_id", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(e.addressOn(""), e.ownIP(lbA), e.ownIP(lbB)),
		},
		importStep(addrAddr),
		{ResourceName: addrAddr, ImportState: true, ImportStateVerify: true, ImportStateIdFunc: ipFromState},
		{
			Config:           e.config(lbs + addressConfig(tags+onLB("b"))),
			ConfigPlanChecks: beforeApply(planUpdate(addrAddr)),
			Check:            e.addressOn(lbB),
		},
		{
			// b replaced (destroyed first): the cloud detaches the
			// address and keeps it; it goes to the new b.
			Config:           e.config(namedLB("a", "a", "") + namedLB("b", "b2", "") + addressConfig(tags+onLB("b"))),
			ConfigPlanChecks: beforeApply(planReplace(lbB, false), planUpdate(addrAddr), planUnknown(addrAddr, "load_balancer_id")),
			ConfigStateChecks: stateChecks{
				sameIP(addrAddr, "ip"),
				sameID(addrAddr, "id"),
				stateSame(addrAddr, "load_balancer_id", lbB, "id"),
			},
			Check: e.addressOn(lbB),
		},
	})
}

// TestAccAddress_outOfBand: the load balancer deleted outside Terraform
// leaves the address reserved and detached; the address deleted outside
// Terraform is created again.
func TestAccAddress_outOfBand(t *testing.T) {
	e := newTestEnv(t)
	lb := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "elsewhere", IPFamily: exampleapi.IPFamilyIPv4})
	var id string
	sameIP := sameInEachStep()
	detached := e.config(addressConfig(""))

	accTest(t, e.checkAddressesDestroyed, []resource.TestStep{
		{
			Config:            e.config(addressConfig(fmt.Sprintf("  load_balancer_id = %q", lb.ID))),
			ConfigStateChecks: stateChecks{sameIP(addrAddr, "ip")},
			Check:             resource.ComposeAggregateTestCheckFunc(e.addressOn(lb.ID), stateID(addrAddr, &id)),
		},
		{
			PreConfig: func() {
				ctx, cancel := bg()
				defer cancel()
				if err := e.client.DeleteLoadBalancer(ctx, lb.ID); err != nil {
					t.Fatal(err)
				}
			},
			// Refreshed, it is on no load balancer: what this
			// configuration says.
			Config:            detached,
			ConfigPlanChecks:  beforeApply(planNoop(addrAddr)),
			ConfigStateChecks: stateChecks{sameIP(addrAddr, "ip"), stateIs(addrAddr, "load_balancer_id", nil)},
			Check:             e.addressOn(""),
		},
		recreateStep(detached, addrAddr, &id, func() {
			ctx, cancel := bg()
			defer cancel()
			if err := e.client.DeleteAddress(ctx, id); err != nil {
				t.Fatal(err)
			}
		}, e.addressOn("")),
	})
}

// TestAccAddress_deleteAttached: destroying an attached address detaches
// it first; the load balancer gets an IP of its own back.
func TestAccAddress_deleteAttached(t *testing.T) {
	e := newTestEnv(t)
	var ip string
	accTest(t, e.checkAddressesDestroyed, []resource.TestStep{
		{
			Config: e.config(namedLB("a", "a", "") + addressConfig(onLB("a"))),
			Check: resource.ComposeAggregateTestCheckFunc(e.addressOn(lbA),
				resource.TestCheckResourceAttrWith(addrAddr, "ip", func(v string) error { ip = v; return nil })),
		},
		{
			Config:           e.config(namedLB("a", "a", "")),
			ConfigPlanChecks: beforeApply(planDestroy(addrAddr), planNoop(lbA)),
			Check: resource.ComposeAggregateTestCheckFunc(e.ownIP(lbA), func(*terraform.State) error {
				ctx, cancel := bg()
				defer cancel()
				if left, err := e.client.ListAddresses(ctx, exampleapi.AddressFilter{IP: ip}); err != nil || len(left) != 0 {
					return fmt.Errorf("address %s not deleted: %+v %v", ip, left, err)
				}
				return nil
			}),
		},
	})
}

// TestAccAddress_loadBalancerUpdatedMeanwhile: a load balancer updated in
// the apply that moves its address away (after the move: it depends on
// the address) keeps the IPs its plan promised; the next refresh shows
// its new one.
func TestAccAddress_loadBalancerUpdatedMeanwhile(t *testing.T) {
	e := newTestEnv(t)
	accTest(t, e.checkAddressesDestroyed, []resource.TestStep{
		{
			Config: e.config(namedLB("a", "a", "") + namedLB("b", "b", "") + addressConfig(onLB("a"))),
			Check:  e.addressOn(lbA),
		},
		{
			Config: e.config(namedLB("a", "a", "  tags = { address = example_address.web.id }") + namedLB("b", "b", "") +
				addressConfig(onLB("b"))),
			ConfigPlanChecks: beforeApply(planUpdate(addrAddr), planUpdate(lbA)),
			Check:            resource.ComposeAggregateTestCheckFunc(e.addressOn(lbB), e.ownIP(lbA)),
		},
	})
}

// TestAccAddress_errors: plan-time checks, the cloud's refusals on the
// attribute or with its message, and imports that find nothing; an ipv6
// address on a dualstack load balancer is its IPv6.
func TestAccAddress_errors(t *testing.T) {
	e := newTestEnv(t)
	lbV4 := namedLB("a", "a", "")
	importOf := func(id string) string {
		return addressConfig("") + fmt.Sprintf(`
import {
  to = example_address.web
  id = %q
}
`, id)
	}
	cases := []configError{
		{addressConfig(`  family = "ipv5"`), `Attribute family value must be one of`},
		{addressConfig(`  load_balancer_id = "tp-1"`), `must be an id starting with "lb-"`},
		{`
resource "example_address" "web" {
  name = "a b"
}
`, `Attribute name must start with a letter or digit`},
		{lbV4 + addressConfig(`  family = "ipv6"`+"\n"+onLB("a")),
			`Cannot create address[\s\S]*has\s+ip_family\s+ipv4:\s+an\s+ipv6\s+address\s+attaches\s+only\s+to\s+a\s+dualstack\s+load\s+balancer`},
		{addressConfig(`  load_balancer_id = "lb-0000000000000000"`),
			`Cannot create address[\s\S]*load_balancer_id = "lb-0000000000000000"[\s\S]*load balancer\s+"lb-0000000000000000"\s+does\s+not\s+exist`},
		{importOf("192.0.2.1"), `Cannot import address 192.0.2.1[\s\S]*No address holds the IP 192.0.2.1`},
		{importOf("addr-0000000000000000"), `Cannot import address addr-0000000000000000[\s\S]*does not exist`},
		{importOf("lb-123"), `Invalid import id[\s\S]*want one starting with "addr-", or an IP\s+address`},
	}
	steps := append(errorSteps(e.config, cases), resource.TestStep{
		Config: e.config(namedLB("a", "a", `  ip_family = "dualstack"`) + addressConfig(`  family = "ipv6"`+"\n"+onLB("a"))),
		ConfigStateChecks: stateChecks{
			stateIs(addrAddr, "family", "ipv6"),
			stateIs(addrAddr, "ip", matching(`^2001:db8:1b::`)),
		},
		Check: e.addressOn(lbA),
	})
	accTest(t, e.checkAddressesDestroyed, steps)
}

// TestAccAddressDataSource reads an address by id, by name and by IP.
func TestAccAddressDataSource(t *testing.T) {
	e := newTestEnv(t)
	ctx, cancel := bg()
	addr, err := e.client.CreateAddress(ctx, exampleapi.CreateAddressRequest{Name: "kept", Region: "ex-west-1",
		Tags: map[string]string{"team": "web"}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	ds := func(name string) string { return "data.example_address." + name }
	cfg := e.config(fmt.Sprintf(`
data "example_address" "by_id" {
  id = %q
}

data "example_address" "by_name" {
  name = "kept"
}

data "example_address" "by_ip" {
  ip = %q
}
`, addr.ID, addr.IP))
	var checks stateChecks
	for _, n := range []string{"by_id", "by_name", "by_ip"} {
		checks = append(checks, stateIs(ds(n), "id", addr.ID), stateIs(ds(n), "ip", addr.IP), stateIs(ds(n), "region", "ex-west-1"),
			stateIs(ds(n), "family", "ipv4"), stateIs(ds(n), "load_balancer_id", nil), stateIs(ds(n), "tags", mapOf{"team": "web"}))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "example_address" "x" { ip = "192.0.2.1" }`),
				ExpectError: regexp.MustCompile(`Address not found[\s\S]*No address holds the IP 192.0.2.1`),
			},
			{
				Config:      e.config(`data "example_address" "x" { ip = "2001:db8:1b:0::1" }`),
				ExpectError: regexp.MustCompile(`not in canonical form; write it as "2001:db8:1b::1"`),
			},
			{
				Config:      e.config(`data "example_address" "x" {}`),
				ExpectError: regexp.MustCompile(`Exactly one of these attributes must be configured: \[id,name,ip\]`),
			},
			{Config: cfg, ConfigStateChecks: checks},
		},
	})
}
