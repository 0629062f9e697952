package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// benchRouteSizes are the HTTPRoutes BenchmarkRoutes puts on its Gateway
// before each round of changes: $EXAMPLE_BENCH_ROUTES (comma-separated),
// default 10, 100 and 1,000.
func benchRouteSizes() []int {
	sizes := []int{10, 100, 1000}
	if s := countsFromEnv("EXAMPLE_BENCH_ROUTES"); len(s) > 0 {
		sizes = s
	}
	return sizes
}

const (
	// routeChanges are the route creates of each round.
	routeChanges = 100
	// routeChangeEvery paces them: a team's deploys, not a bulk import.
	routeChangeEvery = 250 * time.Millisecond
	// steadyRate is the requests per second to unchanged routes meanwhile.
	steadyRate = 50
)

// BenchmarkRoutes (issue 57): one Gateway whose HTTP listener carries n
// HTTPRoutes (each its own host name, to one Service), for n of
// benchRouteSizes, grown in one env. At each size, 100 routes are created
// one every 250 ms while a steady 50 requests/s go to the n routes that do
// not change. Figures, per size:
//
//   - from a route's create to its first 200 through the load balancer's
//     address: p50 and p99 (goal at 100 routes: p50 ≤ 2 s, p99 ≤ 5 s);
//   - the plans that took the 100 changes (applies, counted in the
//     controller's log): how many changes each apply carried;
//   - CPU per route change: the controller's CPU with its terraform
//     processes', from the first create until it is idle again, over 100;
//   - the steady requests that did not get a 2xx: the benchmark fails
//     unless there are none.
//
// Then the 100 routes are deleted (the next size starts from n).
func BenchmarkRoutes(b *testing.B) {
	o := benchOptions()
	o.traffic = true
	e, admin := gatewayEnv(b, o)
	// Not testkit.Context: its 3 minutes are less than the run.
	ctx := b.Context()
	e.echoDeployment(b, "default", "web", 2)
	webGateway(ctx, b, e, admin)
	ip := e.gatewayAddress(b, admin, "default")
	// The steady requests each open a connection (the listener keeps
	// accepting while rules change); the polls for a new route's first
	// 200 reuse theirs, so that polling does not load the machine the
	// figures are measured on.
	r := &routeBench{b: b, e: e, admin: admin, ip: ip,
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		poller: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 200}}}
	have := 0
	for _, n := range benchRouteSizes() {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			r.b = b
			start := time.Now()
			r.create(ctx, "base", have, n)
			have = max(have, n)
			b.Logf("%d routes on the Gateway, all answering, in %.1f s", n, time.Since(start).Seconds())
			r.round(ctx, n)
		})
	}
}

// routeBench is BenchmarkRoutes' env, Gateway and client.
type routeBench struct {
	b      *testing.B
	e      *env
	admin  gwclient.Interface
	ip     string
	client *http.Client
	poller *http.Client
}

// routeHost is the host name of route prefix-i.
func routeHost(prefix string, i int) string { return fmt.Sprintf("%s-%d.bench.test", prefix, i) }

// benchRoute is HTTPRoute prefix-i: its host name to Service web.
func benchRoute(prefix string, i int) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{gatewayv1.Hostname(routeHost(prefix, i))},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "web", 1)}}},
		}}
}

// create makes routes prefix-from to prefix-(to-1), 20 at a time, and
// waits until each answers 200.
func (r *routeBench) create(ctx context.Context, prefix string, from, to int) {
	inParallel(to-from, 20, func(i int) {
		if _, err := r.admin.GatewayV1().HTTPRoutes("default").Create(ctx, benchRoute(prefix, from+i), metav1.CreateOptions{}); err != nil {
			r.b.Error(err)
		}
	})
	var late atomic.Int64
	inParallel(to-from, 20, func(i int) {
		if _, err := r.firstOK(ctx, routeHost(prefix, from+i), 10*time.Minute); err != nil && late.Add(1) <= 5 {
			r.b.Error(err)
		}
	})
	if n := late.Load(); n > 0 {
		r.b.Fatalf("%d routes never answered", n)
	}
}

