package e2e

import (
	"fmt"
	"maps"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/shard"
)

// Three replicas share the Services (docs/adr/0017): every Service
// converges; each replica applies a fair share of them, as the audit log's
// replica field says; no workspace is applied by two replicas. A replica
// killed during a burst of creates loses its shards within its lease plus
// 10 s, and every Service converges on the others, without a duplicate or
// an orphan in the cloud; a replica added afterwards gets its share, and no
// Service is applied twice.
//
// make test runs it with 24 + 12 + 12 Services, named so that each
// shard holds 2 of the first set and 1 of each other (shardSets: a fair
// share is then exactly 8 of 24, an unfair one 4 or 12,
// TestShardSpreadSizes); make bench runs the full 300 + 100 + 30
// ($EXAMPLE_SCALE=full), numbered.
func TestShardsSpreadServices(t *testing.T) {
	t.Parallel()
	firstSet, burstSet, lateSet := shardSets()
	first, burst, late := len(firstSet), len(burstSet), len(lateSet)
	testsize.SkipShort(t, fmt.Sprintf("%d Services over three replicas", first+burst+late))
	e := newEnv(t, options{replicas: 3, state: "kubernetes", lbPublicPrefix: netip.MustParsePrefix("198.18.0.0/22")})
	e.keepOnFailure(t, "shards")
	e.addNode("node-a", "ex-west-1a")
	e.waitShards(t, 3)

	e.createNamed(t, firstSet)
	for _, name := range firstSet {
		e.waitIngress(name, 5*time.Minute)
	}
	e.shardMetricsSettle(t, first)
	applied := e.appliesByReplica(t)
	for _, r := range e.replicas {
		share := float64(len(applied[r.name])) / float64(first)
		t.Logf("replica %s applied %d of %d Services (%.0f %%)", r.name, len(applied[r.name]), first, 100*share)
		if share < fairShareMin || share > fairShareMax {
			t.Errorf("replica %s applied %.0f %% of the Services, want %.0f-%.0f %%", r.name, 100*share, 100*fairShareMin, 100*fairShareMax)
		}
	}

	// A burst of creates, and a replica killed in its middle.
	var wg sync.WaitGroup
	wg.Go(func() { e.createNamed(t, burstSet) })
	testkit.Eventually(t, time.Minute, "a few of the burst created", func() error {
		l, err := e.kube.CoreV1().Services("default").List(testkit.Context(t), metav1.ListOptions{})
		if err != nil || len(l.Items) < first+burst/5 {
			return fmt.Errorf("%d Services (%v)", len(l.Items), err)
		}
		return nil
	})
	killed := e.replicas[2]
	e.killCCM(killed.cmd)
	at := time.Now()
	wg.Wait()
	e.waitShardsWithout(t, killed.name, 4*time.Second+10*time.Second)
	t.Logf("the killed replica's shards were taken %s after the kill", time.Since(at).Round(100*time.Millisecond))
	for _, name := range burstSet {
		e.waitIngress(name, 5*time.Minute)
	}
	if orphans, dups := e.cloudAgainst(t, e.serviceUIDs(t)); len(orphans) > 0 || len(dups) > 0 {
		t.Errorf("cloud: orphans %v, duplicates %v", orphans, dups)
	}

	// A replica joins: it takes its share, and nothing is applied again.
	e.startSharded(killed)
	e.waitShards(t, 3)
	e.createNamed(t, lateSet)
	for _, name := range lateSet {
		e.waitIngress(name, 5*time.Minute)
	}
	twice := map[string][]string{}
	for replica, workspaces := range e.appliesByReplica(t) {
		for _, w := range workspaces {
			twice[w] = append(twice[w], replica)
		}
	}
	// The kill may cut an apply short: the replica that takes the Service
	// over records it interrupted (docs/review.md#an-apply-cut-short), and
	// every apply started has its outcome.
	interrupted, outcomes := map[string]bool{}, map[string]bool{}
	for _, a := range e.auditEntries(t) {
		if a.Action == "apply" && a.Outcome != "started" {
			outcomes[a.PlanID] = true
		}
		if a.Action == "apply" && a.Outcome == "interrupted" && twice[a.Workspace] == nil {
			interrupted[a.Workspace] = true
		}
	}
	for _, a := range e.auditEntries(t) {
		if a.Action == "apply" && a.Outcome == "started" && !outcomes[a.PlanID] {
			t.Errorf("the apply of %s (%s) started on %s and has no outcome", a.PlanID, a.Workspace, a.Replica)
		}
	}
	if len(interrupted) > 0 {
		t.Logf("applies the kill interrupted, complete: %v", slices.Sorted(maps.Keys(interrupted)))
	}
	if len(interrupted) > 4 { // --concurrent-service-syncs
		t.Errorf("%d applies interrupted by the kill, want at most the replica's 4 workers", len(interrupted))
	}
	for w, rs := range twice {
		if len(rs) > 1 {
			t.Errorf("workspace %s applied %d times, by %v", w, len(rs), rs)
			for _, a := range e.auditEntries(t) {
				if a.Workspace == w {
					t.Logf("  %s %s %s by %s: %s", a.Action, a.Outcome, a.PlanID, a.Replica, a.Summary)
				}
			}
		}
	}
	if got, want := len(twice)+len(interrupted), first+burst+late; got != want {
		t.Errorf("%d workspaces applied (%d of them by an interrupted apply), want %d", got, len(interrupted), want)
	}
	// Of the Services created after it joined: what it applied before
	// its kill does not count.
	joined := slices.DeleteFunc(e.appliesByReplica(t)[killed.name], func(w string) bool { return !strings.HasPrefix(w, lateWorkspaces) })
	if len(joined) == 0 {
		t.Errorf("the replica that joined applied none of the %d Services created after it", late)
	}
	// What it took over was applied before: it ran no terraform plan for
	// any of it, the records told it so.
	data, err := os.ReadFile(killed.log)
	testkit.Must(t, err)
	for _, m := range planRE.FindAllStringSubmatch(string(data), -1) {
		if !strings.HasPrefix(m[1], lateWorkspaces) {
			t.Errorf("the replica that joined planned %s, applied before it joined", m[1])
		}
	}
}

