package simulator_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestValidationErrorsNameTheField(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	west := c.createInstance(instanceReq("node-west", "ex-west-1a"))
	east := c.createInstance(instanceReq("node-east", "ex-east-1a"))
	var nets exampleapi.ListResponse[exampleapi.Network]
	c.must(http.StatusOK, "GET", "/v1/networks?region=ex-west-1&name=default", nil, &nets)
	if len(nets.Items) != 1 {
		t.Fatalf("default network of ex-west-1: got %d", len(nets.Items))
	}
	routes := "/v1/networks/" + nets.Items[0].ID + "/routes"
	var lb exampleapi.LoadBalancer
	c.must(http.StatusCreated, "POST", "/v1/load-balancers", lbSpec("existing"), &lb)

	inst := func(mod func(*exampleapi.CreateInstanceRequest)) exampleapi.CreateInstanceRequest {
		r := instanceReq("new-node", "ex-west-1a")
		mod(&r)
		return r
	}
	lbWith := func(mod func(*exampleapi.LoadBalancerSpec)) exampleapi.LoadBalancerSpec {
		s := lbSpec("new-lb")
		mod(&s)
		return s
	}
	hc := func(mod func(*exampleapi.HealthCheck)) exampleapi.LoadBalancerSpec {
		return lbWith(func(s *exampleapi.LoadBalancerSpec) { mod(s.HealthCheck) })
	}
	update := func(mod func(*exampleapi.UpdateLoadBalancerRequest)) exampleapi.UpdateLoadBalancerRequest {
		s := lbSpec("x")
		u := exampleapi.UpdateLoadBalancerRequest{Listeners: s.Listeners, HealthCheck: s.HealthCheck}
		mod(&u)
		return u
	}

	tests := []struct {
		name, method, path string
		body               any
		field              string
		msg                string // substring of the message
	}{
		// Instances.
		{"instance without name", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.Name = "" }), "name", "required"},
		{"instance bad name", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.Name = "-bad name" }), "name", "not a valid name"},
		{"unknown instance type", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.Type = "huge-99" }), "type", `unknown instance type "huge-99" (accepted: standard-1, standard-2, standard-4, highmem-4)`},
		{"unknown zone", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.Zone = "mars-1a" }), "zone", `unknown zone "mars-1a" (accepted: ex-east-1a, ex-west-1a`},
		{"unknown state", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.State = "paused" }), "state", "accepted: running, stopped"},
		{"bad private ip", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.PrivateIPv4 = "10.0.0.300" }), "private_ipv4", "not a valid IP"},
		{"ipv4 as ipv6", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.IPv6 = "10.0.0.1" }), "ipv6", "not an IPv6"},
		{"empty tag key", "POST", "/v1/instances", inst(func(r *exampleapi.CreateInstanceRequest) { r.Tags = map[string]string{"": "x"} }), "tags", "must not be empty"},
		{"unknown field", "POST", "/v1/instances", `{"name":"a","type":"standard-1","zone":"ex-west-1a","colour":"red"}`, "colour", "unknown field"},
		{"wrong JSON type", "POST", "/v1/instances", `{"name":5}`, "name", "expected a JSON string"},
		{"empty body", "POST", "/v1/instances", nil, "", "empty"},
		{"bad tags update", "PUT", "/v1/instances/" + west.ID + "/tags", exampleapi.UpdateInstanceTagsRequest{Tags: map[string]string{"a=b": "c"}}, "tags", "must not contain '='"},
		{"bad state update", "PUT", "/v1/instances/" + west.ID + "/state", exampleapi.SetInstanceStateRequest{State: "off"}, "state", `unknown state "off"`},

		// Networks.
		{"bad CIDR", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-west-1", CIDR: "10.0.0.0/33"}, "cidr", "not a valid CIDR"},
		{"non-canonical CIDR", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-west-1", CIDR: "10.2.0.1/16"}, "cidr", `did you mean "10.2.0.0/16"`},
		{"IPv6 network CIDR", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-west-1", CIDR: "fd00::/64"}, "cidr", "not an IPv4 CIDR"},
		{"network prefix too long", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-west-1", CIDR: "10.2.0.0/30"}, "cidr", "accepted: /8-/29"},
		{"non-canonical IPv6 CIDR", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-west-1", CIDR: "10.2.0.0/16", IPv6CIDR: "fd00::1/64"}, "ipv6_cidr", "canonical"},
		{"unknown region", "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "n", Region: "ex-north-9", CIDR: "10.2.0.0/16"}, "region", `unknown region "ex-north-9" (accepted: ex-east-1, ex-west-1)`},

		// Routes.
		{"route bad CIDR", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "nope", TargetInstanceID: west.ID}, "destination_cidr", "not a valid CIDR"},
		{"route non-canonical CIDR", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "192.168.1.1/24", TargetInstanceID: west.ID}, "destination_cidr", `did you mean "192.168.1.0/24"`},
		{"route non-canonical IPv6", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "fd00:20::1/64", TargetInstanceID: west.ID}, "destination_cidr", `did you mean "fd00:20::/64"`},
		{"route without target", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "192.168.1.0/24"}, "target_instance_id", "required"},
		{"route unknown target", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "192.168.1.0/24", TargetInstanceID: "i-nope"}, "target_instance_id", "does not exist"},
		{"route target in other region", "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "192.168.1.0/24", TargetInstanceID: east.ID}, "target_instance_id", "is in region ex-east-1"},

		// Load balancers.
		{"port out of range", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Listeners[0].Port = 70000 }), "listeners[0].port", "70000 is out of range (accepted: 1-65535)"},
		{"port zero", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Listeners[0].Port = 0 }), "listeners[0].port", "out of range"},
		{"target port out of range", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) {
			s.Listeners = append(s.Listeners, exampleapi.Listener{Protocol: "udp", Port: 53, TargetPort: 0})
		}), "listeners[1].target_port", "out of range"},
		{"unknown protocol", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Listeners[0].Protocol = "sctp" }), "listeners[0].protocol", `listeners[0].protocol: unknown protocol "sctp" (accepted: tcp, udp, http, https, tls)`},
		{"duplicate listener port", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) {
			s.Listeners = append(s.Listeners, exampleapi.Listener{Protocol: "udp", Port: 80, TargetPort: 1}, exampleapi.Listener{Protocol: "tcp", Port: 80, TargetPort: 2})
		}), "listeners[2].port", "duplicate listener tcp/80 (also listeners[0])"},
		{"no listeners", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Listeners = nil }), "listeners", "at least one"},
		{"too many listeners", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Listeners = listenersN(101) }), "listeners", "has 101 listeners (at most 100)"},
		{"too many listeners, each invalid", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) {
			s.Listeners = make([]exampleapi.Listener, 5000)
		}), "listeners", "has 5000 listeners (at most 100)"},
		{"too many targets", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Targets = idsN("i-", 5001) }), "targets", "has 5001 targets (at most 5000)"},
		{"too many source CIDRs", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) {
			s.AllowedSourceCIDRs = idsN("10.0.0.0/", 1001)
		}), "allowed_source_cidrs", "has 1001 CIDRs (at most 1000)"},
		{"too many tags", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Tags = tagsN(51) }), "tags", "has 51 tags (at most 50)"},
		{"unknown lb type", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Type = "lb-huge" }), "type", "accepted: lb-small, lb-medium, lb-large"},
		{"unknown algorithm", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Algorithm = "random" }), "algorithm", "accepted: round_robin, least_connections, source_ip"},
		{"unknown ip family", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.IPFamily = "ipv6" }), "ip_family", "accepted: ipv4, dualstack"},
		{"lb unknown region", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Region = "nowhere" }), "region", "unknown region"},
		{"lb without name", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Name = "" }), "name", "required"},
		{"health check protocol", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.Protocol = "udp" }), "health_check.protocol", "accepted: tcp, http"},
		{"health check port", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.Port = 0 }), "health_check.port", "out of range"},
		{"http health check without path", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.Path = "" }), "health_check.path", "must start with /"},
		{"http health check relative path", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.Path = "healthz" }), "health_check.path", "must start with /"},
		{"tcp health check with path", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.Protocol = "tcp" }), "health_check.path", "only allowed for http"},
		{"health check interval", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.IntervalSeconds = 301 }), "health_check.interval_seconds", "accepted: 1-300"},
		{"health check timeout", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.TimeoutSeconds = 61; h.IntervalSeconds = 100 }), "health_check.timeout_seconds", "accepted: 1-60"},
		{"health check timeout not below interval", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.TimeoutSeconds = 10 }), "health_check.timeout_seconds", "less than interval_seconds (10)"},
		{"healthy threshold", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.HealthyThreshold = 11 }), "health_check.healthy_threshold", "accepted: 1-10"},
		{"unhealthy threshold", "POST", "/v1/load-balancers", hc(func(h *exampleapi.HealthCheck) { h.UnhealthyThreshold = 0 }), "health_check.unhealthy_threshold", "accepted: 1-10"},
		{"source CIDR non-canonical", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.AllowedSourceCIDRs = []string{"0.0.0.0/0", "1.2.3.4/8"} }), "allowed_source_cidrs[1]", "canonical"},
		{"unknown target", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Targets = []string{west.ID, "i-gone"} }), "targets[1]", `instance "i-gone" does not exist`},
		{"target in other region", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Targets = []string{east.ID} }), "targets[0]", "is in region ex-east-1"},
		{"duplicate target", "POST", "/v1/load-balancers", lbWith(func(s *exampleapi.LoadBalancerSpec) { s.Targets = []string{west.ID, west.ID} }), "targets[1]", "duplicate target"},
		{"update bad listener", "PUT", "/v1/load-balancers/" + lb.ID, update(func(u *exampleapi.UpdateLoadBalancerRequest) { u.Listeners[0].Protocol = "quic" }), "listeners[0].protocol", "accepted: tcp, udp"},
		{"update unknown target", "PUT", "/v1/load-balancers/" + lb.ID, update(func(u *exampleapi.UpdateLoadBalancerRequest) { u.Targets = []string{"i-x"} }), "targets[0]", "does not exist"},
		{"update too many listeners", "PUT", "/v1/load-balancers/" + lb.ID, update(func(u *exampleapi.UpdateLoadBalancerRequest) { u.Listeners = listenersN(101) }), "listeners", "at most 100"},
		{"update too many targets", "PUT", "/v1/load-balancers/" + lb.ID, update(func(u *exampleapi.UpdateLoadBalancerRequest) { u.Targets = idsN("i-", 5001) }), "targets", "at most 5000"},
		{"update immutable field", "PUT", "/v1/load-balancers/" + lb.ID, `{"name":"renamed","listeners":[{"protocol":"tcp","port":1,"target_port":1}]}`, "name", "unknown field"},

		// Lists and admin.
		{"page size zero", "GET", "/v1/instances?page_size=0", nil, "page_size", "accepted: 1-1000"},
		{"page size too big", "GET", "/v1/instances?page_size=1001", nil, "page_size", "accepted: 1-1000"},
		{"bad page token", "GET", "/v1/instances?page_token=garbage", nil, "page_token", "not a token"},
		{"bad tag filter", "GET", "/v1/instances?tag==x", nil, "tag", "key=value"},
		{"too many tag filters", "GET", "/v1/instances?tag=a" + strings.Repeat("&tag=a", 50), nil, "tag", "has 51 tag filters (at most 50)"},
		{"fault error rate", "PUT", "/admin/v1/faults", `{"error_rate":2}`, "error_rate", "accepted: 0-1"},
		{"fault latency", "PUT", "/admin/v1/faults", `{"latency_ms":-1}`, "latency_ms", "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAPI(t, sim.URL, sim.Token).apiError(http.StatusBadRequest, tc.method, tc.path, tc.body)
			if e.Code != exampleapi.CodeInvalid {
				t.Errorf("code = %q, want %q", e.Code, exampleapi.CodeInvalid)
			}
			if e.Field != tc.field {
				t.Errorf("field = %q, want %q (message %q)", e.Field, tc.field, e.Message)
			}
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("message = %q, want it to contain %q", e.Message, tc.msg)
			}
		})
	}
}