// get is the status of GET / for host through the load balancer by c (0
// when the request failed).
func (r *routeBench) get(ctx context.Context, c *http.Client, host string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.ip+"/", nil)
	if err != nil {
		return 0
	}
	req.Host = host
	res, err := c.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// firstOK polls host every 100 ms until it answers 200, and says when.
func (r *routeBench) firstOK(ctx context.Context, host string, within time.Duration) (time.Time, error) {
	deadline := time.Now().Add(within)
	for {
		code := r.get(ctx, r.poller, host)
		if code == http.StatusOK {
			return time.Now(), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("%s: no 200 within %s (last %d)", host, within, code)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// round creates the 100 changed routes on a Gateway of n, under steady
// load to the n unchanged ones, reports its figures, then deletes them.
func (r *routeBench) round(ctx context.Context, n int) {
	b, e := r.b, r.e
	e.waitTerraformIdle(b, 5*time.Second)
	prefix := fmt.Sprintf("chg%d", n)
	steady := r.steady(ctx, n)
	applies0, cpu0, procs0 := e.countLog(`"terraform apply starting"`), e.ccmCPU(), e.procs.Counts(b)
	lat := make([]time.Duration, routeChanges)
	var wg sync.WaitGroup
	for i := range routeChanges {
		created := time.Now()
		if _, err := r.admin.GatewayV1().HTTPRoutes("default").Create(ctx, benchRoute(prefix, i), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			ok, err := r.firstOK(ctx, routeHost(prefix, i), 2*time.Minute)
			if err != nil {
				b.Error(err)
				return
			}
			lat[i] = ok.Sub(created)
		})
		time.Sleep(routeChangeEvery)
	}
	wg.Wait()
	e.waitTerraformIdle(b, 3*time.Second)
	cpu, applies := e.ccmCPU()-cpu0, e.countLog(`"terraform apply starting"`)-applies0
	var procs []string
	for cmd, k := range e.procs.Counts(b) {
		if k > procs0[cmd] {
			procs = append(procs, fmt.Sprintf("%s %d", cmd, k-procs0[cmd]))
		}
	}
	slices.Sort(procs)
	sent, failed := steady()
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	b.ReportMetric(p50.Seconds(), "p50-s")
	b.ReportMetric(p99.Seconds(), "p99-s")
	b.ReportMetric(cpu.Seconds()/routeChanges, "cpu-s/change")
	b.ReportMetric(float64(applies), "applies")
	b.ReportMetric(float64(len(failed)), "non-2xx")
	b.Logf("%d routes: %d creates, one every %s: first 200 p50 %.2f s, p99 %.2f s, max %.2f s; %d applies (%.1f changes each); terraform processes: %s; controller CPU with terraform %.1f s, %.3f s per change; steady %d requests to unchanged routes, %d not 2xx",
		n, routeChanges, routeChangeEvery, p50.Seconds(), p99.Seconds(), lat[len(lat)-1].Seconds(), applies, float64(routeChanges)/float64(max(applies, 1)),
		strings.Join(procs, ", "), cpu.Seconds(), cpu.Seconds()/routeChanges, sent, len(failed))
	if len(failed) > 0 {
		b.Errorf("requests to unchanged routes that did not get a 2xx: %s", strings.Join(failed[:min(len(failed), 10)], "; "))
	}
	inParallel(routeChanges, 20, func(i int) {
		if err := r.admin.GatewayV1().HTTPRoutes("default").Delete(ctx, fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{}); err != nil {
			b.Error(err)
		}
	})
	e.waitTerraformIdle(b, 3*time.Second)
}

// steady sends steadyRate requests a second to the n base routes in turn
// until the returned stop is called, which says how many were sent and
// which did not get a 2xx.
func (r *routeBench) steady(ctx context.Context, n int) (stop func() (int, []string)) {
	var (
		mu     sync.Mutex
		failed []string
		sent   atomic.Int64
		wg     sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(time.Second / steadyRate)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			host := routeHost("base", i%n)
			sent.Add(1)
			wg.Go(func() {
				if code := r.get(ctx, r.client, host); code < 200 || code > 299 {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s at %s: %d", host, time.Now().Format("15:04:05.000"), code))
					mu.Unlock()
				}
			})
		}
	})
	return func() (int, []string) {
		close(done)
		wg.Wait()
		return int(sent.Load()), failed
	}
}