// lateWorkspaces starts the workspace names of the Services created after
// the killed replica joined again.
const lateWorkspaces = "e2e-service-default-late-"

// A replica's fair share: 4 of the 12 shards. The bounds hold for any 4
// shards of the names shardSets gives and fail a replica holding 2 or
// fewer, or 6 or more (checkShardSpread).
const fairShareMin, fairShareMax = 0.25, 0.42

// shardSets are TestShardsSpreadServices' Services: the first set, the
// burst a replica is killed in, those created after it joined again.
// make test's are the fewest that prove the spread: names chosen by the
// shard they hash to (as the controller hashes them), 2 per shard in the
// first set and 1 in each other; $EXAMPLE_SCALE=full (make bench) gives
// the full ones, numbered.
func shardSets() (first, burst, late []string) {
	if testsize.AtFull() {
		return numbered("web", 300), numbered("burst", 100), numbered("late", 30)
	}
	return perShard("web", 2), perShard("burst", 1), perShard("late", 1)
}

// shards is how many shards the controller spreads Services over.
const shards = 12

// shardOf is the shard of a Service of the default namespace.
func shardOf(name string) int {
	return shard.Of(objectref.Ref{Kind: objectref.KindService, Namespace: "default", Name: name}.Key(), shards)
}

// numbered are prefix-000 to prefix-(n-1).
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// perShard are the first numbered names of prefix that give each shard
// exactly k.
func perShard(prefix string, k int) []string {
	var out []string
	held := make([]int, shards)
	for i := 0; len(out) < k*shards; i++ {
		name := fmt.Sprintf("%s-%03d", prefix, i)
		if s := shardOf(name); held[s] < k {
			held[s]++
			out = append(out, name)
		}
	}
	return out
}

