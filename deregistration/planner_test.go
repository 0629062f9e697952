package deregistration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// node is a Ready, schedulable node named name.
func node(name string, mods ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, m := range mods {
		m(n)
	}
	return n
}

func drained(n *corev1.Node) {
	n.Spec.Unschedulable = true
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: DrainTaint, Effect: corev1.TaintEffectPreferNoSchedule})
}

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func TestReason(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		mod  func(*corev1.Node)
		want string
	}{
		{"ready and schedulable", func(*corev1.Node) {}, ""},
		{"cordoned only: maintenance, keeps serving", func(n *corev1.Node) { n.Spec.Unschedulable = true }, ""},
		{"drain taint on a schedulable node, PreferNoSchedule", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: DrainTaint, Effect: corev1.TaintEffectPreferNoSchedule}}
		}, ""},
		{"cordon and drain taint", drained, ReasonDrain},
		{"Karpenter's disruption taint (NoSchedule) alone", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}}
		}, ReasonDrain},
		{"another NoSchedule taint", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
		}, ""},
		{"autoscaler", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "ToBeDeletedByClusterAutoscaler", Effect: corev1.TaintEffectNoSchedule}}
		}, ReasonAutoscaler},
		{"shutdown", func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/shutdown", Effect: corev1.TaintEffectNoSchedule}}
		}, ReasonShutdown},
		{"exclude label", func(n *corev1.Node) { n.Labels[corev1.LabelNodeExcludeBalancers] = "" }, ReasonExcluded},
		{"exclude label false", func(n *corev1.Node) { n.Labels[corev1.LabelNodeExcludeBalancers] = "false" }, ""},
		{"being deleted", func(n *corev1.Node) { n.DeletionTimestamp = &now }, ReasonDeleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reason(node("n", tc.mod), DefaultDrainTaints); got != tc.want {
				t.Errorf("Reason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFloor(t *testing.T) {
	for _, tc := range []struct {
		share      float64
		base, want int
	}{{0.5, 10, 5}, {0.5, 11, 6}, {0.5, 1, 1}, {0, 10, 1}, {0, 0, 0}, {1, 3, 3}, {0.3, 10, 3}} {
		if got := floor(tc.share, tc.base); got != tc.want {
			t.Errorf("floor(%v, %d) = %d, want %d", tc.share, tc.base, got, tc.want)
		}
	}
}

// cands are candidates with the ids of their names.
func cands(nodes ...*corev1.Node) []Candidate {
	var out []Candidate
	for _, n := range nodes {
		out = append(out, Candidate{Node: n, ID: "i-" + n.Name})
	}
	return out
}

func ids(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, "i-"+n)
	}
	slices.Sort(out)
	return out
}

func names(ds []Departure) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Node)
	}
	return out
}

func planner(share float64, settle time.Duration) (*Planner, *time.Time) {
	p := New(Settings{DrainTaints: DefaultDrainTaints, MinHealthyShare: share, SettleTime: settle})
	clock := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return clock }
	return p, &clock
}

func TestOneNodeLeaves(t *testing.T) {
	p, _ := planner(0.5, 10*time.Second)
	nodes := []*corev1.Node{node("a"), node("b", drained), node("c")}
	d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b", "c"))
	if !slices.Equal(d.Targets, ids("a", "c")) || !slices.Equal(names(d.Removed), []string{"b"}) || len(d.Waiting) != 0 {
		t.Fatalf("decision = %+v, want b removed, a and c kept", d)
	}
	if d.Removed[0].Reason != ReasonDrain || d.Base != 3 || d.Floor != 2 || d.Healthy != 2 {
		t.Errorf("decision = %+v", d)
	}
	// A leaving node that is not a target is not added.
	if d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "c")); !slices.Equal(d.Targets, ids("a", "c")) || len(d.Removed) != 0 {
		t.Errorf("next round = %+v", d)
	}
}

// A rotation: ten nodes leave at once; half stay for the floor, the
// earliest to leave go first; replacements let the rest go, a wave each.
func TestWavesKeepTheFloor(t *testing.T) {
	p, clock := planner(0.5, 10*time.Second)
	var old []*corev1.Node
	for i := range 10 {
		old = append(old, node(fmt.Sprintf("old-%d", i)))
	}
	applied := ids("old-0", "old-1", "old-2", "old-3", "old-4", "old-5", "old-6", "old-7", "old-8", "old-9")
	// old-9 is tainted first, the rest a second later.
	drained(old[9])
	p.Observe(old)
	*clock = clock.Add(time.Second)
	for _, n := range old[:9] {
		drained(n)
	}
	d := p.Observe(old).Pool(cands(old...), applied)
	if d.Floor != 5 || len(d.Removed) != 5 || len(d.Waiting) != 5 || d.Healthy != 5 {
		t.Fatalf("first wave = %+v, want 5 removed and 5 waiting", d)
	}
	if d.Removed[0].Node != "old-9" {
		t.Errorf("first removed = %s, want old-9 (the first to leave)", d.Removed[0].Node)
	}
	applied = d.Targets
	// Nothing changes without replacements.
	if d := p.Observe(old).Pool(cands(old...), applied); len(d.Removed) != 0 || !slices.Equal(d.Targets, applied) {
		t.Fatalf("round without replacements = %+v", d)
	}
	// Replacements join one by one; every wave keeps the floor of the
	// pool's Ready nodes, and the last old node goes with the tenth.
	all := slices.Clone(old)
	for i := range 10 {
		fresh := node(fmt.Sprintf("new-%d", i), notReady)
		all = append(all, fresh)
		d := p.Observe(all).Pool(cands(all...), applied)
		if d.Healthy < d.Floor {
			t.Fatalf("replacement %d not Ready: %d healthy under the floor %d", i, d.Healthy, d.Floor)
		}
		applied = d.Targets
		fresh.Status.Conditions[0].Status = corev1.ConditionTrue
		d = p.Observe(all).Pool(cands(all...), applied)
		if d.Healthy < d.Floor || d.Healthy < 5 {
			t.Fatalf("replacement %d: %d healthy, floor %d", i, d.Healthy, d.Floor)
		}
		applied = d.Targets
	}
	want := ids("new-0", "new-1", "new-2", "new-3", "new-4", "new-5", "new-6", "new-7", "new-8", "new-9")
	if !slices.Equal(applied, want) {
		t.Errorf("after the rotation the pool has %v, want only the new nodes", applied)
	}
}

