package dataplane_test

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// BenchmarkHTTPListener: requests through one http listener beside the
// same requests straight to its target, in one run, connections kept
// alive: requests/s of both (8 clients), their p99 latency one request at
// a time, and what the load balancer adds to it. docs/scale.md keeps the
// figures.
func BenchmarkHTTPListener(b *testing.B) {
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}
	ln, err := net.Listen("tcp", "10.0.0.1:30080")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }() // ends with Close
	b.Cleanup(func() { _ = srv.Close() })
	s := dataplane.New(nil)
	b.Cleanup(s.Close)
	if err := s.Swap(&dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{
		LoadBalancer: newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, nil),
		Addrs:        []netip.Addr{lbAddr}, Own: []dataplane.Target{target("i-1", "10.0.0.1")}}}}); err != nil {
		b.Fatal(err)
	}
	const directURL, lbURL = "http://10.0.0.1:30080/", "http://203.0.113.10/"
	b.ResetTimer()
	direct, _ := measure(b, directURL, b.N, 8)
	through, _ := measure(b, lbURL, b.N, 8)
	b.StopTimer()
	// Latency one request at a time, so that it is the proxy's and not a
	// queue's.
	_, directP99 := measure(b, directURL, 2000, 1)
	_, throughP99 := measure(b, lbURL, 2000, 1)
	b.ReportMetric(direct, "direct-req/s")
	b.ReportMetric(through, "lb-req/s")
	b.ReportMetric(float64(directP99.Microseconds())/1000, "direct-p99-ms")
	b.ReportMetric(float64(throughP99.Microseconds())/1000, "lb-p99-ms")
	b.ReportMetric(float64((throughP99-directP99).Microseconds())/1000, "added-p99-ms")
}

// measure sends n requests to url from clients at once: requests/s and
// p99.
func measure(b *testing.B, url string, n, clients int) (float64, time.Duration) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	began := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range next {
				t0 := time.Now()
				res, err := c.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	slices.Sort(lat)
	return float64(len(lat)) / elapsed.Seconds(), lat[len(lat)*99/100]
}
