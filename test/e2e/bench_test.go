package e2e

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Benchmarks of the whole system: real CCM binary, control plane,
// simulator (provisioning delay 100 ms) and terraform, with the chart's
// throughput settings (shippedThroughput). Run with make bench; figures
// are printed, not asserted. Terraform processes are counted from the OS
// (a wrapper logs each), memory from /proc for the controller process
// named in the metric. Targets on 2 cores: Service → ingress p50 ≤ 0.45 s;
// 1,000 Services ≤ 240 s, ≤ 3 terraform processes each, peak RSS ≤ 300 MiB;
// a restart with 1,000 unchanged Services ≤ 15 s with no terraform
// process; one node joining ≤ 2 s in one apply; 100 nodes → routes with
// ≤ 5 applies.

// benchOptions are the options every benchmark starts from.
func benchOptions() options { return options{shipped: true, countProcesses: true} }

// inParallel runs fn(0) to fn(n-1), at most limit at a time, and returns
// when all have.
func inParallel(n, limit int, fn func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

func BenchmarkServiceToIngress(b *testing.B) {
	// No provisioning delay: what the controller takes, not the cloud.
	o := benchOptions()
	o.provisionDelay = time.Millisecond
	e := newEnv(b, o)
	e.nodeA()
	var lat []time.Duration
	for i := range 10 {
		name := fmt.Sprintf("lat-%d", i)
		start := time.Now()
		_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(b), lbService(name, 80), metav1.CreateOptions{})
		testkit.Must(b, err)
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
func benchServices() int { return countFromEnv("EXAMPLE_BENCH_SERVICES", 100) }

// countsFromEnv is the positive numbers, comma-separated, in environment
// variable name (none when it is unset or any is not one).
func countsFromEnv(name string) []int {
	var out []int
	for f := range strings.SplitSeq(os.Getenv(name), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// countFromEnv is the positive number in environment variable name, or def.
func countFromEnv(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkManyServices: n Services created at once until all have an
// address (with the requests the controller sent the API server per
// Service, and their wait on its client's limiter); a restart with an empty work directory until every Service was
// answered again (and how many terraform processes that took); one node
// joining until every load balancer targets it; that node drained until
// it is deregistered (draining) from every load balancer's pool.
func BenchmarkManyServices(b *testing.B) {
	o := benchOptions()
	o.provisionDelay, o.lbPublicPrefix = 100*time.Millisecond, netip.MustParsePrefix("198.18.0.0/16")
	e := newEnv(b, o)
	e.nodeA()
	n := benchServices()
	cpu0, metrics0 := e.ccmCPU(), e.metrics(b)
	start := time.Now()
	inParallel(n, 20, func(i int) {
		_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(b), lbService(fmt.Sprintf("s%04d", i), 80), metav1.CreateOptions{})
		if err != nil {
			b.Error(err)
		}
	})
	for i := range n {
		e.waitIngressFast(fmt.Sprintf("s%04d", i), 20*time.Minute)
	}
	b.ReportMetric(time.Since(start).Seconds(), "create-all-ingress-s")
	b.ReportMetric(float64(e.procs.Total(b))/float64(n), "create-tf-procs/service")
	b.ReportMetric((e.ccmCPU()-cpu0).Seconds()/float64(n), "create-cpu-s/service")
	b.ReportMetric(e.ccmRSSMiB(), "create-ccm-peak-rss-MiB")
	requests, limited := clientRequests(metrics0, e.metrics(b))
	b.ReportMetric(requests/float64(n), "create-api-requests/service")
	b.ReportMetric(limited, "create-client-limiter-wait-s")
	printCounts(b, "create", e.procs.Counts(b))

	// A new pod: SIGKILL, an empty work directory, a new process.
	e.killCCM(e.ccm)
	testkit.Must(b, os.RemoveAll(e.workDir))
	before := e.procs.Total(b)
	start = time.Now()
	e.startCCM()
	testkit.EventuallyEvery(b, 10*time.Minute, 250*time.Millisecond, "every Service answered after the restart", func() error {
		m, err := e.scrape(b)
		if err != nil {
			return err
		}
		if skips := metricSum(m, "example_ccm_fast_path_skips_total"); skips < float64(n) {
			return fmt.Errorf("%.0f of %d Services answered", skips, n)
		}
		return nil
	})
	b.ReportMetric(time.Since(start).Seconds(), "restart-steady-s")
	b.ReportMetric(float64(e.procs.Total(b)-before), "restart-tf-procs")
	before = e.procs.Total(b)

	// One node joins: every load balancer must target it.
	start = time.Now()
	e.addNode("node-b", "ex-west-1b")
	id := e.instance("node-b").ID
	testkit.EventuallyEvery(b, 5*time.Minute, time.Second, "all LBs target the new node", func() error {
		lbs, err := e.api.ListLoadBalancers(testkit.Context(b), exampleapi.LoadBalancerFilter{})
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
	b.ReportMetric(float64(e.procs.Total(b)-before), "node-join-tf-procs")

	// The node is drained: from its drain taint until it is draining in
	// the pool every load balancer forwards to.
	before, applies := e.procs.Total(b), e.applies()
	start = time.Now()
	e.drainNode("node-b", true)
	testkit.EventuallyEvery(b, 5*time.Minute, 100*time.Millisecond, "the drained node deregistered", func() error {
		for _, p := range e.pools() {
			if slices.Contains(p.Targets, id) || !slices.ContainsFunc(p.Draining, func(d exampleapi.DrainingTarget) bool { return d.ID == id }) {
				return fmt.Errorf("pool %s: targets %v, draining %v", p.Name, p.Targets, p.Draining)
			}
		}
		return nil
	})
	b.ReportMetric(time.Since(start).Seconds(), "node-drain-deregistered-s")
	b.ReportMetric(float64(e.applies()-applies), "node-drain-applies")
	b.ReportMetric(float64(e.procs.Total(b)-before), "node-drain-tf-procs")
	lbs, err := e.api.ListLoadBalancers(testkit.Context(b), exampleapi.LoadBalancerFilter{})
	testkit.Must(b, err)
	for _, lb := range lbs {
		if lb.TargetPoolID == "" {
			b.Fatalf("load balancer %s lists its targets: the drain did not reach it through a pool", lb.ID)
		}
	}
	// The restarted controller: it answered every Service, took the node
	// in and drained it out.
	b.ReportMetric(e.ccmRSSMiB(), "restarted-ccm-peak-rss-MiB")
}

// printCounts prints terraform processes by subcommand.
func printCounts(b *testing.B, what string, counts map[string]int64) {
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	b.Logf("%s: terraform processes by command (from the OS): %s", what, strings.Join(parts, ", "))
}

func BenchmarkHundredNodesRoutes(b *testing.B) {
	o := benchOptions()
	o.provisionDelay = 100 * time.Millisecond
	e := newEnv(b, o)
	nets, err := e.api.ListNetworks(testkit.Context(b), region, "default")
	testkit.Must(b, err)
	const n = 100
	start := time.Now()
	inParallel(n, 10, func(i int) { e.addNode(fmt.Sprintf("n%03d", i), "ex-west-1a", fmt.Sprintf("10.244.%d.0/24", i)) })
	testkit.EventuallyEvery(b, 5*time.Minute, time.Second, "a route per node", func() error {
		rs, err := e.api.ListRoutes(testkit.Context(b), nets[0].ID)
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
	testkit.EventuallyEvery(e.t, timeout, 20*time.Millisecond, "ingress of "+name, func() error {
		svc, err := e.kube.CoreV1().Services("default").Get(testkit.Context(e.t), name, metav1.GetOptions{})
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
	testkit.Eventually(e.t, time.Minute, "nodes initialised", func() error {
		l, err := e.kube.CoreV1().Nodes().List(testkit.Context(e.t), metav1.ListOptions{})
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
	mib, _ := e.ccmStatusMiB("VmHWM:")
	return mib
}

// ccmCPU is the CPU the CCM used so far, with its terraform processes'.
func (e *env) ccmCPU() time.Duration { return cpuOf(e.ccm) }

// countLog counts CCM log lines containing s.
func (e *env) countLog(s string) int {
	data, _ := os.ReadFile(e.ccmLog)
	return strings.Count(string(data), s)
}

// clientRequests is what the controller asked of the API server between
// two scrapes of its /metrics: requests sent (client-go's
// rest_client_requests_total) and seconds they waited on the client's
// rate limiter (rest_client_rate_limiter_duration_seconds), summed over
// requests, so waits that overlap add up.
func clientRequests(before, after string) (requests, limited float64) {
	delta := func(name string) float64 { return metricSum(after, name) - metricSum(before, name) }
	return delta("rest_client_requests_total"), delta("rest_client_rate_limiter_duration_seconds_sum")
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

// BenchmarkPreview: the admission preview of an edit (a server-side dry
// run that adds a port: a speculative terraform plan) on a warm
// workspace and on a cold one (each Service's first preview), and the
// round trip of a real update with the webhooks installed and without
// them. Targets: p95 ≤ 1.5 s warm; an update with the webhooks ≤ 2×
// without.
func BenchmarkPreview(b *testing.B) {
	o := benchOptions()
	o.webhook, o.shippedRules, o.provisionDelay = true, true, time.Millisecond
	e := newEnv(b, o)
	e.nodeA()
	e.installWebhooks(b, 0)
	// One Service per namespace: each namespace's 3 previews stay within
	// the shipped preview rate (bursts of 5), so every one is a plan.
	const n = 10
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("pv-%d", i)
		e.namespace(b, names[i])
		svc := lbServiceIn(names[i], names[i], 80)
		_, err := e.kube.CoreV1().Services(names[i]).Create(testkit.Context(b), svc, metav1.CreateOptions{})
		testkit.Must(b, err)
	}
	for _, name := range names {
		e.waitIngressIn(name, name, 120*time.Second)
	}
	// dryRun previews adding port 8080 to name and returns how long the
	// API server took, the webhooks included.
	dryRun := func(name string) time.Duration {
		services := e.kube.CoreV1().Services(name)
		cur, err := services.Get(testkit.Context(b), name, metav1.GetOptions{})
		testkit.Must(b, err)
		cur.Spec.Ports = append(cur.Spec.Ports, v1.ServicePort{Name: "p8080", Port: 8080, Protocol: v1.ProtocolTCP})
		start := time.Now()
		_, err = services.Update(testkit.Context(b), cur, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		testkit.Must(b, err)
		return time.Since(start)
	}
	var cold, warm []time.Duration
	for _, name := range names {
		cold = append(cold, dryRun(name))
	}
	for range 2 {
		for _, name := range names {
			warm = append(warm, dryRun(name))
		}
	}
	fallbacks := e.countLog("Preview fell back to the rendering")
	// update toggles a port of pv-0 and returns the round trip.
	services := e.kube.CoreV1().Services(names[0])
	update := func(i int) time.Duration {
		cur, err := services.Get(testkit.Context(b), names[0], metav1.GetOptions{})
		testkit.Must(b, err)
		if i%2 == 0 {
			cur.Spec.Ports = append(cur.Spec.Ports, v1.ServicePort{Name: "p8080", Port: 8080, Protocol: v1.ProtocolTCP})
		} else {
			cur.Spec.Ports = cur.Spec.Ports[:1]
		}
		start := time.Now()
		_, err = services.Update(testkit.Context(b), cur, metav1.UpdateOptions{})
		testkit.Must(b, err)
		return time.Since(start)
	}
	// 30 round trips each: a few milliseconds, noisy.
	var with, without []time.Duration
	for i := range 30 {
		with = append(with, update(i))
	}
	testkit.Must(b, e.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(testkit.Context(b), cloudconfig.MutatingWebhookName, metav1.DeleteOptions{}))
	testkit.Must(b, e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(testkit.Context(b), cloudconfig.ValidatingWebhookName, metav1.DeleteOptions{}))
	// The API server stops calling them when its informer sees the deletion.
	testkit.Eventually(b, 30*time.Second, "the webhooks no longer called", func() error {
		out, err := e.kube.CoreV1().Services("default").Create(testkit.Context(b), lbService("webhook-probe", 80), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if out.Annotations[reviewapi.AuthorAnnotation] != "" {
			return fmt.Errorf("the author is still stamped")
		}
		return nil
	})
	for i := range 30 {
		without = append(without, update(i))
	}
	q := func(d []time.Duration, p int) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[min(len(d)-1, len(d)*p/100)].Seconds()
	}
	b.ReportMetric(q(warm, 50), "warm-p50-s")
	b.ReportMetric(q(warm, 95), "warm-p95-s")
	b.ReportMetric(q(cold, 50), "cold-p50-s")
	b.ReportMetric(q(cold, 95), "cold-p95-s")
	b.ReportMetric(float64(fallbacks), "fallbacks")
	b.ReportMetric(q(with, 50), "update-webhooks-p50-s")
	b.ReportMetric(q(without, 50), "update-no-webhooks-p50-s")
	b.ReportMetric(q(with, 50)/q(without, 50), "update-ratio")
}

// memoryServices are the numbers of Services BenchmarkMemoryPerObject
// measures the controller at: $EXAMPLE_MEMORY_SERVICES, comma-separated,
// default 100 (make memory: 100,1000,3000).
func memoryServices(b *testing.B) []int {
	var out []int
	for _, f := range strings.Split(cmp.Or(os.Getenv("EXAMPLE_MEMORY_SERVICES"), "100"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || len(out) > 0 && n <= out[len(out)-1] {
			b.Fatalf("EXAMPLE_MEMORY_SERVICES=%q: want increasing counts", os.Getenv("EXAMPLE_MEMORY_SERVICES"))
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkMemoryPerObject: the controller's memory in the steady state
// (every Service served, nothing planned any more) with more and more
// Services, and what each one more costs: live heap and heap in use after
// a GC, and RSS.
func BenchmarkMemoryPerObject(b *testing.B) {
	o := benchOptions()
	o.provisionDelay, o.lbPublicPrefix = 10*time.Millisecond, netip.MustParsePrefix("198.18.0.0/16")
	// The live heap is read off a heap profile: a fine one, as in the soak.
	o.extraEnv = []string{"GODEBUG=memprofilerate=8192"}
	e := newEnv(b, o)
	e.nodeA()
	var last sample
	created := 0
	for _, n := range memoryServices(b) {
		inParallel(n-created, 20, func(i int) {
			_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(b), lbService(fmt.Sprintf("m%05d", created+i), 80), metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		})
		for i := created; i < n; i++ {
			e.waitIngressFast(fmt.Sprintf("m%05d", i), 20*time.Minute)
		}
		// Steady: no terraform process for 5 s.
		procs, since := e.procs.Total(b), time.Now()
		testkit.EventuallyEvery(b, 5*time.Minute, time.Second, "the controller idle for 5 s", func() error {
			if p := e.procs.Total(b); p != procs {
				procs, since = p, time.Now()
			}
			if time.Since(since) < 5*time.Second {
				return fmt.Errorf("a terraform process %s ago", time.Since(since).Round(time.Second))
			}
			return nil
		})
		s := e.sampleCCM(b)
		b.ReportMetric(s.heap, fmt.Sprintf("live-heap-MiB@%d", n))
		b.ReportMetric(s.heapInUse, fmt.Sprintf("heap-in-use-MiB@%d", n))
		b.ReportMetric(s.rss, fmt.Sprintf("rss-MiB@%d", n))
		if created > 0 {
			per := func(f func(sample) float64) float64 { return (f(s) - f(last)) * 1024 / float64(n-created) }
			b.ReportMetric(per(func(s sample) float64 { return s.heap }), fmt.Sprintf("live-heap-KiB/service@%d-%d", created, n))
			b.ReportMetric(per(func(s sample) float64 { return s.rss }), fmt.Sprintf("rss-KiB/service@%d-%d", created, n))
		}
		b.Logf("%d Services: live heap %.1f MiB, heap in use %.1f MiB, RSS %.1f MiB; in-memory structures:\n%s", n, s.heap, s.heapInUse, s.rss, entriesTable(last, s))
		last, created = s, n
	}
}
