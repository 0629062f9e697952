package e2e

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/deregistration"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// editNode changes node name, retrying on conflicts; status edits go
// through UpdateStatus.
func (e *env) editNode(name string, status bool, edit func(*v1.Node)) {
	e.t.Helper()
	nodes := e.kube.CoreV1().Nodes()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(testkit.Context(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(n)
		if status {
			_, err = nodes.UpdateStatus(testkit.Context(e.t), n, metav1.UpdateOptions{})
		} else {
			_, err = nodes.Update(testkit.Context(e.t), n, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		e.t.Fatalf("edit node %s: %v", name, err)
	}
}

// readyNode adds a node, waits for the controller to initialise it, and
// reports it Ready as a kubelet would: a healthy target.
func (e *env) readyNode(name, zone string) { e.readyNodeAfter(name, zone, func(string) {}) }

// readyNodeAfter is readyNode that calls before with the node's instance
// id before it reports Ready.
func (e *env) readyNodeAfter(name, zone string, before func(id string)) {
	e.t.Helper()
	e.addNode(name, zone)
	before(e.instance(name).ID)
	testkit.Eventually(e.t, 30*time.Second, "node "+name+" initialised", func() error {
		n, err := e.kube.CoreV1().Nodes().Get(testkit.Context(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.ProviderID == "" {
			return fmt.Errorf("no providerID yet")
		}
		return nil
	})
	e.editNode(name, true, func(n *v1.Node) {
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	})
}

// drainNode cordons name and adds the drain taint, as a drain starts.
func (e *env) drainNode(name string, on bool) {
	e.t.Helper()
	e.editNode(name, false, func(n *v1.Node) {
		n.Spec.Unschedulable = on
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == deregistration.DrainTaint })
		if on {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: deregistration.DrainTaint, Effect: v1.TaintEffectNoSchedule})
		}
	})
}

// poolsRecord is the target pools' plan record (an empty one before it
// is written).
func (e *env) poolsRecord(t testing.TB) *records.Record {
	all, err := records.NewStore(e.kube, namespace, 0).List(testkit.Context(t))
	testkit.Must(t, err)
	for _, r := range all {
		if r.Object == objectref.TargetPools {
			return r
		}
	}
	return &records.Record{}
}

// applies are the terraform applies the controller ran so far, counted
// from the OS.
func (e *env) applies() int64 { return e.procs.Counts(e.t)["apply"] }

// pools are the cloud's target pools of the cluster.
func (e *env) pools() []exampleapi.TargetPool {
	e.t.Helper()
	l, err := e.api.ListTargetPools(testkit.Context(e.t), exampleapi.TargetPoolFilter{Region: region})
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// A node drained out of 3 leaves every pool in one apply and drains for
// its pool's delay: no new connection reaches it, the open ones stay
// until the delay ends, and its health check fails at once (what
// externalTrafficPolicy Local relies on).
func TestNodeDrainsOutOfEveryPool(t *testing.T) {
	testsize.SkipShort(t, "drains waiting out deregistration delays")
	t.Parallel()
	e := newEnv(t, options{countProcesses: true, targetPools: map[string]any{"deregistrationDelay": "6s"}})
	for i, name := range []string{"node-a", "node-b", "node-c"} {
		e.readyNode(name, "ex-west-1"+string(rune('a'+i)))
	}
	e.editNode("node-a", false, func(n *v1.Node) { n.Labels["role"] = "web" })
	e.editNode("node-b", false, func(n *v1.Node) { n.Labels["role"] = "web" })

	// 16 Services on every node, 4 on role=web (one asking for a longer
	// delay), one of them with externalTrafficPolicy Local.
	var names []string
	for i := range 20 {
		svc := lbService(fmt.Sprintf("drain-%02d", i), 80)
		if i >= 16 {
			svc.Annotations = map[string]string{string(annotations.LBNodeSelector): "role=web"}
		}
		if i == 19 {
			svc.Annotations[string(annotations.LBDeregistrationDelay)] = "9s"
		}
		if i == 0 {
			svc.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		}
		if _, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, svc.Name)
	}
	lbs := map[string]*exampleapi.LoadBalancer{}
	for _, name := range names {
		svc := e.waitIngress(name, 3*time.Minute)
		lb, err := e.cloudLB(svc.Status.LoadBalancer.Ingress[0].IP)
		if err != nil {
			t.Fatal(err)
		}
		lbs[name] = lb
	}
	pools := e.pools()
	if len(pools) != 2 {
		t.Fatalf("%d pools, want 2 (every node, role=web): %+v", len(pools), pools)
	}
	nodeB := e.instance("node-b").ID
	// Connections open on a load balancer of each pool before the drain.
	for _, name := range []string{"drain-00", "drain-19"} {
		testkit.Eventually(t, 30*time.Second, name+" active", func() error {
			_, err := e.api.OpenConnections(testkit.Context(t), lbs[name].ID, 6)
			return err
		})
	}
	before := map[string]exampleapi.TargetConnections{}
	for _, name := range []string{"drain-00", "drain-19"} {
		c, err := e.api.Connections(testkit.Context(t), lbs[name].ID)
		testkit.Must(t, err)
		for _, tc := range c.Targets {
			if tc.ID == nodeB {
				before[name] = tc
			}
		}
		if before[name].Open == 0 {
			t.Fatalf("%s: node-b has no open connection before the drain: %+v", name, c)
		}
	}

	// drain-19's 9s reaches its pool once its own plan is applied (the
	// ask is an output of its root module): one more apply of the pools,
	// before the drain's.
	testkit.Eventually(t, 30*time.Second, "the role=web pool drains for drain-19's 9s", func() error {
		for _, p := range e.pools() {
			if p.Tags["k8s.example.com/node-selector"] == "role=web" && p.DeregistrationDelaySeconds != 9 {
				return fmt.Errorf("%ds", p.DeregistrationDelaySeconds)
			}
		}
		return nil
	})
	applies := e.applies()
	drained := time.Now()
	e.drainNode("node-b", true)
	testkit.Eventually(t, 60*time.Second, "node-b draining in every pool", func() error {
		for _, p := range e.pools() {
			if slices.Contains(p.Targets, nodeB) || !slices.ContainsFunc(p.Draining, func(d exampleapi.DrainingTarget) bool { return d.ID == nodeB }) {
				return fmt.Errorf("pool %s: targets %v, draining %v", p.Name, p.Targets, p.Draining)
			}
		}
		return nil
	})
	for _, p := range e.pools() {
		want := 6 * time.Second
		if p.Tags["k8s.example.com/node-selector"] == "role=web" {
			want = 9 * time.Second // the longest its Services ask
		}
		until := p.Draining[0].Until
		if until.Before(drained.Add(want)) || until.After(time.Now().Add(want)) {
			t.Errorf("pool %s: node-b drains until %s, want %s after the drain started (%s)", p.Name, until.Format(time.RFC3339Nano), want, drained.Format(time.RFC3339Nano))
		}
	}

	// No new connection reaches node-b; its open ones stay.
	for _, name := range []string{"drain-00", "drain-19"} {
		a, err := e.api.OpenConnections(testkit.Context(t), lbs[name].ID, 6)
		testkit.Must(t, err)
		if a.Assigned[nodeB] != 0 {
			t.Errorf("%s: %d new connections went to the draining node-b", name, a.Assigned[nodeB])
		}
		c, err := e.api.Connections(testkit.Context(t), lbs[name].ID)
		testkit.Must(t, err)
		for _, tc := range c.Targets {
			if tc.ID == nodeB && (tc.State != exampleapi.ConnectionDraining || tc.Open != before[name].Open || tc.Assigned != before[name].Assigned) {
				t.Errorf("%s: node-b while draining: %+v, before %+v", name, tc, before[name])
			}
		}
	}
	// Its health check fails at once.
	health, err := e.api.TargetHealth(testkit.Context(t), lbs["drain-00"].ID)
	testkit.Must(t, err)
	if !slices.ContainsFunc(health, func(h exampleapi.TargetHealth) bool { return h.ID == nodeB && h.Health == exampleapi.TargetDraining }) {
		t.Errorf("target health of the Local Service while node-b drains: %+v", health)
	}
	if n := e.applies() - applies; n != 1 {
		t.Errorf("the drain took %d applies, want 1 (the pools')", n)
	}
	// The pools' record lists it draining in both pools (examplectl
	// status), and the audit log has its departures.
	testkit.Eventually(t, 30*time.Second, "node-b draining on the pools' record", func() error {
		var pools []string
		for _, r := range e.poolsRecord(t).Leaving {
			if r.Node == "node-b" && r.State == records.LeavingDraining && r.Instance == nodeB && r.Reason == deregistration.ReasonDrain {
				pools = append(pools, r.Pool)
			}
		}
		if len(pools) != 2 {
			return fmt.Errorf("node-b draining in pools %v of the record", pools)
		}
		return nil
	})
	departures := 0
	for _, a := range e.auditEntries(t) {
		if a.Action == audit.ActionDeregister && a.Details["node"] == "node-b" && a.Details["reason"] == deregistration.ReasonDrain && a.Details["until"] != "" {
			departures++
		}
	}
	if departures != 2 {
		t.Errorf("%d deregister audit lines for node-b, want one per pool", departures)
	}

	// After the delay its connections are closed, and it is gone.
	testkit.Eventually(t, 30*time.Second, "node-b's connections closed after the delay", func() error {
		for _, name := range []string{"drain-00", "drain-19"} {
			c, err := e.api.Connections(testkit.Context(t), lbs[name].ID)
			if err != nil {
				return err
			}
			for _, tc := range c.Targets {
				if tc.ID == nodeB && (tc.Open != 0 || tc.State != exampleapi.ConnectionGone) {
					return fmt.Errorf("%s: node-b %+v", name, tc)
				}
			}
		}
		return nil
	})
	if time.Since(drained) < 9*time.Second {
		t.Errorf("node-b's connections closed %s after the drain started, before the delay", time.Since(drained))
	}
	if n := e.applies() - applies; n != 1 {
		t.Errorf("the drain took %d applies, want 1", n)
	}
}

// A rotation of 10 nodes under a floor of 50%: every node leaves at once,
// half go in the first wave (one apply), the rest as replacements become
// Ready; the pool never has fewer than 5 targets and ends with only the
// new nodes.
func TestRotationKeepsTheFloor(t *testing.T) {
	testsize.SkipShort(t, "a rotation in waves")
	t.Parallel()
	e := newEnv(t, options{countProcesses: true, targetPools: map[string]any{"minHealthyPercent": 50, "deregistrationDelay": "0s"}})
	var old []string
	for i := range 10 {
		name := fmt.Sprintf("old-%d", i)
		e.readyNode(name, "ex-west-1a")
		old = append(old, e.instance(name).ID)
	}
	if _, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("rotated", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitIngress("rotated", 2*time.Minute)
	pool := func() exampleapi.TargetPool {
		ps := e.pools()
		if len(ps) != 1 {
			t.Fatalf("%d pools, want 1", len(ps))
		}
		return ps[0]
	}
	testkit.Eventually(t, 30*time.Second, "10 targets", func() error {
		if p := pool(); len(p.Targets) != 10 {
			return fmt.Errorf("targets %v", p.Targets)
		}
		return nil
	})

	// Watch the pool at every step: never under the floor of 5 healthy
	// targets (old nodes, and new ones once reported Ready).
	var healthy sync.Map
	for _, id := range old {
		healthy.Store(id, true)
	}
	type seen struct {
		version int64
		targets []string
	}
	var history []seen
	stop := make(chan struct{})
	watched := make(chan error, 1)
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ps, err := e.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{Region: region})
			if err != nil || len(ps) != 1 {
				continue
			}
			ready := 0
			for _, id := range ps[0].Targets {
				if _, ok := healthy.Load(id); ok {
					ready++
				}
			}
			if ready < 5 {
				watched <- fmt.Errorf("pool at version %d has %d healthy targets, under the floor of 5: %v", ps[0].Version, ready, ps[0].Targets)
				return
			}
			if len(history) == 0 || history[len(history)-1].version != ps[0].Version {
				history = append(history, seen{ps[0].Version, ps[0].Targets})
			}
		}
	}()

	applies, start := e.applies(), pool().Version
	for i := range 10 {
		e.editNode(fmt.Sprintf("old-%d", i), false, func(n *v1.Node) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "ToBeDeletedByClusterAutoscaler", Effect: v1.TaintEffectNoSchedule})
		})
	}
	testkit.Eventually(t, 30*time.Second, "the first wave", func() error {
		if p := pool(); len(p.Targets) != 5 {
			return fmt.Errorf("targets %v", p.Targets)
		}
		return nil
	})
	if p := pool(); p.Version != start+1 || e.applies()-applies != 1 {
		t.Errorf("the first wave moved the pool from version %d to %d in %d applies, want one", start, p.Version, e.applies()-applies)
	}
	// The nodes that wait say so.
	testkit.Eventually(t, 30*time.Second, "an event on a waiting node", func() error {
		evs, err := e.kube.CoreV1().Events("default").List(testkit.Context(t), metav1.ListOptions{FieldSelector: "reason=DeregistrationWaiting"})
		if err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Kind == "Node" && strings.Contains(ev.Message, "5 leaving node(s) wait: the pool keeps 5 healthy target(s)") {
				return nil
			}
		}
		return fmt.Errorf("%d DeregistrationWaiting events, none on a node saying 5 wait", len(evs.Items))
	})
	var fresh []string
	for i := range 10 {
		name := fmt.Sprintf("new-%d", i)
		e.readyNodeAfter(name, "ex-west-1b", func(id string) {
			healthy.Store(id, true) // before it is Ready: the watch never undercounts
			fresh = append(fresh, id)
		})
	}
	slices.Sort(fresh)
	testkit.Eventually(t, 60*time.Second, "only the new nodes", func() error {
		if p := pool(); !slices.Equal(p.Targets, fresh) {
			return fmt.Errorf("targets %v", p.Targets)
		}
		return nil
	})
	close(stop)
	if err := <-watched; err != nil {
		t.Fatal(err)
	}
	// Each apply is one step of the pool: no apply without a change.
	if steps, n := pool().Version-start, e.applies()-applies; n != steps {
		t.Errorf("%d applies for %d changes of the pool", n, steps)
	}
	t.Logf("rotation: %d applies, pool history %d versions", e.applies()-applies, len(history))
}

