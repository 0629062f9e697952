package modules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// addressRoot is a root module calling the address module, attached to
// lbID ("" for none), with its outputs.
func addressRoot(sim *simtest.Sim, lbID string) string {
	lb := "null"
	if lbID != "" {
		lb = fmt.Sprintf("%q", lbID)
	}
	return providerHeader(sim) + fmt.Sprintf(`
module "address" {
  source           = "./modules/address"
  name             = "k8s-prod-web"
  load_balancer_id = %s
  tags             = { "k8s.example.com/cluster-id" = "prod" }
}

output "id" {
  value = module.address.id
}

output "ip" {
  value = module.address.ip
}
`, lb)
}

// TestAddressModule is the controller's shape: the address alone in its
// workspace, the load balancers of two Services elsewhere (made through
// the API). A move between them is one in-place update; the load balancer
// it is on deleted, the address stays reserved with its IP; destroyed
// while attached, it is detached first.
func TestAddressModule(t *testing.T) {
	e := newPoolsEnv(t, 0)
	ctx := context.Background()
	lb := func(name string) exampleapi.LoadBalancer {
		t.Helper()
		got, err := e.client.CreateLoadBalancer(ctx, exampleapi.LoadBalancerSpec{Name: name, Region: "ex-west-1",
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}}}})
		if err != nil {
			t.Fatal(err)
		}
		return *got
	}
	blue, green := lb("blue"), lb("green")
	const this = "module.address.example_address.this"
	// on checks that the address is on lbID ("": none), which shows its
	// IP, and returns the address.
	on := func(lbID string) exampleapi.Address {
		t.Helper()
		list, err := e.client.ListAddresses(ctx, exampleapi.AddressFilter{Name: "k8s-prod-web"})
		if err != nil || len(list) != 1 {
			t.Fatalf("addresses: %+v %v", list, err)
		}
		a := list[0]
		if a.LoadBalancerID != lbID {
			t.Fatalf("address on %q, want %q", a.LoadBalancerID, lbID)
		}
		if lbID != "" {
			if got, err := e.client.GetLoadBalancer(ctx, lbID); err != nil || got.IPv4 != a.IP {
				t.Fatalf("load balancer %s does not show the address %s: %+v %v", lbID, a.IP, got, err)
			}
		}
		return a
	}
	ownIP := func(lbID, notIP string) {
		t.Helper()
		if got, err := e.client.GetLoadBalancer(ctx, lbID); err != nil || got.IPv4 == "" || got.IPv4 == notIP {
			t.Errorf("load balancer %s: ipv4 %q, want one of its own (not %s): %v", lbID, got.IPv4, notIP, err)
		}
	}

	e.init(t, addressRoot(e.sim, blue.ID))
	if changed, _, _ := e.planAndApply(t, addressRoot(e.sim, blue.ID)); !slices.Equal(changed, []string{this + " [create]"}) {
		t.Errorf("first apply planned %v", changed)
	}
	addr := on(blue.ID)
	out, err := e.tf.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ip, id string
	if json.Unmarshal(out["ip"].Value, &ip) != nil || json.Unmarshal(out["id"].Value, &id) != nil || ip != addr.IP || id != addr.ID {
		t.Errorf("outputs ip %s, id %s; want %s, %s", out["ip"].Value, out["id"].Value, addr.IP, addr.ID)
	}

	// Blue/green: one in-place update moves the IP.
	if changed, _, _ := e.planAndApply(t, addressRoot(e.sim, green.ID)); !slices.Equal(changed, []string{this + " [update]"}) {
		t.Errorf("move planned %v, want one update", changed)
	}
	if moved := on(green.ID); moved.IP != addr.IP || moved.ID != addr.ID {
		t.Errorf("after the move: %+v, want %s with %s", moved, addr.ID, addr.IP)
	}
	ownIP(blue.ID, addr.IP)

	// green's Service deleted: the address is kept, detached, with its IP.
	if err := e.client.DeleteLoadBalancer(ctx, green.ID); err != nil {
		t.Fatal(err)
	}
	if changed, _, _ := e.planAndApply(t, addressRoot(e.sim, "")); len(changed) != 0 {
		t.Errorf("after the load balancer's deletion, detached planned %v, want nothing", changed)
	}
	if kept := on(""); kept.IP != addr.IP {
		t.Errorf("kept address has %s, want %s", kept.IP, addr.IP)
	}

	// Back on blue, then destroyed while attached.
	e.planAndApply(t, addressRoot(e.sim, blue.ID))
	on(blue.ID)
	if err := e.tf.Destroy(ctx); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if left, err := e.client.ListAddresses(ctx, exampleapi.AddressFilter{}); err != nil || len(left) != 0 {
		t.Errorf("after destroy: %+v %v", left, err)
	}
	ownIP(blue.ID, addr.IP)
}