// Deleted old nodes lower the base: a scale-down finishes.
func TestScaleDownFinishes(t *testing.T) {
	p, _ := planner(0.5, 0)
	nodes := []*corev1.Node{node("a"), node("b"), node("c", drained), node("d", drained)}
	d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b", "c", "d"))
	if !slices.Equal(d.Targets, ids("a", "b")) {
		t.Fatalf("targets = %v, want a and b", d.Targets)
	}
}

func TestNeverEmptiedWhileANodeIsReady(t *testing.T) {
	p, _ := planner(0, 0) // waves off: still never empty
	nodes := []*corev1.Node{node("a", drained), node("b", drained)}
	d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b"))
	if len(d.Targets) != 1 || len(d.Waiting) != 1 || d.Empty() {
		t.Fatalf("decision = %+v, want one node kept", d)
	}
	// None Ready: nothing qualifies, the pool empties.
	for _, n := range nodes {
		notReady(n)
	}
	if d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b")); !d.Empty() {
		t.Fatalf("decision = %+v, want empty", d)
	}
	// Unready leaving nodes go even under a floor.
	nodes = []*corev1.Node{node("a"), node("b", drained, notReady)}
	if d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b")); !slices.Equal(d.Targets, ids("a")) {
		t.Fatalf("targets = %v, want a", d.Targets)
	}
}

// A node that flips leaving and back every second for 30 s leaves once
// and returns once, settle time after it stops.
func TestFlappingIsDamped(t *testing.T) {
	p, clock := planner(0.5, 5*time.Second)
	a, b, c := node("a"), node("b"), node("c")
	nodes := []*corev1.Node{a, b, c}
	applied := ids("a", "b", "c")
	changes := 0
	var recheck time.Duration
	for i := range 30 {
		b.Spec.Unschedulable = i%2 == 0
		b.Spec.Taints = nil
		if b.Spec.Unschedulable {
			b.Spec.Taints = []corev1.Taint{{Key: DrainTaint, Effect: corev1.TaintEffectNoSchedule}}
		}
		d := p.Observe(nodes).Pool(cands(nodes...), applied)
		if !slices.Equal(d.Targets, applied) {
			changes++
			applied = d.Targets
		}
		recheck = d.Recheck
		*clock = clock.Add(time.Second)
	}
	if changes != 1 || slices.Contains(applied, "i-b") {
		t.Fatalf("%d changes while flapping, targets %v: want b out once", changes, applied)
	}
	if recheck <= 0 || recheck > 5*time.Second {
		t.Errorf("recheck = %v, want within the settle time", recheck)
	}
	// It stopped leaving at the last step, a second ago.
	*clock = clock.Add(3 * time.Second)
	if d := p.Observe(nodes).Pool(cands(nodes...), applied); slices.Contains(d.Targets, "i-b") {
		t.Fatalf("b back before its settle time: %+v", d)
	}
	*clock = clock.Add(time.Second)
	if d := p.Observe(nodes).Pool(cands(nodes...), applied); !slices.Contains(d.Targets, "i-b") || len(d.Returning) != 0 {
		t.Fatalf("b not back after its settle time: %+v", d)
	}
}

func TestNewNodesJoinAtOnce(t *testing.T) {
	p, _ := planner(0.5, time.Minute)
	nodes := []*corev1.Node{node("a"), node("b")}
	if d := p.Observe(nodes).Pool(cands(nodes...), ids("a")); !slices.Equal(d.Targets, ids("a", "b")) {
		t.Fatalf("targets = %v, want a new node at once", d.Targets)
	}
}

// A node that stops leaving while the floor still holds it stays.
func TestHeldNodeThatReturnsStays(t *testing.T) {
	p, _ := planner(1, time.Minute)
	a, b := node("a", drained), node("b")
	nodes := []*corev1.Node{a, b}
	d := p.Observe(nodes).Pool(cands(nodes...), ids("a", "b"))
	if len(d.Waiting) != 1 {
		t.Fatalf("decision = %+v, want a waiting", d)
	}
	a.Spec.Unschedulable, a.Spec.Taints = false, nil
	if d := p.Observe(nodes).Pool(cands(nodes...), d.Targets); !slices.Equal(d.Targets, ids("a", "b")) {
		t.Fatalf("targets = %v", d.Targets)
	}
}
