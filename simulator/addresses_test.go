package simulator_test

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// putAddress attaches the address to lbID ("" detaches it).
func (a *api) putAddress(id, lbID string) exampleapi.Address {
	a.t.Helper()
	return decoded[exampleapi.Address](a, http.StatusOK, "PUT", "/v1/addresses/"+id, exampleapi.UpdateAddressRequest{LoadBalancerID: lbID})
}

func (a *api) listAddresses(query string) []exampleapi.Address {
	a.t.Helper()
	return decoded[exampleapi.ListResponse[exampleapi.Address]](a, http.StatusOK, "GET", "/v1/addresses?"+query, nil).Items
}

func addressReq(name, family, lbID string) exampleapi.CreateAddressRequest {
	return exampleapi.CreateAddressRequest{Name: name, Region: "ex-west-1", Family: family, LoadBalancerID: lbID}
}

// startActive is a simulator whose load balancers are active at once.
func startActive(t *testing.T, opts ...simtest.Option) (*simtest.Sim, *api) {
	sim := simtest.Start(t, append([]simtest.Option{simtest.WithProvisionDelay(0)}, opts...)...)
	return sim, control(t, sim)
}

func TestAddressLifecycle(t *testing.T) {
	_, c := startActive(t)
	req := addressReq("web", "", "")
	req.Tags = map[string]string{"k8s.example.com/cluster-id": "prod"}
	var addr exampleapi.Address
	resp := c.must(http.StatusCreated, "POST", "/v1/addresses", req, &addr)
	ip, err := netip.ParseAddr(addr.IP)
	if !strings.HasPrefix(addr.ID, "addr-") || addr.Name != "web" || addr.Region != "ex-west-1" || addr.Family != "ipv4" ||
		err != nil || !netip.MustParsePrefix("203.0.113.0/24").Contains(ip) || addr.LoadBalancerID != "" || addr.Version != 1 ||
		addr.Tags["k8s.example.com/cluster-id"] != "prod" || addr.CreatedAt.IsZero() || !addr.UpdatedAt.Equal(addr.CreatedAt) {
		t.Fatalf("new address %+v", addr)
	}
	if resp.header.Get("ETag") != `"1"` || resp.header.Get("Location") != "/v1/addresses/"+addr.ID {
		t.Errorf("create headers %v", resp.header)
	}
	if !strings.Contains(string(resp.body), `"load_balancer_id":""`) {
		t.Errorf("a detached address answers load_balancer_id \"\": %s", resp.body)
	}
	if got := c.addresses().get(addr.ID); got.IP != addr.IP {
		t.Errorf("get %+v", got)
	}

	// Names are unique per region.
	c.apiError(http.StatusConflict, "POST", "/v1/addresses", addressReq("web", "", ""))
	east := addressReq("web", "ipv6", "")
	east.Region = "ex-east-1"
	v6 := c.addresses().create(east)
	if ip, err := netip.ParseAddr(v6.IP); err != nil || !netip.MustParsePrefix("2001:db8:1b::/64").Contains(ip) {
		t.Errorf("ipv6 address %+v", v6)
	}

	// Lookups: by name and region, and by IP in any notation.
	for q, want := range map[string]string{
		"name=web&region=ex-west-1": addr.ID,
		"ip=" + addr.IP:             addr.ID,
		"ip=2001:db8:1b:0:0:0:0:" + strings.TrimPrefix(v6.IP, "2001:db8:1b::"): v6.ID,
	} {
		if l := c.listAddresses(q); len(l) != 1 || l[0].ID != want {
			t.Errorf("list ?%s: %+v, want %s", q, l, want)
		}
	}
	if l := c.listAddresses("ip=192.0.2.1"); len(l) != 0 {
		t.Errorf("list by a free IP: %+v", l)
	}
	if e := c.apiError(http.StatusBadRequest, "GET", "/v1/addresses?ip=nope", nil); e.Field != "ip" {
		t.Errorf("bad ip filter: %+v", e)
	}

	// PUT replaces the tags under If-Match.
	upd := exampleapi.UpdateAddressRequest{Tags: map[string]string{"k8s.example.com/cluster-id": "stage"}}
	c.apiError(http.StatusPreconditionFailed, "PUT", "/v1/addresses/"+addr.ID, upd, "If-Match", `"7"`)
	var got exampleapi.Address
	resp = c.must(http.StatusOK, "PUT", "/v1/addresses/"+addr.ID, upd, &got, "If-Match", `"1"`)
	if got.Version != 2 || got.Tags["k8s.example.com/cluster-id"] != "stage" || got.IP != addr.IP || !got.UpdatedAt.After(addr.UpdatedAt) {
		t.Errorf("after update %+v", got)
	}
	if resp.header.Get("ETag") != `"2"` {
		t.Errorf("update ETag %q", resp.header.Get("ETag"))
	}

	// Deleted, its IP goes back to the pool: the next reservation gets it.
	c.must(http.StatusNoContent, "DELETE", "/v1/addresses/"+addr.ID, nil, nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/addresses/"+addr.ID, nil)
	if again := c.addresses().create(addressReq("again", "", "")); again.IP != addr.IP {
		t.Errorf("released %s, the next reservation got %s", addr.IP, again.IP)
	}
}

// An address moves between load balancers in one PUT: the one it joins
// shows its IP (its own goes back to the pool), the one it leaves gets
// another; detached, it keeps its IP.
func TestAddressMove(t *testing.T) {
	_, c := startActive(t)
	a, b := c.lbs().create(lbSpec("a")), c.lbs().create(lbSpec("b"))
	addr := c.addresses().create(addressReq("web", "", a.ID))
	if addr.LoadBalancerID != a.ID {
		t.Fatalf("attached at creation: %+v", addr)
	}
	onA := c.lbs().get(a.ID)
	if onA.IPv4 != addr.IP || onA.Version != a.Version+1 || !onA.UpdatedAt.After(a.UpdatedAt) {
		t.Fatalf("load balancer a %+v, want the address %s", onA, addr.IP)
	}
	// a's own address is free again: the next reservation takes it.
	spare := c.addresses().create(addressReq("spare", "", ""))
	if spare.IP != a.IPv4 {
		t.Errorf("a's own %s not released (the next reservation got %s)", a.IPv4, spare.IP)
	}

	moved := c.putAddress(addr.ID, b.ID)
	if moved.LoadBalancerID != b.ID || moved.IP != addr.IP || moved.Version != 2 {
		t.Fatalf("moved %+v", moved)
	}
	leftA, onB := c.lbs().get(a.ID), c.lbs().get(b.ID)
	if onB.IPv4 != addr.IP {
		t.Errorf("b %s, want the address %s", onB.IPv4, addr.IP)
	}
	// a takes what b gave back: the only free address of the pool's start.
	if leftA.IPv4 != b.IPv4 || leftA.Version != onA.Version+1 {
		t.Errorf("a after the move: %s (version %d), want %s", leftA.IPv4, leftA.Version, b.IPv4)
	}

	detached := c.putAddress(addr.ID, "")
	if detached.LoadBalancerID != "" || detached.IP != addr.IP {
		t.Errorf("detached %+v", detached)
	}
	if lb := c.lbs().get(b.ID); lb.IPv4 == "" || lb.IPv4 == addr.IP {
		t.Errorf("b after the detach: %q", lb.IPv4)
	}
	// The same PUT again changes no load balancer.
	before := c.lbs().get(b.ID)
	c.putAddress(addr.ID, "")
	if lb := c.lbs().get(b.ID); lb.Version != before.Version {
		t.Errorf("a detached address's PUT changed b: version %d -> %d", before.Version, lb.Version)
	}
}

// An ipv6 address goes to dualstack load balancers only, as their IPv6;
// internal load balancers take none; one address per family.
func TestAddressAttachRules(t *testing.T) {
	_, c := startActive(t)
	v4 := c.lbs().create(lbSpec("v4"))
	ds := lbSpec("ds")
	ds.IPFamily = exampleapi.IPFamilyDualStack
	dual := c.lbs().create(ds)
	in := lbSpec("in")
	in.Internal = true
	internal := c.lbs().create(in)
	east := lbSpec("east")
	east.Region = "ex-east-1"
	far := c.lbs().create(east)

	six := c.addresses().create(addressReq("six", "ipv6", ""))
	four := c.addresses().create(addressReq("four", "", v4.ID))
	for _, tc := range []struct {
		name    string
		addr    string
		lbID    string
		status  int
		field   string
		message string
	}{
		{"ipv6 on ipv4", six.ID, v4.ID, http.StatusConflict, "", "load balancer " + v4.ID + " has ip_family ipv4: an ipv6 address attaches only to a dualstack load balancer"},
		{"internal", four.ID, internal.ID, http.StatusConflict, "", "load balancer " + internal.ID + " is internal: its address comes from its network"},
		{"other region", four.ID, far.ID, http.StatusBadRequest, "load_balancer_id", "is in region ex-east-1, not ex-west-1"},
		{"missing", four.ID, "lb-0000000000000000", http.StatusBadRequest, "load_balancer_id", `load balancer "lb-0000000000000000" does not exist`},
		{"not a load balancer id", four.ID, "tp-1", http.StatusBadRequest, "load_balancer_id", "is not a load balancer id"},
	} {
		e := c.apiError(tc.status, "PUT", "/v1/addresses/"+tc.addr, exampleapi.UpdateAddressRequest{LoadBalancerID: tc.lbID})
		if e.Field != tc.field || !strings.Contains(e.Message, tc.message) {
			t.Errorf("%s: %+v, want %q on %q", tc.name, e, tc.message, tc.field)
		}
	}
	// A refused move changed nothing.
	if got, lb := c.addresses().get(four.ID), c.lbs().get(v4.ID); got.LoadBalancerID != v4.ID || got.Version != 1 || lb.IPv4 != four.IP {
		t.Errorf("after refused moves: address %+v, load balancer ipv4 %s", got, lb.IPv4)
	}

	onDual := c.putAddress(six.ID, dual.ID)
	if lb := c.lbs().get(dual.ID); onDual.LoadBalancerID != dual.ID || lb.IPv6 != six.IP || lb.IPv4 != dual.IPv4 {
		t.Errorf("ipv6 on dualstack: %+v, load balancer %s / %s", onDual, lb.IPv4, lb.IPv6)
	}
	// A second ipv4 on v4 names the first; created attached, it is not
	// created at all.
	e := c.apiError(http.StatusConflict, "POST", "/v1/addresses", addressReq("second", "", v4.ID))
	if !strings.Contains(e.Message, "already has the ipv4 address "+four.ID+" attached") {
		t.Errorf("second ipv4: %+v", e)
	}
	if l := c.listAddresses("name=second"); len(l) != 0 {
		t.Errorf("a refused create left %+v", l)
	}
	// Both families on one dualstack load balancer.
	c.putAddress(four.ID, dual.ID)
	if lb := c.lbs().get(dual.ID); lb.IPv4 != four.IP || lb.IPv6 != six.IP {
		t.Errorf("dualstack with both: %s / %s", lb.IPv4, lb.IPv6)
	}
	if e := c.apiError(http.StatusBadRequest, "POST", "/v1/addresses", addressReq("x", "ipv5", "")); e.Field != "family" ||
		!strings.Contains(e.Message, "accepted: ipv4, ipv6") {
		t.Errorf("unknown family: %+v", e)
	}
}

// An attached address cannot be deleted; a load balancer deleted leaves
// its addresses reserved and detached.
func TestAddressOutlivesLoadBalancer(t *testing.T) {
	_, c := startActive(t)
	lb := c.lbs().create(lbSpec("web"))
	addr := c.addresses().create(addressReq("web", "", lb.ID))
	e := c.apiError(http.StatusConflict, "DELETE", "/v1/addresses/"+addr.ID, nil)
	if !strings.Contains(e.Message, "attached to "+lb.ID+": detach it first") {
		t.Errorf("delete attached: %+v", e)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb.ID, nil, nil)
	kept := c.addresses().get(addr.ID)
	if kept.LoadBalancerID != "" || kept.IP != addr.IP || kept.Version != addr.Version+1 {
		t.Errorf("after the load balancer's deletion: %+v", kept)
	}
	// Still reserved: a new load balancer does not get its IP.
	if next := c.lbs().create(lbSpec("next")); next.IPv4 == addr.IP {
		t.Errorf("the reserved %s went to a new load balancer", addr.IP)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/addresses/"+addr.ID, nil, nil)
}

// A full pool refuses a reservation, and a load balancer an address
// leaves goes to status error when no address is left for it.
func TestAddressPoolExhausted(t *testing.T) {
	_, c := startActive(t, simtest.WithLBPublicPoolSize(2))
	lb := c.lbs().create(lbSpec("web"))
	addr := c.addresses().create(addressReq("web", "", ""))
	if e := c.apiError(http.StatusConflict, "POST", "/v1/addresses", addressReq("more", "", "")); !strings.Contains(e.Message, "cannot reserve an address") {
		t.Errorf("full pool: %+v", e)
	}
	c.putAddress(addr.ID, lb.ID)
	c.addresses().create(addressReq("took-lb-own", "", "")) // the pool is full again
	c.putAddress(addr.ID, "")
	if got := c.lbs().get(lb.ID); got.Status != exampleapi.LBStatusError || !strings.Contains(got.StatusMessage, "after "+addr.ID+" left") {
		t.Errorf("load balancer left without an address: %+v", got)
	}
	e := c.apiError(http.StatusConflict, "PUT", "/v1/addresses/"+addr.ID, exampleapi.UpdateAddressRequest{LoadBalancerID: lb.ID})
	if !strings.Contains(e.Message, "is in status error") {
		t.Errorf("attach to a load balancer in error: %+v", e)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb.ID, nil, nil)
}

func TestAddressesPersistAndSufferFaults(t *testing.T) {
	sim, c := startActive(t)
	lb := c.lbs().create(lbSpec("web"))
	addr := c.addresses().create(addressReq("web", "", lb.ID))
	sim.Stop()

	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	c = control(t, sim)
	if got := c.addresses().get(addr.ID); got.IP != addr.IP || got.LoadBalancerID != lb.ID || got.Version != 1 {
		t.Errorf("address after restart %+v", got)
	}
	if got := c.lbs().get(lb.ID); got.IPv4 != addr.IP {
		t.Errorf("load balancer after restart shows %s, want %s", got.IPv4, addr.IP)
	}
	c.apiError(http.StatusConflict, "POST", "/v1/addresses", addressReq("web", "", ""))
	if next := c.addresses().create(addressReq("next", "", "")); next.IP == addr.IP {
		t.Errorf("address %s handed out twice", next.IP)
	}

	// Idempotent creates, like every kind's.
	first := c.must(http.StatusCreated, "POST", "/v1/addresses", addressReq("once", "", ""), nil, "Idempotency-Key", "k1")
	again := c.must(http.StatusCreated, "POST", "/v1/addresses", addressReq("once", "", ""), nil, "Idempotency-Key", "k1")
	if string(first.body) != string(again.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay %s, want %s", again.body, first.body)
	}

	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	for _, m := range []string{"GET", "POST"} {
		if r := c.do(m, "/v1/addresses", addressReq("x", "", "")); r.status < 500 {
			t.Errorf("%s /v1/addresses with error_rate 1: status %d", m, r.status)
		}
	}
}
