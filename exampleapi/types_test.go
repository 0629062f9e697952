package exampleapi_test

import (
	"encoding/json"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

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
	direct := exampleapi.LoadBalancerSettings{TargetPoolID: "tp-a"}
	ruled := exampleapi.LoadBalancerSettings{Targets: []string{"i-1"}, Rules: []exampleapi.Rule{
		{Name: "api", Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-x", Port: 30080}, {TargetPoolID: "tp-b", Port: 30081}}}}}
	for _, c := range []struct {
		spec exampleapi.LoadBalancerSettings
		id   string
		want bool
	}{
		{direct, "tp-a", true}, {direct, "tp-b", false}, {ruled, "tp-b", true}, {ruled, "tp-a", false},
		{exampleapi.LoadBalancerSettings{Targets: []string{"i-1"}}, "", false},
	} {
		if got := c.spec.UsesPool(c.id); got != c.want {
			t.Errorf("%+v uses %q: %v, want %v", c.spec, c.id, got, c.want)
		}
	}
}