func TestSameListenerPortOnDifferentProtocolsIsValid(t *testing.T) {
	sim := simtest.Start(t)
	spec := lbSpec("dns")
	spec.Listeners = []exampleapi.Listener{{Protocol: "tcp", Port: 53, TargetPort: 30053}, {Protocol: "udp", Port: 53, TargetPort: 30053}}
	control(t, sim).lbs().create(spec)
}

// TestListenerLimitIsInclusive: exactly MaxListeners listeners are fine,
// on create and update.
func TestListenerLimitIsInclusive(t *testing.T) {
	c := startControl(t)
	spec := lbSpec("many")
	spec.Listeners = listenersN(exampleapi.MaxListeners)
	lb := c.lbs().create(spec)
	if len(lb.Listeners) != exampleapi.MaxListeners {
		t.Fatalf("created with %d listeners, want %d", len(lb.Listeners), exampleapi.MaxListeners)
	}
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID,
		exampleapi.UpdateLoadBalancerRequest{Listeners: listenersN(exampleapi.MaxListeners)}, nil)
}

// listenersN is n valid listeners on tcp ports 1..n.
func listenersN(n int) []exampleapi.Listener {
	ls := make([]exampleapi.Listener, n)
	for i := range ls {
		ls[i] = exampleapi.Listener{Protocol: "tcp", Port: i + 1, TargetPort: 30000 + i}
	}
	return ls
}

// idsN is n distinct strings prefix0..prefix(n-1).
func idsN(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func tagsN(n int) map[string]string {
	tags := make(map[string]string, n)
	for i := range n {
		tags[fmt.Sprintf("k%d", i)] = "v"
	}
	return tags
}
