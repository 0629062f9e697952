package exampleapi_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// TestLoadBalancerUpdateRequest: the update derived from a spec carries
// every mutable field under the spec's JSON names, and applying it to a
// spec of the fixed fields alone gives the spec back. Every field is set,
// so a field added to both structs but not to the conversion fails here.
func TestLoadBalancerUpdateRequest(t *testing.T) {
	spec := exampleapi.LoadBalancerSpec{
		Name: "web", Region: region, Type: "lb-medium", Internal: true, IPFamily: exampleapi.IPFamilyDualStack,
		Algorithm: exampleapi.AlgorithmLeastConnections,
		Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
		HealthCheck: &exampleapi.HealthCheck{Protocol: "tcp", Port: 30080, IntervalSeconds: 5, TimeoutSeconds: 2,
			HealthyThreshold: 2, UnhealthyThreshold: 3},
		AllowedSourceCIDRs: []string{"10.0.0.0/8"}, Targets: []string{"i-1"}, TargetPoolID: "tp-1",
		Rules: []exampleapi.Rule{{Name: "api", ListenerPort: 80}}, Tags: map[string]string{"team": "web"},
	}
	upd := spec.UpdateRequest()
	for _, v := range []reflect.Value{reflect.ValueOf(spec), reflect.ValueOf(upd)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Fatalf("%s.%s is not set", v.Type().Name(), v.Type().Field(i).Name)
			}
		}
	}

	got := exampleapi.LoadBalancerSpec{Name: spec.Name, Region: spec.Region, Internal: spec.Internal, IPFamily: spec.IPFamily}
	got.ApplyUpdate(upd)
	if !reflect.DeepEqual(got, spec) {
		t.Fatalf("applied update:\n got %+v\nwant %+v", got, spec)
	}

	specJSON, updJSON := jsonObject(t, spec), jsonObject(t, upd)
	for _, fixed := range []string{"name", "region", "internal", "ip_family"} {
		delete(specJSON, fixed)
	}
	if !reflect.DeepEqual(updJSON, specJSON) {
		t.Fatalf("update JSON %v, want the spec's mutable fields %v", updJSON, specJSON)
	}
}

// jsonObject is v as a JSON object decoded: what it says, whatever the
// order of its members.
func jsonObject(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(marshal(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUsesPool: a load balancer uses a pool it forwards to, or that one of
// its rules' backends names; no other.
func TestUsesPool(t *testing.T) {
	direct := exampleapi.LoadBalancerSpec{TargetPoolID: "tp-a"}
	ruled := exampleapi.LoadBalancerSpec{Targets: []string{"i-1"}, Rules: []exampleapi.Rule{
		{Name: "api", Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-x", Port: 30080}, {TargetPoolID: "tp-b", Port: 30081}}}}}
	for _, c := range []struct {
		spec exampleapi.LoadBalancerSpec
		id   string
		want bool
	}{
		{direct, "tp-a", true}, {direct, "tp-b", false}, {ruled, "tp-b", true}, {ruled, "tp-a", false},
		{exampleapi.LoadBalancerSpec{Targets: []string{"i-1"}}, "", false},
	} {
		if got := c.spec.UsesPool(c.id); got != c.want {
			t.Errorf("%+v uses %q: %v, want %v", c.spec, c.id, got, c.want)
		}
	}
}
