package e2e

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/state"
)

// benchPodServices is how many Services BenchmarkPodTargetsRollout rolls:
// $EXAMPLE_BENCH_POD_SERVICES, default 100 (1,000 pods).
func benchPodServices() int { return countFromEnv("EXAMPLE_BENCH_POD_SERVICES", 100) }

const (
	// rolloutReplicas are the pods of each Service's Deployment.
	rolloutReplicas = 10
	// rolloutPort is the pods' port, the targets' (IP:3000).
	rolloutPort = 3000
)

// BenchmarkPodTargetsRollout (issue 56): n Services whose load balancers
// forward to their pods (pod pools, ADR 24), each with a Deployment of 10
// pods, every Deployment rolled at once (a pod template env var changed,
// the default RollingUpdate). No pod process runs: kwok makes pods Ready,
// and no readiness gate holds them. Figures, in one run:
//
//   - applies per pod pool during the roll, counted from the OS (the
//     terraform wrapper logs each process's working directory, the
//     pool's workspace, engine.PodPoolWorkspace): max and mean, goal ≤ 5;
//   - seconds from the last new pod Ready (the last Ready transition
//     among the new pods of every Deployment, as a watch sees it) until
//     every pool's targets in the cloud equal its Service's ready pods'
//     IP:port, goal ≤ 15 s;
//   - CPU per endpoint change: the controller's CPU with its terraform
//     processes' from the roll until it is idle again, over the pod IPs
//     added to or removed from the pools' targets in the cloud (read
//     every 200 ms, each change seen counted).
//
// And what the time went to: when the last old pod left the ready pods
// and the EndpointSlices said so (kube-controller-manager's part), each
// pool's time from its EndpointSlices' last change to its last change in
// the cloud (the controller's: settle, queue, terraform), when every new
// pod was a target, the timelines of three pools: the last to be
// current, the one applied most, the one slowest after its slices; and
// the requests the controller sent the API server per apply, with the
// time they waited on its client's limiter (the chart's --kube-api-qps).
func BenchmarkPodTargetsRollout(b *testing.B) {
	n := benchPodServices()
	o := benchOptions()
	o.workloads = true
	o.provisionDelay, o.lbPublicPrefix = 100*time.Millisecond, netip.MustParsePrefix("198.18.0.0/16")
	e := newEnv(b, o)
	ctx := testkit.Context(b)

	// A node per 5 Services: each node's /24 gives pod IPs, and a roll
	// holds up to 13 pods of a Deployment (25 % surge) and its
	// terminating ones a while. The cloud takes a pod target only inside
	// a route: every node's is applied first.
	nodes := (n + 4) / 5
	for i := range nodes {
		e.addNode(fmt.Sprintf("pt-node-%02d", i), "ex-west-1"+string(rune('a'+i%3)))
	}
	e.waitNodesInitialised(nodes)
	e.waitRoutes(b, nodes)

	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("pt-%03d", i)
	}
	pods := watchRolloutPods(b, e, names)
	start := time.Now()
	inParallel(n, 20, func(i int) {
		if _, err := e.kube.AppsV1().Deployments("default").Create(ctx, rolloutDeployment(names[i], "1"), metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	inParallel(n, 20, func(i int) {
		if _, err := e.kube.CoreV1().Services("default").Create(ctx, rolloutService(names[i]), metav1.CreateOptions{}); err != nil {
			b.Error(err)
		}
	})
	for _, name := range names {
		e.waitIngressFast(name, 20*time.Minute)
	}
	// Every pool holds its Service's 10 pods, and the controller is idle:
	// what follows is the roll's.
	testkit.EventuallyEvery(b, 20*time.Minute, time.Second, "every pool holds its 10 pods", func() error {
		want, done, _ := pods.state("1")
		got, err := e.podPoolTargets(b)
		if err != nil {
			return err
		}
		for _, name := range names {
			if !done[name] || !slices.Equal(got[name], want[name]) {
				return fmt.Errorf("%s: pool %v, ready pods %v", name, got[name], want[name])
			}
		}
		return nil
	})
	b.Logf("%d Services with %d pods each, their pools filled, in %.1f s", n, rolloutReplicas, time.Since(start).Seconds())
	e.waitTerraformIdle(b, 5*time.Second)

	// The roll.
	keys := e.podPoolWorkspaces(b, names)
	procs0, lines0, applying0 := e.procs.Counts(b), len(e.procs.Processes(b)), e.countLog(`"terraform apply starting"`)
	cpu0, metrics0 := e.ccmCPU(), e.metrics(b)
	before, err := e.podPoolTargets(b)
	testkit.Must(b, err)
	began := time.Now()
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"echo","env":[{"name":"VERSION","value":"2"}]}]}}}}`)
	inParallel(n, n, func(i int) {
		if _, err := e.kube.AppsV1().Deployments("default").Patch(ctx, names[i], types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			b.Error(err)
		}
	})
	patched := time.Since(began)

	// The cloud's pools, read until every roll is done and every pool
	// holds its Service's ready pods; each pool's targets as they change.
	type seen struct {
		at      time.Time
		targets []string
	}
	history := map[string][]seen{}
	for name, t := range before {
		history[name] = []seen{{began, t}}
	}
	changes := 0
	testkit.EventuallyEvery(b, 30*time.Minute, 200*time.Millisecond, "every roll done and every pool current", func() error {
		got, err := e.podPoolTargets(b)
		if err != nil {
			return err
		}
		now := time.Now()
		for name, t := range got {
			h := history[name]
			if len(h) == 0 {
				h = []seen{{began, nil}}
			}
			if last := h[len(h)-1].targets; !slices.Equal(last, t) {
				changes += symmetricDifference(last, t)
				history[name] = append(h, seen{now, t})
			}
		}
		want, done, _ := pods.state("2")
		stale := 0
		for _, name := range names {
			if !done[name] {
				return fmt.Errorf("%s: its roll is not done", name)
			}
			if !slices.Equal(got[name], want[name]) {
				stale++
			}
		}
		if stale > 0 {
			return fmt.Errorf("%d of %d pools not current", stale, n)
		}
		return nil
	})
	_, _, lastReady := pods.state("2")
	e.waitTerraformIdle(b, 5*time.Second)
	cpu := e.ccmCPU() - cpu0

	// When each pool became current (its last change in the cloud), and
	// what it waited for: its last new pod Ready, its last old pod out of
	// its ready pods, its EndpointSlices saying so.
	fromPods, sliceChanges := pods.final()
	fromSlices := map[string]wanted{}
	for name, h := range sliceChanges {
		fromSlices[name] = h[len(h)-1]
	}
	var rolled, podsFinal, slicesFinal, current, joined time.Time
	ownLag, ctrlLag := make([]float64, 0, n), make([]float64, 0, n)
	slowest, laggiest, lag := "", "", time.Duration(0)
	for _, name := range names {
		h := history[name]
		at := h[len(h)-1].at
		rolled, podsFinal, slicesFinal = latest(rolled, lastReady[name]), latest(podsFinal, fromPods[name].since), latest(slicesFinal, fromSlices[name].since)
		if at.After(current) {
			current, slowest = at, name
		}
		// Since when the pool has held every pod it ends with, the new
		// ones: the old ones may still have been leaving.
		i := len(h) - 1
		for i > 0 && removed(h[len(h)-1].targets, h[i-1].targets) == 0 {
			i--
		}
		joined = latest(joined, h[i].at)
		ownLag = append(ownLag, at.Sub(lastReady[name]).Seconds())
		ctrlLag = append(ctrlLag, at.Sub(fromSlices[name].since).Seconds())
		if d := at.Sub(fromSlices[name].since); d > lag {
			laggiest, lag = name, d
		}
		if !slices.Equal(fromSlices[name].targets, h[len(h)-1].targets) {
			b.Errorf("%s: its pool holds %v, its EndpointSlices' ready endpoints are %v", name, h[len(h)-1].targets, fromSlices[name].targets)
		}
	}
	slices.Sort(ownLag)
	slices.Sort(ctrlLag)
	net := 0
	after, err := e.podPoolTargets(b)
	testkit.Must(b, err)
	for _, name := range names {
		net += symmetricDifference(before[name], after[name])
	}

	// Applies by pool, from the OS.
	perPool := map[string]int{}
	for _, p := range e.procs.Processes(b)[lines0:] {
		if p.Command == "apply" {
			if name, ok := keys[filepath.Base(p.Dir)]; ok {
				perPool[name]++
			}
		}
	}
	applies := make([]int, 0, n)
	total := 0
	for _, name := range names {
		applies = append(applies, perPool[name])
		total += perPool[name]
	}
	hist := map[int]int{}
	for _, a := range applies {
		hist[a]++
	}
	var spread []string
	for _, a := range slices.Sorted(maps.Keys(hist)) {
		spread = append(spread, fmt.Sprintf("%d applies: %d pools", a, hist[a]))
	}
	procs := e.procs.Counts(b)
	for k, v := range procs0 {
		procs[k] -= v
	}
	requests, limited := clientRequests(metrics0, e.metrics(b))

	rel := func(t time.Time) float64 { return t.Sub(began).Seconds() }
	b.ReportMetric(rel(rolled), "roll-last-ready-s")
	b.ReportMetric(current.Sub(rolled).Seconds(), "targets-current-after-last-ready-s")
	b.ReportMetric(joined.Sub(rolled).Seconds(), "new-pods-targets-after-last-ready-s")
	b.ReportMetric(ctrlLag[len(ctrlLag)/2], "pool-current-after-slices-p50-s")
	b.ReportMetric(ctrlLag[len(ctrlLag)-1], "pool-current-after-slices-max-s")
	b.ReportMetric(float64(slices.Max(applies)), "applies/pool-max")
	b.ReportMetric(float64(total)/float64(n), "applies/pool-mean")
	b.ReportMetric(float64(changes), "endpoint-changes")
	b.ReportMetric(cpu.Seconds()/float64(changes), "cpu-s/endpoint-change")
	b.ReportMetric(cpu.Seconds()/float64(total), "cpu-s/apply")
	b.ReportMetric(requests/float64(total), "api-requests/apply")
	b.ReportMetric(limited, "client-limiter-wait-s")
	b.Logf("roll of %d Deployments of %d pods, patched in %.1f s; from the patches: last new pod Ready +%.1f s, last old pod out of the ready pods +%.1f s, "+
		"EndpointSlices final +%.1f s, every pool current +%.1f s (%s last): %.1f s after the last pod Ready (goal ≤ 15 s); every new pod a target +%.1f s, %.1f s after it",
		n, rolloutReplicas, patched.Seconds(), rel(rolled), rel(podsFinal), rel(slicesFinal), rel(current), slowest, current.Sub(rolled).Seconds(), rel(joined), joined.Sub(rolled).Seconds())
	b.Logf("each pool current after its own last pod Ready: p50 %.1f s, max %.1f s; after its EndpointSlices were final (settle, queue, terraform): p50 %.1f s, max %.1f s",
		ownLag[len(ownLag)/2], ownLag[len(ownLag)-1], ctrlLag[len(ctrlLag)/2], ctrlLag[len(ctrlLag)-1])
	b.Logf("applies per pool during the roll (from the OS): %s; %d in all, mean %.2f, max %d (goal ≤ 5); %d started with changes in the controller's log; "+
		"%.1f requests to the API server per apply, %.1f s waited on the client's limiter (--kube-api-qps) in all",
		strings.Join(spread, ", "), total, float64(total)/float64(n), slices.Max(applies), e.countLog(`"terraform apply starting"`)-applying0,
		requests/float64(total), limited)
	b.Logf("endpoint changes seen in the cloud: %d (net, before against after: %d; pods that joined or left: %d); controller CPU with terraform %.1f s: %.4f s per change, %.3f s per apply",
		changes, net, 2*rolloutReplicas*n, cpu.Seconds(), cpu.Seconds()/float64(changes), cpu.Seconds()/float64(total))
	printCounts(b, "roll", procs)
	// What the pools of the last to be current, of the one applied most
	// and of the one slowest after its EndpointSlices did, from the
	// patches: each change of the ready endpoints, each apply, each
	// change in the cloud.
	workspaces := map[string]string{}
	for key, name := range keys {
		workspaces[name] = key
	}
	mostApplied := names[slices.Index(applies, slices.Max(applies))]
	for _, p := range []struct{ what, name string }{{"the last pool to be current", slowest}, {"the pool applied most", mostApplied}, {"the pool slowest after its EndpointSlices", laggiest}} {
		events := []timed{{at: lastReady[p.name], what: "last new pod Ready"}}
		for i, w := range sliceChanges[p.name] {
			if i > 0 && !w.since.Before(began) {
				prev := sliceChanges[p.name][i-1].targets
				events = append(events, timed{at: w.since, slices: true, added: removed(w.targets, prev), removed: removed(prev, w.targets), ready: len(w.targets)})
			}
		}
		for _, c := range history[p.name][1:] {
			events = append(events, timed{at: c.at, what: fmt.Sprintf("%d targets in the cloud", len(c.targets))})
		}
		b.Logf("%s, %s's (%d applies): %s", p.what, p.name, perPool[p.name], e.poolTimeline(b, workspaces[p.name], began, events))
	}
	b.ReportMetric(e.ccmRSSMiB(), "ccm-peak-rss-MiB")
}

// rolloutService is LoadBalancer Service name forwarding port 80 to its
// pods' port "http" directly (target-type ip): the load balancer's rule
// forwards to the Service port's pod pool.
func rolloutService(name string) *v1.Service {
	svc := lbService(name, 80)
	svc.Annotations = map[string]string{"loadbalancer.example.com/target-type": "ip"}
	svc.Spec.Ports[0].TargetPort = intstr.FromString("http")
	return svc
}

// rolloutDeployment is Deployment name of 10 pods labelled app=name,
// serving on port "http" (3000), their template's VERSION version.
func rolloutDeployment(name, version string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](rolloutReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "echo", Image: clustertraffic.EchoImage,
					Env:   []v1.EnvVar{{Name: "VERSION", Value: version}},
					Ports: []v1.ContainerPort{{Name: "http", ContainerPort: rolloutPort}}}}},
			},
		},
	}
}

// rolloutPods watches the pods of the benchmark's Deployments (when each
// was first seen Ready) and their Services' EndpointSlices: when the
// targets each says a Service's pool should hold last changed.
type rolloutPods struct {
	pods     cache.Indexer
	slices   cache.Indexer
	services map[string]bool
	mu       sync.Mutex
	readyAt  map[types.UID]time.Time
	// fromPods are each Service's targets as its ready pods give them,
	// and since when; fromSlices as its EndpointSlices' ready endpoints
	// give them, each change.
	fromPods   map[string]wanted
	fromSlices map[string][]wanted
}

// wanted are targets since a time.
type wanted struct {
	targets []string
	since   time.Time
}

// byService indexes pods by their app label, slices by their Service.
const byService = "service"

// watchRolloutPods watches the pods and EndpointSlices of Services names
// in default, until the benchmark ends.
func watchRolloutPods(b *testing.B, e *env, names []string) *rolloutPods {
	f := informers.NewSharedInformerFactoryWithOptions(e.kube, 0, informers.WithNamespace("default"))
	pods, eps := f.Core().V1().Pods().Informer(), f.Discovery().V1().EndpointSlices().Informer()
	testkit.Must(b, pods.AddIndexers(cache.Indexers{byService: func(obj any) ([]string, error) {
		return []string{obj.(*v1.Pod).Labels["app"]}, nil
	}}))
	testkit.Must(b, eps.AddIndexers(cache.Indexers{byService: func(obj any) ([]string, error) {
		return []string{obj.(*discoveryv1.EndpointSlice).Labels[discoveryv1.LabelServiceName]}, nil
	}}))
	w := &rolloutPods{pods: pods.GetIndexer(), slices: eps.GetIndexer(), services: map[string]bool{}, readyAt: map[types.UID]time.Time{},
		fromPods: map[string]wanted{}, fromSlices: map[string][]wanted{}}
	for _, name := range names {
		w.services[name] = true
	}
	// Each event is looked at as it is handled, in order.
	on := func(inf cache.SharedIndexInformer, seen func(obj any)) {
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, cur any) { seen(cur) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				seen(obj)
			}})
		testkit.Must(b, err)
	}
	on(pods, func(obj any) {
		pod, ok := obj.(*v1.Pod)
		if !ok || !w.services[pod.Labels["app"]] {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.readyAt[pod.UID]; !ok && podReady(pod) {
			w.readyAt[pod.UID] = now
		}
		name := pod.Labels["app"]
		if cur, ok := w.fromPods[name]; !ok || !slices.Equal(cur.targets, w.podTargets(name)) {
			w.fromPods[name] = wanted{w.podTargets(name), now}
		}
	})
	on(eps, func(obj any) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok || !w.services[s.Labels[discoveryv1.LabelServiceName]] {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		name := s.Labels[discoveryv1.LabelServiceName]
		h, targets := w.fromSlices[name], w.sliceTargets(name)
		if len(h) == 0 || !slices.Equal(h[len(h)-1].targets, targets) {
			w.fromSlices[name] = append(h, wanted{targets, now})
		}
	})
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, pods.HasSynced, eps.HasSynced) {
		b.Fatal("the pods' and EndpointSlices' informers did not sync")
	}
	return w
}

// podTargets are the IP:port of Service name's ready pods, sorted.
func (w *rolloutPods) podTargets(name string) []string {
	objs, _ := w.pods.ByIndex(byService, name)
	var out []string
	for _, obj := range objs {
		pod := obj.(*v1.Pod)
		if ip, err := netip.ParseAddr(pod.Status.PodIP); err == nil && podReady(pod) {
			out = append(out, exampleapi.IPTarget(ip, rolloutPort))
		}
	}
	slices.Sort(out)
	return out
}

// sliceTargets are the IP:port of the ready endpoints, not terminating,
// of Service name's EndpointSlices, sorted.
func (w *rolloutPods) sliceTargets(name string) []string {
	objs, _ := w.slices.ByIndex(byService, name)
	var out []string
	for _, obj := range objs {
		s := obj.(*discoveryv1.EndpointSlice)
		if len(s.Ports) == 0 || s.Ports[0].Port == nil {
			continue
		}
		for _, ep := range s.Endpoints {
			c := ep.Conditions
			if c.Terminating != nil && *c.Terminating || c.Ready != nil && !*c.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil {
					out = append(out, exampleapi.IPTarget(ip, int(*s.Ports[0].Port)))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// state is, by Service: the IP:port of its ready pods, sorted; whether its
// Deployment has rolled to version (10 pods, all of it, all Ready, none
// other left but terminating ones); when its last pod of version was
// first seen Ready.
func (w *rolloutPods) state(version string) (targets map[string][]string, done map[string]bool, lastReady map[string]time.Time) {
	targets, done, lastReady = map[string][]string{}, map[string]bool{}, map[string]time.Time{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.services {
		targets[name] = w.podTargets(name)
		objs, _ := w.pods.ByIndex(byService, name)
		live, fresh := 0, 0
		for _, obj := range objs {
			pod := obj.(*v1.Pod)
			if pod.DeletionTimestamp != nil {
				continue
			}
			live++
			if podReady(pod) && slices.Contains(pod.Spec.Containers[0].Env, v1.EnvVar{Name: "VERSION", Value: version}) {
				fresh++
				if at := w.readyAt[pod.UID]; at.After(lastReady[name]) {
					lastReady[name] = at
				}
			}
		}
		done[name] = live == rolloutReplicas && fresh == rolloutReplicas
	}
	return targets, done, lastReady
}

// final are each Service's targets as its pods give them, since when,
// and each change of them as its EndpointSlices give them.
func (w *rolloutPods) final() (fromPods map[string]wanted, fromSlices map[string][]wanted) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fromSlices = map[string][]wanted{}
	for name, h := range w.fromSlices {
		fromSlices[name] = slices.Clone(h)
	}
	return maps.Clone(w.fromPods), fromSlices
}

func podReady(pod *v1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.PodIP != "" && slices.ContainsFunc(pod.Status.Conditions, func(c v1.PodCondition) bool {
		return c.Type == v1.PodReady && c.Status == v1.ConditionTrue
	})
}

// podPoolTargets are the targets of the cloud's pools of target type ip,
// sorted, by the Service they stand for.
func (e *env) podPoolTargets(t testing.TB) (map[string][]string, error) {
	l, err := e.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{Region: region})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range l {
		if p.TargetTypeOrDefault() == exampleapi.TargetTypeIP {
			out[p.Tags[exampleapi.TagServiceName]] = slices.Sorted(slices.Values(p.Targets))
		}
	}
	return out, nil
}

// podPoolWorkspaces are the workspaces of the pod pools of port 80/TCP of
// Services names in default, to their Services: engine.PodPoolWorkspace
// with the env's cluster and state backend.
func (e *env) podPoolWorkspaces(t testing.TB, names []string) map[string]string {
	states, err := state.New(state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: e.stateDir}}, state.Options{Offline: true})
	testkit.Must(t, err)
	eng := engine.New(renderer.Config{ClusterID: "e2e", Region: region}, states, nil, engine.Options{})
	out := map[string]string{}
	for _, name := range names {
		key, err := eng.PodPoolWorkspace(objectref.PodPool("default", name, 80, v1.ProtocolTCP))
		testkit.Must(t, err)
		out[key] = name
	}
	return out
}

// waitRoutes waits until the cloud routes n nodes' pod CIDRs.
func (e *env) waitRoutes(t testing.TB, n int) {
	nets, err := e.api.ListNetworks(testkit.Context(t), region, "default")
	testkit.Must(t, err)
	testkit.EventuallyEvery(t, 5*time.Minute, time.Second, "a route per node", func() error {
		rs, err := e.api.ListRoutes(testkit.Context(t), nets[0].ID)
		if err != nil {
			return err
		}
		if len(rs) != n {
			return fmt.Errorf("%d routes of %d", len(rs), n)
		}
		return nil
	})
}

// waitTerraformIdle waits until the controller has started no terraform
// process for quiet.
func (e *env) waitTerraformIdle(t testing.TB, quiet time.Duration) {
	procs, since := e.procs.Total(t), time.Now()
	testkit.EventuallyEvery(t, 10*time.Minute, time.Second, fmt.Sprintf("the controller idle for %s", quiet), func() error {
		if p := e.procs.Total(t); p != procs {
			procs, since = p, time.Now()
		}
		if time.Since(since) < quiet {
			return fmt.Errorf("a terraform process %s ago", time.Since(since).Round(time.Second))
		}
		return nil
	})
}

// symmetricDifference counts what is in one sorted list and not the other.
func symmetricDifference(a, b []string) int { return removed(a, b) + removed(b, a) }

// timed is something that happened at a time: what, or a change of the
// ready endpoints (slices).
type timed struct {
	at                    time.Time
	what                  string
	slices                bool
	added, removed, ready int
}

// poolTimeline is events and the applies of workspace key (the
// controller's log), from began, in order.
func (e *env) poolTimeline(t testing.TB, key string, began time.Time, events []timed) string {
	data, err := os.ReadFile(e.ccmLog)
	testkit.Must(t, err)
	for line := range strings.Lines(string(data)) {
		if !strings.Contains(line, `workspace="`+key+`"`) {
			continue
		}
		var what string
		switch {
		case strings.Contains(line, `"terraform apply starting"`):
			what = "apply started"
		case strings.Contains(line, `"terraform apply"`):
			what = "apply done"
		default:
			continue
		}
		if at, ok := klogTime(line, began); ok && !at.Before(began) {
			events = append(events, timed{at: at, what: what})
		}
	}
	slices.SortStableFunc(events, func(a, b timed) int { return a.at.Compare(b.at) })
	// Changes of the ready endpoints in a row are one: from the first to
	// the last, what they added and removed.
	var parts []string
	for i := 0; i < len(events); i++ {
		ev := events[i]
		if !ev.slices {
			parts = append(parts, fmt.Sprintf("+%.1f %s", ev.at.Sub(began).Seconds(), ev.what))
			continue
		}
		first, sum := ev, ev
		for i+1 < len(events) && events[i+1].slices {
			i++
			sum.at, sum.added, sum.removed, sum.ready = events[i].at, sum.added+events[i].added, sum.removed+events[i].removed, events[i].ready
		}
		when := fmt.Sprintf("+%.1f", first.at.Sub(began).Seconds())
		if sum.at.After(first.at) {
			when += fmt.Sprintf("..%.1f", sum.at.Sub(began).Seconds())
		}
		parts = append(parts, fmt.Sprintf("%s endpoints +%d -%d: %d ready", when, sum.added, sum.removed, sum.ready))
	}
	return strings.Join(parts, ", ")
}

// removed counts what is in sorted list a and not in b.
func removed(a, b []string) int {
	n := 0
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			n++
		}
	}
	return n
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// klogTime reads the time of a klog line ("I1203 08:30:01.123456 ..."),
// which has no year: near's.
func klogTime(line string, near time.Time) (time.Time, bool) {
	if len(line) < 21 {
		return time.Time{}, false
	}
	at, err := time.ParseInLocation("0102 15:04:05.000000", line[1:21], time.Local)
	if err != nil {
		return time.Time{}, false
	}
	return at.AddDate(near.Year(), 0, 0), true
}