// TestShardSpreadSizes checks, without a process, that both sizes of
// TestShardsSpreadServices (make test's and make bench's) can prove what
// it asserts, from how the names hash over the 12 shards (FNV, as the
// controller does): any 4 shards hold a share of the first set within
// the fair-share bounds (it cannot fail by the names), any 2 hold less
// and any 6 more (it fails a replica with an unfair share); every shard
// holds a Service of the burst (the killed replica had some to hand
// over) and any 4 shards a late one (the replica that joined has some
// to apply). A count or a name changed is checked here.
func TestShardSpreadSizes(t *testing.T) {
	for _, scale := range []string{"", testsize.Full} {
		t.Setenv(testsize.Env, scale)
		first, burst, late := shardSets()
		checkShardSpread(t, first, burst, late)
	}
}

// checkShardSpread is TestShardSpreadSizes' check of one size.
func checkShardSpread(t *testing.T, first, burst, late []string) {
	t.Helper()
	counts := func(names []string) []int {
		c := make([]int, shards)
		for _, name := range names {
			c[shardOf(name)]++
		}
		return c
	}
	// sums are the least and the most k shards hold.
	sums := func(c []int, k int) (least, most int) {
		s := slices.Sorted(slices.Values(c))
		for i := range k {
			least += s[i]
			most += s[len(s)-1-i]
		}
		return least, most
	}
	share := func(n int) float64 { return float64(n) / float64(len(first)) }
	web := counts(first)
	least4, most4 := sums(web, 4)
	_, most2 := sums(web, 2)
	least6, _ := sums(web, 6)
	if share(least4) < fairShareMin || share(most4) > fairShareMax || share(most2) >= fairShareMin || share(least6) <= fairShareMax {
		t.Fatalf("%d Services over the shards %v: 4 shards hold %.2f-%.2f, 2 at most %.2f, 6 at least %.2f: the fair share (%.2f-%.2f) is not what tells them apart",
			len(first), web, share(least4), share(most4), share(most2), share(least6), fairShareMin, fairShareMax)
	}
	if b := counts(burst); slices.Min(b) == 0 {
		t.Fatalf("%d burst Services leave a shard empty: %v", len(burst), b)
	}
	if l, _ := sums(counts(late), 4); l == 0 {
		t.Fatalf("%d late Services leave 4 shards empty", len(late))
	}
}

// shardMetricsSettle waits until the replicas' /metrics agree with a
// converged set: every shard owned once, every queue empty, at least
// changes applied in all.
func (e *env) shardMetricsSettle(t testing.TB, changes int) {
	t.Helper()
	testkit.Eventually(t, time.Minute, "the shard metrics of a converged set", func() error {
		var owned, queued, applied float64
		for _, r := range e.replicas {
			m, err := e.adminGetAt(t, r.securePort, "/metrics")
			if err != nil {
				return err
			}
			if !strings.Contains(m, "example_ccm_shard_queue_length{") {
				return fmt.Errorf("replica %s has no shard queue lengths", r.name)
			}
			owned += metricSum(m, "example_ccm_shard_owned")
			queued += metricSum(m, "example_ccm_shard_queue_length")
			applied += metricSum(m, "example_ccm_shard_changes_total")
		}
		if owned != 12 || queued != 0 || applied < float64(changes) {
			return fmt.Errorf("shards owned %.0f (want 12), queued %.0f (want 0), changes %.0f (want %d or more)", owned, queued, applied, changes)
		}
		return nil
	})
}

var planRE = regexp.MustCompile(`"terraform plan" workspace="([^"]+)"`)

// createServices creates LoadBalancer Services prefix-<from>..prefix-<from+n-1>.
func (e *env) createServices(t testing.TB, prefix string, from, n int) {
	e.createNamed(t, numbered(prefix, from+n)[from:])
}

// createNamed creates a LoadBalancer Service of each name in default.
func (e *env) createNamed(t testing.TB, names []string) {
	for _, name := range names {
		_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService(name, 80), metav1.CreateOptions{})
		testkit.Must(t, err)
	}
}

