package simulator_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestRateLimit(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	sim.SetFaults(t, exampleapi.Faults{RateLimit: 0.5, RateBurst: 2})
	c.must(http.StatusOK, "GET", "/v1/regions", nil, nil)
	c.must(http.StatusOK, "GET", "/v1/regions", nil, nil)
	resp := c.do("GET", "/v1/regions", nil)
	if resp.status != http.StatusTooManyRequests {
		t.Fatalf("third request: status %d, want 429", resp.status)
	}
	ra, err := strconv.Atoi(resp.header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 2 {
		t.Errorf("Retry-After %q, want an integer of 1-2 seconds", resp.header.Get("Retry-After"))
	}
	if e := c.apiError(http.StatusTooManyRequests, "GET", "/v1/regions", nil); e.Code != exampleapi.CodeRateLimited {
		t.Errorf("code %q", e.Code)
	}
	// Health and admin endpoints are exempt, and each token has its own bucket.
	newAPI(t, sim.URL, "").must(http.StatusOK, "GET", "/healthz", nil, nil)
	if f := sim.Faults(t); f.RateLimit != 0.5 {
		t.Errorf("faults %+v", f)
	}
	inst := c.createInstanceNoLimit(t, sim)
	metadata(t, sim).must(http.StatusOK, "GET", "/v1/instances/"+inst, nil, nil)
	// Turning the limit off takes effect at once.
	sim.SetFaults(t, exampleapi.Faults{})
	for range 5 {
		c.must(http.StatusOK, "GET", "/v1/regions", nil, nil)
	}
}

// createInstanceNoLimit creates an instance while the control token is
// rate limited, by lifting the limit for one request.
func (a *api) createInstanceNoLimit(t *testing.T, sim *simtest.Sim) string {
	f := sim.Faults(t)
	sim.SetFaults(t, exampleapi.Faults{})
	id := a.createInstance(instanceReq("n1", "ex-west-1a")).ID
	sim.SetFaults(t, f)
	return id
}

func TestErrorInjection(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	seen := map[int]bool{}
	for range 40 {
		resp := c.do("POST", "/v1/instances", instanceReq("never", "ex-west-1a"))
		switch resp.status {
		case http.StatusServiceUnavailable:
			if resp.header.Get("Retry-After") != "1" {
				t.Errorf("503 without Retry-After: 1")
			}
		case http.StatusInternalServerError:
		default:
			t.Fatalf("status %d with error_rate=1: %s", resp.status, resp.body)
		}
		seen[resp.status] = true
	}
	if !seen[500] || !seen[503] {
		t.Errorf("40 injected errors were not a mix of 500 and 503: %v", seen)
	}
	// The metadata API is an API too.
	if resp := metadata(t, sim).do("GET", "/v1/self", nil); resp.status < 500 {
		t.Errorf("metadata API answered %d with error_rate=1", resp.status)
	}
	// The admin endpoint and /healthz are never faulted.
	newAPI(t, sim.URL, "").must(http.StatusOK, "GET", "/healthz", nil, nil)
	sim.SetFaults(t, exampleapi.Faults{})
	// Injected errors happen before processing: nothing was created.
	if n := len(c.listInstances("")); n != 0 {
		t.Errorf("%d instances created by failed requests", n)
	}
}

func TestDropInjection(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	sim.SetFaults(t, exampleapi.Faults{DropRate: 1})
	_, err := c.try("POST", "/v1/instances", instanceReq("dropped", "ex-west-1a"))
	if err == nil {
		t.Fatal("request answered with drop_rate=1")
	}
	sim.SetFaults(t, exampleapi.Faults{})
	// The request was processed before its answer was lost.
	if n := len(c.listInstances("name=dropped")); n != 1 {
		t.Errorf("dropped create: %d instances, want 1", n)
	}
}

func TestLatencyHonoursClientCancellation(t *testing.T) {
	reqs := simtest.NewRequests()
	sim := simtest.Start(t, simtest.WithRequests(reqs))
	c := control(t, sim)
	sim.SetFaults(t, exampleapi.Faults{LatencyMs: 100})
	start := time.Now()
	c.must(http.StatusOK, "GET", "/v1/regions", nil, nil)
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("answered in %v with 100ms latency", d)
	}
	// A client that gives up while the latency runs: the server gives up
	// too and never processes the request.
	const latency = 300 * time.Millisecond
	impatient := newAPI(t, sim.URL, sim.Token)
	impatient.hc.Timeout = 30 * time.Millisecond
	sim.SetFaults(t, exampleapi.Faults{LatencyMs: int(latency.Milliseconds())})
	if _, err := impatient.try("POST", "/v1/instances", instanceReq("late", "ex-west-1a")); err == nil {
		t.Fatal("no timeout")
	}
	// The server is done with the request once it logs it: had it gone
	// on after the latency, the instance would exist by then.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	late, err := reqs.Wait(ctx, func(r simtest.Request) bool { return r.Method == http.MethodPost && r.Path == "/v1/instances" })
	if err != nil {
		t.Fatalf("the abandoned request never finished: %v", err)
	}
	if late.Status != 0 {
		t.Errorf("the abandoned request was answered %d", late.Status)
	}
	sim.SetFaults(t, exampleapi.Faults{})
	if n := len(c.listInstances("")); n != 0 {
		t.Errorf("abandoned request created %d instances", n)
	}
}

func TestFaultsAdminEndpoint(t *testing.T) {
	sim := simtest.Start(t, simtest.WithFaults(exampleapi.Faults{LatencyMs: 1}))
	c := control(t, sim)
	var f exampleapi.Faults
	c.must(http.StatusOK, "GET", "/admin/v1/faults", nil, &f)
	if f.LatencyMs != 1 || f.ProvisionDelayMs != int(simtest.DefaultProvisionDelay.Milliseconds()) {
		t.Errorf("initial faults %+v", f)
	}
	// Omitted fields keep their value.
	c.must(http.StatusOK, "PUT", "/admin/v1/faults", `{"error_rate":0.25}`, &f)
	if f.LatencyMs != 1 || f.ErrorRate != 0.25 {
		t.Errorf("after partial PUT %+v", f)
	}
	// With every request failing or dropped, the admin endpoint still works.
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1, DropRate: 1, LatencyMs: 5000})
	if got := sim.Faults(t); got.ErrorRate != 1 {
		t.Errorf("faults %+v", got)
	}
	sim.SetFaults(t, exampleapi.Faults{})
	c.must(http.StatusOK, "GET", "/v1/regions", nil, nil)
}

// Every injected fault is counted, for chaos reports.
func TestFaultStats(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	before, err := api.FaultStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	c.do("GET", "/v1/regions", nil)
	sim.SetFaults(t, exampleapi.Faults{RateLimit: 0.001, RateBurst: 1})
	c.do("GET", "/v1/regions", nil)
	c.do("GET", "/v1/regions", nil)
	sim.SetFaults(t, exampleapi.Faults{DropRate: 1})
	req, _ := http.NewRequest(http.MethodGet, sim.URL+"/v1/regions", nil)
	req.Header.Set("Authorization", "Bearer "+sim.Token)
	if resp, err := http.DefaultClient.Do(req); err == nil { // the answer is lost
		resp.Body.Close()
		t.Fatal("a dropped request was answered")
	}
	after, err := api.FaultStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Go's client sends a GET again once when its connection drops.
	dropped := after.Dropped - before.Dropped
	if after.Errors-before.Errors != 1 || after.RateLimited-before.RateLimited != 1 || dropped < 1 || after.Requests-before.Requests != 3+dropped {
		t.Fatalf("stats %+v, then %+v", before, after)
	}
}