// A node that flips between drained and schedulable every second for
// 30 s costs at most 2 applies: out once, back once it has settled.
func TestFlappingNodeIsDamped(t *testing.T) {
	testsize.SkipShort(t, "a flapping node damped over settle times")
	t.Parallel()
	e := newEnv(t, options{countProcesses: true, targetPools: map[string]any{"settleTime": "5s"}})
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		e.readyNode(name, "ex-west-1a")
	}
	if _, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("steady", 80), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitIngress("steady", 2*time.Minute)
	nodeB := e.instance("node-b").ID
	testkit.Eventually(t, 30*time.Second, "3 targets", func() error {
		if p := e.pools(); len(p) != 1 || len(p[0].Targets) != 3 {
			return fmt.Errorf("pools %+v", p)
		}
		return nil
	})
	applies := e.applies()
	for i := range 30 {
		e.drainNode("node-b", i%2 == 0)
		time.Sleep(time.Second) // the flapping itself, not a wait
	}
	testkit.Eventually(t, 30*time.Second, "node-b back", func() error {
		if p := e.pools(); !slices.Contains(p[0].Targets, nodeB) {
			return fmt.Errorf("targets %v", p[0].Targets)
		}
		return nil
	})
	if n := e.applies() - applies; n > 2 {
		t.Errorf("a node flapping for 30 s cost %d applies, want at most 2", n)
	}
}