// serviceUIDs are the Services' uids by name.
func (e *env) serviceUIDs(t testing.TB) map[string]string {
	l, err := e.kube.CoreV1().Services("default").List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	out := map[string]string{}
	for _, s := range l.Items {
		if s.Spec.Type == "LoadBalancer" {
			out[s.Name] = string(s.UID)
		}
	}
	return out
}

// appliesByReplica are the workspaces of Services each replica applied
// (the audit log's apply lines, by their replica field).
func (e *env) appliesByReplica(t testing.TB) map[string][]string {
	out := map[string][]string{}
	for _, a := range e.auditEntries(t) {
		if a.Action == "apply" && a.Outcome == "applied" && strings.HasPrefix(a.Object, "Service ") {
			name, _, _ := strings.Cut(a.Replica, "_")
			out[name] = append(out[name], a.Workspace)
		}
	}
	return out
}

// shardHolders are the replicas (by POD_NAME) holding each shard's Lease.
func (e *env) shardHolders(t testing.TB) map[string]int {
	l, err := e.kube.CoordinationV1().Leases(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	out := map[string]int{}
	for _, lease := range l.Items {
		if !strings.HasPrefix(lease.Name, "example-ccm-shard-") {
			continue
		}
		name, _, _ := strings.Cut(ptr.Deref(lease.Spec.HolderIdentity, ""), "_")
		out[name]++
	}
	return out
}

// waitShards waits until n replicas hold 12 shards, 4 each.
func (e *env) waitShards(t testing.TB, n int) {
	t.Helper()
	testkit.Eventually(t, time.Minute, fmt.Sprintf("%d replicas hold the shards evenly", n), func() error {
		h := e.shardHolders(t)
		if len(h) != n || h[""] > 0 || slices.Max(slices.Collect(maps.Values(h))) > 12/n {
			return fmt.Errorf("holders %v", h)
		}
		return nil
	})
}

// waitShardsWithout waits, at most within, until no shard is held by the
// replica named gone.
func (e *env) waitShardsWithout(t testing.TB, gone string, within time.Duration) {
	t.Helper()
	testkit.Eventually(t, within, "the shards of "+gone+" taken", func() error {
		h := e.shardHolders(t)
		if h[gone] > 0 || h[""] > 0 {
			return fmt.Errorf("holders %v", h)
		}
		return nil
	})
}

// Governance across replicas: a plan awaiting approval moves with its
// shard. The replica that planned it is killed; the one that takes the
// shard restores the same plan from its record, ignores the approval of
// the plan's author and applies it on another reviewer's, without a new
// plan. A replica killed mid-apply leaves its state lock; the one that
// takes the shard reports it, and a reviewer's StateUnlock opens it there.
func TestShardHandOverKeepsThePlan(t *testing.T) {
	testsize.SkipShort(t, "two replicas killed, a plan and a lock carried over")
	t.Parallel()
	e := newEnv(t, options{replicas: 2, state: "kubernetes", webhook: true, lockTimeout: "1s", staleLockAge: "1h"})
	e.nodeA()
	e.waitShards(t, 2)
	carol := e.authoringReviewer(t, "team-a", "carol")
	alice, bob := e.reviewer(t, "alice"), e.reviewer(t, "bob")

	svc := lbServiceIn("team-a", "kept", 80)
	svc.Annotations = map[string]string{string(annotations.LBApplyPolicy): string(annotations.ApplyManual)}
	svc = e.createService(t, carol, svc)
	id := e.awaitingPlanIn("team-a", "kept")
	testkit.Eventually(t, 30*time.Second, "saved plan in the record", func() error {
		if r := e.recordOf(t, "team-a", "kept"); r == nil || r.Find(id) == nil || r.Find(id).SavedSHA256 == "" {
			return fmt.Errorf("record: %+v", r)
		}
		return nil
	})
	planner := e.auditedBy(t, "plan", id)
	planned := len(e.eventsIn("team-a", "kept", "Planned"))
	killed := e.killReplica(t, planner)
	e.waitShardsWithout(t, killed.name, 4*time.Second+10*time.Second)

	// The author's approval does not count on the replica that took over;
	// another reviewer's applies the same plan there.
	testkit.Must(t, e.approveAs(t, carol, svc, id, carol.name))
	e.eventWith(t, "team-a", "kept", "ApprovalIgnored", "made a change this plan contains and cannot approve it")
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngressIn("team-a", "kept", 60*time.Second)
	e.auditLine(t, "apply", id, alice.name)
	if applier := e.auditedBy(t, "apply", id); applier == planner {
		t.Fatalf("plan %s planned and applied by %s: want the replica that took the shard", id, planner)
	}
	if got := len(e.eventsIn("team-a", "kept", "Planned")); got != planned {
		t.Fatalf("the replica that took the shard made a new plan (%d Planned events, %d before)", got, planned)
	}
	if r := e.recordOf(t, "team-a", "kept"); r == nil || r.Find(id) == nil || !slices.Equal(r.Find(id).Authors, []string{carol.name}) {
		t.Fatalf("the author is not in the record: %+v", r)
	}
	e.startSharded(killed) // its webhook serves the Service writes below
	e.waitWebhooks(t)

	// A replica killed mid-apply: its lock is opened on the other.
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 30_000})
	locked, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("locked", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitLBCount(t, 2, "the load balancer provisioning")
	var holder string
	testkit.Eventually(t, 30*time.Second, "the apply's audit line", func() error {
		for _, a := range e.auditEntries(t) {
			if a.Action == "apply" && a.Object == "Service default/locked" {
				holder = a.Replica
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	killed = e.killReplica(t, holder) // terraform dies with it, holding the state lock
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 100})
	e.waitShardsWithout(t, killed.name, 4*time.Second+10*time.Second)
	var lockID string
	testkit.Eventually(t, 60*time.Second, "the lock in the record", func() error {
		r := e.recordOf(t, "default", "locked")
		if r == nil || r.Lock == nil || r.Lock.ID == "" {
			return fmt.Errorf("record: %+v", r)
		}
		lockID = r.Lock.ID
		return nil
	})
	_, err = reviewapi.CreateStateUnlock(testkit.Context(t), bob.dyn, namespace, reviewapi.StateUnlockSpec{Object: serviceRef(locked), LockID: lockID, Requester: bob.name})
	testkit.Must(t, err)
	e.waitIngress("locked", 90*time.Second)
	testkit.Eventually(t, 30*time.Second, "the force-unlock audit line", func() error {
		for _, a := range e.auditEntries(t) {
			if a.Action == "force-unlock" && a.Details["lockID"] == lockID {
				if a.Actor != bob.name || a.Replica == holder {
					return fmt.Errorf("unlock audited by %q on %q; want %s on the replica that took the shard from %s", a.Actor, a.Replica, bob.name, holder)
				}
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	if n := e.lbCount(); n != 2 {
		t.Fatalf("%d load balancers after the unlock, want 2 (kept, locked)", n)
	}
}

// auditedBy is the replica (its identity) that wrote the last audit line
// of action on plan id.
func (e *env) auditedBy(t testing.TB, action, id string) string {
	t.Helper()
	by := ""
	for _, a := range e.auditEntries(t) {
		if a.Action == action && a.PlanID == id {
			by = a.Replica
		}
	}
	if by == "" {
		t.Fatalf("no %s audit line of %s", action, id)
	}
	return by
}

// killReplica kills, with SIGKILL, the replica whose identity is id.
func (e *env) killReplica(t testing.TB, id string) *replica {
	t.Helper()
	name, _, _ := strings.Cut(id, "_")
	i := slices.IndexFunc(e.replicas, func(r *replica) bool { return r.name == name })
	if i < 0 {
		t.Fatalf("no replica %q", id)
	}
	e.killCCM(e.replicas[i].cmd)
	return e.replicas[i]
}
