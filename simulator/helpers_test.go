package simulator_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// api is a minimal raw-HTTP client for the tests; the real client lives in
// exampleapi and is tested there.
type api struct {
	t     testing.TB
	base  string
	token string
	hc    *http.Client
}

func newAPI(t testing.TB, base, token string) *api {
	return &api{t: t, base: base, token: token, hc: &http.Client{Timeout: 30 * time.Second}}
}

func control(t testing.TB, sim *simtest.Sim) *api { return newAPI(t, sim.URL, sim.Token) }
func metadata(t testing.TB, sim *simtest.Sim) *api {
	return newAPI(t, sim.MetadataURL, sim.ReadOnlyToken)
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends body (marshalled unless it is a string or nil) with optional
// header pairs and returns the whole answer.
func (a *api) do(method, path string, body any, headers ...string) response {
	a.t.Helper()
	resp, err := a.try(method, path, body, headers...)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (a *api) try(method, path string, body any, headers ...string) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return response{}, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		return response{}, err
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// must sends the request, requires status want and decodes into out.
func (a *api) must(want int, method, path string, body, out any, headers ...string) response {
	a.t.Helper()
	resp := a.do(method, path, body, headers...)
	if resp.status != want {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.status, want, resp.body)
	}
	if out != nil {
		if err := json.Unmarshal(resp.body, out); err != nil {
			a.t.Fatalf("%s %s: decoding %s: %v", method, path, resp.body, err)
		}
	}
	return resp
}

// decoded sends the request, requires status want and returns the answer
// decoded as a T.
func decoded[T any](a *api, want int, method, path string, body any, headers ...string) T {
	a.t.Helper()
	var out T
	a.must(want, method, path, body, &out, headers...)
	return out
}

// apiError sends the request and requires an error answer with status want.
func (a *api) apiError(want int, method, path string, body any, headers ...string) exampleapi.ErrorBody {
	a.t.Helper()
	var e exampleapi.ErrorResponse
	resp := a.must(want, method, path, body, &e, headers...)
	if e.Error.Code == "" || e.Error.Message == "" {
		a.t.Fatalf("%s %s: error body without code or message: %s", method, path, resp.body)
	}
	return e.Error
}

func (a *api) createInstance(req exampleapi.CreateInstanceRequest) exampleapi.Instance {
	a.t.Helper()
	return decoded[exampleapi.Instance](a, http.StatusCreated, "POST", "/v1/instances", req)
}

// listInstances lists the instances matching query (e.g. "name=web"),
// one page.
func (a *api) listInstances(query string) []exampleapi.Instance {
	a.t.Helper()
	return decoded[exampleapi.ListResponse[exampleapi.Instance]](a, http.StatusOK, "GET", "/v1/instances?"+query, nil).Items
}

// objects is one kind of cloud object, at path, that a test creates and
// reads back (each requiring success).
type objects[T, C any] struct {
	a    *api
	path string
}

func (o objects[T, C]) create(req C) T {
	o.a.t.Helper()
	return decoded[T](o.a, http.StatusCreated, "POST", o.path, req)
}

func (o objects[T, C]) get(id string) T {
	o.a.t.Helper()
	return decoded[T](o.a, http.StatusOK, "GET", o.path+"/"+id, nil)
}

func (a *api) lbs() objects[exampleapi.LoadBalancer, exampleapi.LoadBalancerSpec] {
	return objects[exampleapi.LoadBalancer, exampleapi.LoadBalancerSpec]{a, "/v1/load-balancers"}
}

func (a *api) pools() objects[exampleapi.TargetPool, exampleapi.CreateTargetPoolRequest] {
	return objects[exampleapi.TargetPool, exampleapi.CreateTargetPoolRequest]{a, "/v1/target-pools"}
}

func (a *api) addresses() objects[exampleapi.Address, exampleapi.CreateAddressRequest] {
	return objects[exampleapi.Address, exampleapi.CreateAddressRequest]{a, "/v1/addresses"}
}

// waitLB polls until the load balancer leaves provisioning.
func (a *api) waitLB(id string) exampleapi.LoadBalancer {
	a.t.Helper()
	var lb exampleapi.LoadBalancer
	// The API has no way to wait for a status: poll.
	testkit.EventuallyEvery(a.t, 10*time.Second, 10*time.Millisecond, "load balancer "+id+" out of provisioning", func() error {
		if lb = a.lbs().get(id); lb.Status == exampleapi.LBStatusProvisioning {
			return errors.New("still provisioning")
		}
		return nil
	})
	return lb
}

func instanceReq(name, zone string) exampleapi.CreateInstanceRequest {
	return exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: zone}
}

func lbSpec(name string) exampleapi.LoadBalancerSpec {
	return exampleapi.LoadBalancerSpec{
		Name: name, Region: "ex-west-1",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			HealthCheck: &exampleapi.HealthCheck{Protocol: "http", Port: 30080, Path: "/healthz",
				IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 2, UnhealthyThreshold: 3},
		},
	}
}

func mustSeed(t testing.TB, yaml string) *simulator.Seed {
	t.Helper()
	s, err := simulator.ParseSeed([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
