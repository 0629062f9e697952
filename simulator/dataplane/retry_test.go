package dataplane_test

import (
	"bytes"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// A rule's timeouts are kept with traffic: a request to a slow backend
// past its request timeout, or past one try's backend timeout, answers
// 504 at the timeout, and the backend sees its request cut; the same
// request on a rule without timeouts waits for the answer.
func TestHTTPTimeouts(t *testing.T) {
	var cut atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/slow/", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
			w.WriteHeader(http.StatusOK)
		case <-r.Context().Done(): // the load balancer closed the connection
			cut.Add(1)
		}
	})
	serve(t, "10.0.0.1:30080", server(mux))
	pool := []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}}
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, []exampleapi.Rule{
		{ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/slow/request", Backends: pool,
			Timeouts: &exampleapi.Timeouts{RequestMS: 200}},
		{ListenerPort: 80, Priority: 2, PathType: exampleapi.PathPrefix, Path: "/slow/backend", Backends: pool,
			Timeouts: &exampleapi.Timeouts{BackendRequestMS: 200}},
		{ListenerPort: 80, Priority: 3, Backends: pool},
	})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.1")}}}}})

	for _, tc := range []struct {
		path   string
		status int
		cut    bool
	}{
		{"/slow/request", http.StatusGatewayTimeout, true},
		{"/slow/backend", http.StatusGatewayTimeout, true},
		{"/slow/none", http.StatusOK, false},
	} {
		cut.Store(0)
		began := time.Now()
		got, err := status(noRedirects, "http://203.0.113.10"+tc.path)
		took := time.Since(began)
		if err != nil || got != tc.status {
			t.Errorf("%s: %d, %v; want %d", tc.path, got, err, tc.status)
		}
		if tc.cut && (took < 200*time.Millisecond || took > 800*time.Millisecond) {
			t.Errorf("%s: answered after %v, want at the 200ms timeout", tc.path, took)
		}
		// The backend sees its request's end soon after the answer.
		deadline := time.Now().Add(2 * time.Second)
		for tc.cut && cut.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if (cut.Load() > 0) != tc.cut {
			t.Errorf("%s: the backend's request cut: %v, want %v", tc.path, cut.Load() > 0, tc.cut)
		}
	}
}

// A rule's retry is kept with traffic, against example-echo's retry
// simulation (echo-basic's): a try answering a listed code is sent again
// until one succeeds or the attempts run out (the last answer is the
// client's); a code not listed is answered at once; a connection reset
// is retried whatever the codes; a small body is sent again whole, a
// body past the replay bound only once.
func TestHTTPRetries(t *testing.T) {
	var tries atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("/retry/", echo.Handler("pod", "test"))
	mux.HandleFunc("/post/", func(w http.ResponseWriter, r *http.Request) {
		tries.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("ok") != "" && int(tries.Load()) > 1 {
			_, _ = w.Write(body)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	serve(t, "10.0.0.1:30080", server(mux))
	pool := []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}}
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, []exampleapi.Rule{
		{ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/retry/500", Backends: pool,
			Retry: &exampleapi.Retry{Attempts: 3, StatusCodes: []int{500}, BackoffMS: 10}},
		{ListenerPort: 80, Priority: 2, Backends: pool,
			Retry: &exampleapi.Retry{Attempts: 2, StatusCodes: []int{500, 502, 503, 504}}},
	})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.1")}}}}})

	for _, tc := range []struct {
		query  string
		status int
	}{
		{"/retry/500?responseCode=500&succeedAfter=2&uuid=a", http.StatusOK},
		{"/retry/500?responseCode=500&succeedAfter=4&uuid=b", http.StatusInternalServerError},
		{"/retry/500?responseCode=503&succeedAfter=1&uuid=c", http.StatusServiceUnavailable},
		{"/retry/all?responseCode=503&succeedAfter=2&uuid=d", http.StatusOK},
		{"/retry/all?responseCode=504&succeedAfter=3&uuid=e", http.StatusGatewayTimeout},
	} {
		if got, err := status(noRedirects, "http://203.0.113.10"+tc.query); err != nil || got != tc.status {
			t.Errorf("%s: %d, %v; want %d", tc.query, got, err, tc.status)
		}
	}
	// A connection reset, with no answer: retried, and 502 when the
	// attempts run out. (A POST: Go's transport would itself resend a
	// GET once on a reused connection.)
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"/retry/all?succeedAfter=2&uuid=f", http.StatusOK},
		{"/retry/all?succeedAfter=3&uuid=g", http.StatusBadGateway},
	} {
		res, err := noRedirects.Post("http://203.0.113.10"+tc.query, "text/plain", strings.NewReader("x"))
		if err != nil || res.StatusCode != tc.status {
			t.Errorf("POST %s: %v, %v; want %d", tc.query, res, err, tc.status)
		}
		if err == nil {
			_ = res.Body.Close()
		}
	}

	post := func(path string, body []byte) (int, []byte) {
		t.Helper()
		tries.Store(0)
		res, err := noRedirects.Post("http://203.0.113.10"+path, "text/plain", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		got, _ := io.ReadAll(res.Body)
		return res.StatusCode, got
	}
	small := []byte(strings.Repeat("s", 1000))
	if code, got := post("/post/?ok=1", small); code != http.StatusOK || !bytes.Equal(got, small) || tries.Load() != 2 {
		t.Errorf("a small body retried: %d after %d tries, body sent again whole: %v", code, tries.Load(), bytes.Equal(got, small))
	}
	large := bytes.Repeat([]byte("l"), exampleapi.MaxRetryBodyBytes+1)
	if code, _ := post("/post/?ok=1", large); code != http.StatusServiceUnavailable || tries.Load() != 1 {
		t.Errorf("a body past the replay bound: %d after %d tries, want 503 after 1", code, tries.Load())
	}
}
