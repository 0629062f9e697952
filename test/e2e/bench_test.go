package e2e

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Benchmarks of the whole system: real CCM binary, control plane,
// simulator (provisioning delay 100 ms) and terraform. Run with make bench;
// figures are printed, not asserted. Targets on 2 cores: Service → ingress
// p50 ≤ 0.45 s; 1,000 Services ≤ 5 min; a restart with 1,000 unchanged
// Services ≤ 30 s with no terraform process; one node joining ≤ 5 s;
// 100 nodes → routes with ≤ 5 applies.

var benchArgs = []string{"--concurrent-service-syncs=8", "--kube-api-qps=100", "--kube-api-burst=200"}

func BenchmarkServiceToIngress(b *testing.B) {
	// No provisioning delay: what the controller takes, not the cloud.
	e := newEnv(b, options{provisionDelay: time.Millisecond, extraArgs: benchArgs})
	e.addNode("node-a", "ex-west-1a")
	e.waitNodesInitialised(1)
	var lat []time.Duration
	for i := range 10 {
		name := fmt.Sprintf("lat-%d", i)
		start := time.Now()
		_, err := e.kube.CoreV1().Services("default").Create(ctx(b), lbService(name, 80), metav1.CreateOptions{})
		must(b, err)
		e.waitIngressFast(name, 60*time.Second)
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2].Seconds(), "p50-s")
	b.ReportMetric(lat[len(lat)*95/100].Seconds(), "p95-s")
	b.ReportMetric(e.ccmRSSMiB(), "ccm-peak-rss-MiB")
}

// benchServices is how many Services BenchmarkManyServices creates:
// $EXAMPLE_BENCH_SERVICES, default 100 (1,000 takes about 6 minutes).
func benchServices() int {
	if n, err := strconv.Atoi(os.Getenv("EXAMPLE_BENCH_SERVICES")); err == nil && n > 0 {
		return n
	}
	return 100
}

// BenchmarkManyServices: n Services created at once until all have an
// address; a restart with an empty work directory until every Service was
// answered again (and how many terraform processes that took); one node
// joining until every load balancer targets it.
func BenchmarkManyServices(b *testing.B) {
	e := newEnv(b, options{provisionDelay: 100 * time.Millisecond, extraArgs: benchArgs, lbPublicPrefix: netip.MustParsePrefix("198.18.0.0/16")})
	e.addNode("node-a", "ex-west-1a")
	e.waitNodesInitialised(1)
	n := benchServices()
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 20)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := e.kube.CoreV1().Services("default").Create(ctx(b), lbService(fmt.Sprintf("s%04d", i), 80), metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range n {
		e.waitIngressFast(fmt.Sprintf("s%04d", i), 20*time.Minute)
	}
	b.ReportMetric(time.Since(start).Seconds(), "all-ingress-s")
	b.ReportMetric(e.ccmRSSMiB(), "ccm-peak-rss-MiB")

	// A new pod: SIGKILL, an empty work directory, a new process.
	e.killCCM(e.ccm)
	must(b, os.RemoveAll(e.workDir))
	start = time.Now()
	e.startCCM()
	var procs float64
	eventuallyEvery(b, 10*time.Minute, 250*time.Millisecond, "every Service answered after the restart", func() error {
		m, err := e.scrape(b)
		if err != nil {
			return err
		}
		if skips := metricSum(m, "example_ccm_fast_path_skips_total"); skips < float64(n) {
			return fmt.Errorf("%.0f of %d Services answered", skips, n)
		}
		procs = metricSum(m, "example_ccm_terraform_runs_total")
		return nil
	})
	b.ReportMetric(time.Since(start).Seconds(), "restart-steady-s")
	b.ReportMetric(procs, "restart-tf-procs")

	// One node joins: every load balancer must target it.
	start = time.Now()
	e.addNode("node-b", "ex-west-1b")
	id := e.instance("node-b").ID
	eventuallyEvery(b, 5*time.Minute, time.Second, "all LBs target the new node", func() error {
		lbs, err := e.api.ListLoadBalancers(ctx(b), exampleapi.LoadBalancerFilter{})
		if err != nil {
			return err
		}
		missing := 0
		for _, lb := range lbs {
			targets, err := e.targetsOf(&lb)
			if err != nil {
				return err
			}
			if !slices.Contains(targets, id) {
				missing++
			}
		}
		if missing > 0 || len(lbs) != n {
			return fmt.Errorf("%d of %d LBs lack the node", missing, len(lbs))
		}
		return nil
	})
	b.ReportMetric(time.Since(start).Seconds(), "node-join-all-updated-s")
	b.ReportMetric(float64(e.countLog(`"terraform apply starting"`)), "node-join-applies")
	b.ReportMetric(e.ccmRSSMiB(), "ccm-peak-rss-MiB")
}

func BenchmarkHundredNodesRoutes(b *testing.B) {
	e := newEnv(b, options{provisionDelay: 100 * time.Millisecond, extraArgs: benchArgs})
	nets, err := e.api.ListNetworks(ctx(b), region, "default")
	must(b, err)
	const n = 100
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			e.addNode(fmt.Sprintf("n%03d", i), "ex-west-1a", fmt.Sprintf("10.244.%d.0/24", i))
		})
	}
	wg.Wait()
	eventuallyEvery(b, 5*time.Minute, time.Second, "a route per node", func() error {
		rs, err := e.api.ListRoutes(ctx(b), nets[0].ID)
		if err != nil {
			return err
		}
		if len(rs) != n {
			return fmt.Errorf("%d routes", len(rs))
		}
		return nil
	})
	b.ReportMetric(time.Since(start).Seconds(), "all-routes-s")
	b.ReportMetric(float64(e.countLog("route set converged")), "route-applies")
	b.ReportMetric(e.ccmRSSMiB(), "ccm-peak-rss-MiB")
}

// waitIngressFast polls more often than waitIngress, for latency figures.
func (e *env) waitIngressFast(name string, timeout time.Duration) {
	eventuallyEvery(e.t, timeout, 20*time.Millisecond, "ingress of "+name, func() error {
		svc, err := e.kube.CoreV1().Services("default").Get(ctx(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("no ingress")
		}
		return nil
	})
}

func (e *env) waitNodesInitialised(n int) {
	eventually(e.t, time.Minute, "nodes initialised", func() error {
		l, err := e.kube.CoreV1().Nodes().List(ctx(e.t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		for _, node := range l.Items {
			if node.Spec.ProviderID != "" {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d initialised", ready, n)
		}
		return nil
	})
}

// ccmRSSMiB is the CCM's peak resident set (VmHWM), terraform excluded.
func (e *env) ccmRSSMiB() float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.ccm.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// countLog counts CCM log lines containing s.
func (e *env) countLog(s string) int {
	data, _ := os.ReadFile(e.ccmLog)
	return strings.Count(string(data), s)
}

// metricSum adds the values of every series of a metric in a /metrics page.
func metricSum(page, name string) float64 {
	var sum float64
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != ' ' && line[len(name)] != '{') {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
