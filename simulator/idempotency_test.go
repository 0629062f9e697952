package simulator_test

import (
	"net/http"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestIdempotencyKeyReplay(t *testing.T) {
	c := startControl(t)

	var first, second exampleapi.LoadBalancer
	r1 := c.must(http.StatusCreated, "POST", "/v1/load-balancers", lbSpec("web"), &first, "Idempotency-Key", "key-1")
	r2 := c.must(http.StatusCreated, "POST", "/v1/load-balancers", lbSpec("web"), &second, "Idempotency-Key", "key-1")
	if first.ID != second.ID || string(r1.body) != string(r2.body) {
		t.Fatalf("replay differs:\n%s\n%s", r1.body, r2.body)
	}
	if r2.header.Get("Idempotent-Replayed") != "true" || r2.header.Get("ETag") != `"1"` {
		t.Errorf("replay headers %v", r2.header)
	}
	var l exampleapi.ListResponse[exampleapi.LoadBalancer]
	c.must(http.StatusOK, "GET", "/v1/load-balancers", nil, &l)
	if len(l.Items) != 1 {
		t.Fatalf("%d load balancers after a replayed create, want 1", len(l.Items))
	}
	// Without the key the same request is a duplicate.
	c.apiError(http.StatusConflict, "POST", "/v1/load-balancers", lbSpec("web"))
	// The key is bound to its request.
	c.apiError(http.StatusConflict, "POST", "/v1/load-balancers", lbSpec("other"), "Idempotency-Key", "key-1")
	// Keys are scoped per path: the same key creates an instance.
	inst := c.createInstanceWithKey(instanceReq("n1", "ex-west-1a"), "key-1")
	if again := c.createInstanceWithKey(instanceReq("n1", "ex-west-1a"), "key-1"); again.ID != inst.ID {
		t.Errorf("instance replay gave %s, want %s", again.ID, inst.ID)
	}
	// A replay answers the recorded answer even after the object changed.
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+first.ID, nil, nil)
	var third exampleapi.LoadBalancer
	c.must(http.StatusCreated, "POST", "/v1/load-balancers", lbSpec("web"), &third, "Idempotency-Key", "key-1")
	if third.ID != first.ID {
		t.Errorf("replay after delete gave %s, want %s", third.ID, first.ID)
	}
}

func TestIdempotencyKeySurvivesRestart(t *testing.T) {
	sim := simtest.Start(t)
	first := control(t, sim).createInstanceWithKey(instanceReq("n1", "ex-west-1a"), "k")
	sim.Stop()
	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir), simtest.WithTokens(sim.Token, sim.ReadOnlyToken))
	if got := control(t, sim).createInstanceWithKey(instanceReq("n1", "ex-west-1a"), "k"); got.ID != first.ID {
		t.Errorf("replay after restart gave %s, want %s", got.ID, first.ID)
	}
}

func TestIdempotencyKeyScopedPerToken(t *testing.T) {
	sim := simtest.Start(t)
	control(t, sim).createInstanceWithKey(instanceReq("n1", "ex-west-1a"), "k")
	sim.Stop()
	// Another token with the same key is a new request: the name is taken.
	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	control(t, sim).apiError(http.StatusConflict, "POST", "/v1/instances", instanceReq("n1", "ex-west-1a"), "Idempotency-Key", "k")
}

func (a *api) createInstanceWithKey(req exampleapi.CreateInstanceRequest, key string) exampleapi.Instance {
	a.t.Helper()
	return decoded[exampleapi.Instance](a, http.StatusCreated, "POST", "/v1/instances", req, "Idempotency-Key", key)
}
