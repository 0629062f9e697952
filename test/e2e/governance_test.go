package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// auditEntry is one line of the audit log, the fields the tests read.
type auditEntry struct {
	Action    string            `json:"action"`
	Object    string            `json:"object"`
	Workspace string            `json:"workspace"`
	PlanID    string            `json:"planID"`
	Actor     string            `json:"actor"`
	Outcome   string            `json:"outcome"`
	Replica   string            `json:"replica"`
	Summary   string            `json:"summary"`
	Details   map[string]string `json:"details"`
}

// auditEntries are the lines of the audit log: of every replica's, in a
// sharded env.
func (e *env) auditEntries(t testing.TB) []auditEntry {
	logs := []string{e.auditLog}
	for _, r := range e.replicas[min(1, len(e.replicas)):] {
		logs = append(logs, r.auditLog)
	}
	var out []auditEntry
	for _, log := range logs {
		data, err := os.ReadFile(log)
		if os.IsNotExist(err) && log != e.auditLog {
			continue // a replica that has written nothing yet
		}
		testkit.Must(t, err)
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var a auditEntry
			if json.Unmarshal([]byte(line), &a) == nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// auditLine waits for an audit line of action on plan id by actor.
func (e *env) auditLine(t testing.TB, action, id, actor string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("audit %s of %s by %s", action, id, actor), func() error {
		for _, a := range e.auditEntries(t) {
			if a.Action == action && a.PlanID == id && a.Actor == actor {
				return nil
			}
		}
		return fmt.Errorf("no such audit line")
	})
}

func (e *env) createService(t testing.TB, as *user, svc *v1.Service) *v1.Service {
	t.Helper()
	out, err := as.kube.CoreV1().Services(svc.Namespace).Create(testkit.Context(t), svc, metav1.CreateOptions{})
	testkit.Must(t, err)
	return out
}

func (e *env) lbsNamed(t testing.TB, name string) []exampleapi.LoadBalancer {
	l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{Name: name})
	testkit.Must(t, err)
	return l
}

// eventWith waits for an event of object ns/name with reason whose message
// contains text.
func (e *env) eventWith(t testing.TB, ns, name, reason, text string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, reason+" event of "+ns+"/"+name, func() error {
		for _, ev := range e.eventsIn(ns, name, reason) {
			if strings.Contains(ev.Message, text) {
				return nil
			}
		}
		return fmt.Errorf("no %s event containing %q", reason, text)
	})
}

// Who changes a Service cannot approve its plan; reviewers can, with an
// identity the API server checks, and the audit log names them.
func TestApprovalsAreReviewersOnly(t *testing.T) {
	testsize.SkipShort(t, "approvals through the API server, each waiting a controller retry")
	t.Parallel()
	e := newEnv(t, options{policy: "manual"})
	e.nodeA()
	e.namespace(t, "team-a")
	dev := e.tenant(t, "team-a", "dev")
	alice := e.reviewer(t, "alice")

	svc := lbServiceIn("team-a", "web", 80)
	svc = e.createService(t, dev, svc)
	id := e.awaitingPlanIn("team-a", "web")

	// The tenant cannot approve: no right to create approvals...
	if err := e.approveAs(t, dev, svc, id, dev.name); !apierrors.IsForbidden(err) {
		t.Fatalf("a tenant created an approval: %v", err)
	}
	// ...nor to force a lock open...
	_, err := reviewapi.CreateStateUnlock(testkit.Context(t), dev.dyn, namespace, reviewapi.StateUnlockSpec{Object: serviceRef(svc), LockID: "x", Requester: dev.name})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a tenant created an unlock request: %v", err)
	}
	// ...and the retired annotation does nothing but say so.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"loadbalancer.example.com/approve-plan":%q}}}`, id)
	_, err = dev.kube.CoreV1().Services("team-a").Patch(testkit.Context(t), "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	testkit.Must(t, err)
	e.eventWith(t, "team-a", "web", "RetiredAnnotation", "approve-plan")
	if n := len(e.lbsNamed(t, "")); n != 0 {
		t.Fatalf("%d load balancers before a reviewer approved", n)
	}

	// A reviewer cannot forge another approver.
	err = e.approveAs(t, alice, svc, id, "bob")
	if err == nil || !strings.Contains(err.Error(), "spec.approver must be") {
		t.Fatalf("a forged approver was accepted: %v", err)
	}
	// A reviewer's own approval applies exactly the plan.
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngressIn("team-a", "web", 60*time.Second)
	e.eventWith(t, "team-a", "web", "Applied", id)
	e.auditLine(t, "approve", id, alice.name)
	e.auditLine(t, "apply", id, alice.name)
	testkit.Eventually(t, 30*time.Second, "the approver in the record", func() error {
		r := e.recordOf(t, "team-a", "web")
		if r == nil || r.Find(id) == nil || len(r.Find(id).Approvals) != 1 || r.Find(id).Approvals[0].By != alice.name {
			return fmt.Errorf("record: %+v", r)
		}
		return nil
	})
	// Approvals cannot be changed once made (the used one is gone: make another).
	testkit.Must(t, e.approveAs(t, alice, svc, "plan-0123456789ab", alice.name))
	l, err := reviewapi.ListPlanApprovals(testkit.Context(t), e.adminDyn(t), namespace)
	testkit.Must(t, err)
	for _, a := range l {
		if a.Spec.PlanID != "plan-0123456789ab" {
			continue
		}
		u, err := alice.dyn.Resource(reviewapi.PlanApprovals).Namespace(namespace).Get(testkit.Context(t), a.Name, metav1.GetOptions{})
		testkit.Must(t, err)
		testkit.Must(t, unstructuredSet(u.Object, "plan-aaaaaaaaaaaa", "spec", "planID"))
		if _, err := e.adminDyn(t).Resource(reviewapi.PlanApprovals).Namespace(namespace).Update(testkit.Context(t), u, metav1.UpdateOptions{}); err == nil {
			t.Fatal("an approval's plan id was changed (even by the admin)")
		}
	}
}

// With two approvers required: one approval does not apply, the same
// person twice counts once, two people do.
func TestTwoApprovers(t *testing.T) {
	testsize.SkipShort(t, "approvals through the API server, each waiting a controller retry")
	t.Parallel()
	e := newEnv(t, options{policy: "manual", approvers: 2})
	e.nodeA()
	alice, bob := e.reviewer(t, "alice"), e.reviewer(t, "bob")
	svc, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("two", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	id := e.awaitingPlan("two")
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	testkit.Eventually(t, 30*time.Second, "one approval counted", func() error {
		r := e.recordOf(t, "default", "two")
		if r == nil || r.Find(id) == nil || len(r.Find(id).Approvals) != 1 {
			return fmt.Errorf("record: %+v", r)
		}
		return nil
	})
	// The plan waits and is retried: a look after the one that counted
	// the approval must not apply it either.
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if n := e.lbCount(); n != 0 {
			return fmt.Errorf("one person (twice) applied the plan: %d LBs", n)
		}
		return nil
	})
	testkit.Must(t, e.approveAs(t, bob, svc, id, bob.name))
	e.waitIngress("two", 60*time.Second)
	for _, a := range e.auditEntries(t) {
		if a.Action == "apply" && a.PlanID == id {
			if a.Actor != alice.name+", "+bob.name && a.Actor != bob.name+", "+alice.name {
				t.Fatalf("apply audited as %q", a.Actor)
			}
			return
		}
	}
	t.Fatal("no apply audit line")
}

// A plan awaiting approval survives a controller killed with SIGKILL: the
// same plan id waits after the restart, and approving it applies it
// without a new plan.
func TestApprovalSurvivesRestart(t *testing.T) {
	testsize.SkipShort(t, "an approval across a controller restart")
	t.Parallel()
	e := newEnv(t, options{policy: "manual"})
	e.nodeA()
	alice := e.reviewer(t, "alice")
	svc, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("kept", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	id := e.awaitingPlan("kept")
	testkit.Eventually(t, 30*time.Second, "saved plan in the record", func() error {
		r := e.recordOf(t, "default", "kept")
		if r == nil || r.Find(id) == nil || r.Find(id).SavedSHA256 == "" {
			return fmt.Errorf("record: %+v", r)
		}
		return nil
	})
	planned := len(e.events("kept", "Planned"))

	e.killCCM(e.ccm)
	e.startCCM()
	testkit.Eventually(t, 60*time.Second, "the plan restored", func() error {
		if e.countLog("restored the plan awaiting approval") == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	r := e.recordOf(t, "default", "kept")
	if p := r.Latest(); p == nil || p.ID != id || p.Outcome != records.AwaitingApproval || len(r.Plans) != 1 {
		t.Fatalf("after the restart the record shows %+v", r.Plans)
	}
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngress("kept", 60*time.Second)
	e.eventWith(t, "default", "kept", "Applied", id)
	if got := len(e.events("kept", "Planned")); got != planned {
		t.Fatalf("the restarted controller made a new plan (%d Planned events, %d before)", got, planned)
	}
	if r := e.recordOf(t, "default", "kept"); len(r.Plans) != 1 || r.Plans[0].Outcome != records.Applied {
		t.Fatalf("record after approval: %+v", r.Plans)
	}
}

// Adoption is refused unless the cloud config allows it for the namespace,
// and never takes another owner's load balancer, by its name or another.
// An unowned one is adopted once a reviewer approves the import.
func TestAdoptionProvesOwnership(t *testing.T) {
	testsize.SkipShort(t, "adoptions approved, each waiting a controller retry")
	t.Parallel()
	e := newEnv(t, options{shippedRules: true, adoption: map[string]any{"enabled": true, "namespaces": []string{"team-a"}}})
	e.nodeA()
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		e.namespace(t, ns)
	}
	mallory := e.tenant(t, "team-a", "mallory")
	outsider := e.tenant(t, "team-c", "outsider")
	alice := e.reviewer(t, "alice")

	victim := lbServiceIn("team-b", "shop", 80)
	_, err := e.kube.CoreV1().Services("team-b").Create(testkit.Context(t), victim, metav1.CreateOptions{})
	testkit.Must(t, err)
	vsvc := e.waitIngressIn("team-b", "shop", 60*time.Second)
	vlb, err := e.cloudLB(vsvc.Status.LoadBalancer.Ingress[0].IP)
	testkit.Must(t, err)

	// Not allowed in team-c at all.
	steal := lbServiceIn("team-c", "steal", 80)
	steal.Annotations = map[string]string{"loadbalancer.example.com/adopt-id": vlb.ID, "loadbalancer.example.com/name": vlb.Name}
	e.createService(t, outsider, steal)
	e.eventWith(t, "team-c", "steal", "ReferenceRefused", "annotation loadbalancer.example.com/adopt-id")
	// Allowed in team-a, but the tags name another owner: with the
	// victim's name and with another.
	for i, name := range []string{vlb.Name, "other-name"} {
		s := lbServiceIn("team-a", fmt.Sprintf("steal-%d", i), 80)
		s.Annotations = map[string]string{"loadbalancer.example.com/adopt-id": vlb.ID, "loadbalancer.example.com/name": name}
		e.createService(t, mallory, s)
		e.eventWith(t, "team-a", s.Name, "ReferenceRefused", "its owner tags name another cluster or object")
		e.noEventMentions(t, "team-a", "team-b")
	}
	// A refused Service is retried: each is refused again, and only then
	// is the victim's load balancer checked.
	for i := range 2 {
		name := fmt.Sprintf("steal-%d", i)
		testkit.Eventually(t, 60*time.Second, name+" refused again", func() error {
			if n := e.eventCount("team-a", name, "ReferenceRefused"); n < 2 {
				return fmt.Errorf("refused %d times", n)
			}
			return nil
		})
	}
	got, err := e.api.GetLoadBalancer(testkit.Context(t), vlb.ID)
	testkit.Must(t, err)
	if got.Tags["k8s.example.com/service-uid"] != string(vsvc.UID) || len(got.Listeners) != 1 || got.Name != vlb.Name {
		t.Fatalf("the victim's load balancer was touched: %+v", got)
	}
	for _, i := range []int{0, 1} {
		testkit.Must(t, mallory.kube.CoreV1().Services("team-a").Delete(testkit.Context(t), fmt.Sprintf("steal-%d", i), metav1.DeleteOptions{}))
	}
	// Gone once the controller dropped their finalizer: after it removed
	// whatever it took for theirs.
	for i := range 2 {
		waitGone(t, 60*time.Second, fmt.Sprintf("steal-%d", i), mallory.kube.CoreV1().Services("team-a").Get)
	}
	if _, err := e.api.GetLoadBalancer(testkit.Context(t), vlb.ID); err != nil {
		t.Fatalf("deleting the attacker's Services destroyed the victim's load balancer: %v", err)
	}

	// An unowned load balancer: the import waits for a reviewer (default
	// rule load-balancer-import), then it is the Service's.
	legacy, err := e.api.CreateLoadBalancer(testkit.Context(t), exampleapi.LoadBalancerSpec{
		Name: "legacy", Region: region, IPFamily: "ipv4",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: "round_robin",
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
		},
	})
	testkit.Must(t, err)
	// Active before the plan imports it: a plan names what it saw, and a
	// status that moves on (provisioning, then active) is a changed
	// cloud, which supersedes the plan awaiting approval.
	testkit.Eventually(t, 30*time.Second, "legacy active", func() error {
		lb, err := e.api.GetLoadBalancer(testkit.Context(t), legacy.ID)
		if err != nil || lb.Status != "active" {
			return fmt.Errorf("%v %v", lb, err)
		}
		return nil
	})
	own := lbServiceIn("team-a", "adopter", 80)
	own.Annotations = map[string]string{"loadbalancer.example.com/adopt-id": legacy.ID, "loadbalancer.example.com/name": "legacy"}
	own = e.createService(t, mallory, own)
	id := e.awaitingPlanIn("team-a", "adopter")
	e.eventWith(t, "team-a", "adopter", "AwaitingApproval", "load-balancer-import")
	testkit.Must(t, e.approveAs(t, alice, own, id, alice.name))
	asvc := e.waitIngressIn("team-a", "adopter", 60*time.Second)
	adopted, err := e.api.GetLoadBalancer(testkit.Context(t), legacy.ID)
	testkit.Must(t, err)
	if asvc.Status.LoadBalancer.Ingress[0].IP != adopted.IPv4 || adopted.Tags["k8s.example.com/service-uid"] != string(own.UID) {
		t.Fatalf("adopted %s, want %s; tags %v", asvc.Status.LoadBalancer.Ingress[0].IP, adopted.IPv4, adopted.Tags)
	}
	if l := e.lbsNamed(t, "legacy"); len(l) != 1 {
		t.Fatalf("%d load balancers named legacy after the adoption", len(l))
	}
}

// Policy rules: a replace waits for approval under auto; a denied plan is
// never applied; a rule that does not compile stops the controller.
func TestPolicyRules(t *testing.T) {
	testsize.SkipShort(t, "every shipped rule held and approved")
	t.Parallel()
	deny := map[string]any{"name": "no-large", "effect": "deny", "message": "lb-large needs a budget approval",
		"when": `object.annotations.exists(k, k == "loadbalancer.example.com/type" && object.annotations[k] == "lb-large")`}
	rules := []map[string]any{deny}
	e := newEnv(t, options{rules: append(rules, map[string]any{"name": "replace", "effect": "require-approval", "message": "a replace gets new addresses",
		"when": `plan.resources.exists(r, r.type == "example_load_balancer" && r.action == "replace")`})})
	e.nodeA()
	alice := e.reviewer(t, "alice")
	_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("ruled", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	svc := e.waitIngress("ruled", 60*time.Second) // auto: nothing flags a create
	first := svc.Status.LoadBalancer.Ingress[0].IP

	e.annotate("ruled", "loadbalancer.example.com/name", "renamed")
	id := e.awaitingPlan("ruled")
	e.eventWith(t, "default", "ruled", "AwaitingApproval", "a replace gets new addresses")
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if l := e.lbsNamed(t, "renamed"); len(l) != 0 {
			return fmt.Errorf("a replace was applied without approval under auto")
		}
		return nil
	})
	svc, err = e.kube.CoreV1().Services("default").Get(testkit.Context(t), "ruled", metav1.GetOptions{})
	testkit.Must(t, err)
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	testkit.Eventually(t, 60*time.Second, "replaced", func() error {
		if l := e.lbsNamed(t, "renamed"); len(l) != 1 {
			return fmt.Errorf("%d LBs named renamed", len(l))
		}
		return nil
	})

	e.annotate("ruled", "loadbalancer.example.com/type", "lb-large")
	e.eventWith(t, "default", "ruled", "PlanDenied", "lb-large needs a budget approval")
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if l := e.lbsNamed(t, "renamed"); len(l) != 1 || l[0].Type == "lb-large" {
			return fmt.Errorf("a denied plan was applied: %+v", l)
		}
		return nil
	})
	_ = first

	// A broken rule stops start-up with an error naming it.
	cfg, err := os.ReadFile(filepath.Join(e.dir, "cloud-config.yaml"))
	testkit.Must(t, err)
	var m map[string]any
	testkit.Must(t, yaml.Unmarshal(cfg, &m))
	m["review"].(map[string]any)["policy"] = map[string]any{"rules": []map[string]any{
		{"name": "broken-rule", "effect": "deny", "message": "m", "when": `plan.resourcez.size() > 0`}}}
	data, err := yaml.Marshal(m)
	testkit.Must(t, err)
	broken := filepath.Join(e.dir, "broken.yaml")
	testkit.Must(t, os.WriteFile(broken, data, 0o600))
	// No secure port: binding one and looking up its client CA in the
	// cluster can fail on a loaded machine before the cloud config is read
	// (exit 1 with no word of the rule, once in CI).
	args := []string{"--secure-port=0"}
	for _, a := range e.args {
		if strings.HasPrefix(a, "--cloud-config=") {
			a = "--cloud-config=" + broken
		}
		args = append(args, a)
	}
	cmd := exec.Command(e.ccmBin, args...)
	done := make(chan error, 1)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	testkit.Must(t, cmd.Start())
	go func() {
		err := cmd.Wait()
		e.meter.Add(cmd.ProcessState)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(out.String(), `rule "broken-rule"`) {
			t.Fatalf("broken rule: exit %v, ending %q; output:\n%s", err, lastLine(out.String()), out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the controller kept running with a broken rule:\n%s", out.String())
	}
}

func unstructuredSet(obj map[string]any, value string, fields ...string) error {
	m := obj
	for _, f := range fields[:len(fields)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			return fmt.Errorf("no field %s", f)
		}
		m = next
	}
	m[fields[len(fields)-1]] = value
	return nil
}

// authoringReviewer installs the service-author admission policy and the
// webhooks, and returns name: a tenant who edits Services in ns and
// reviews, once the API server enforces the policy.
func (e *env) authoringReviewer(t testing.TB, ns, name string) *user {
	t.Helper()
	objs, err := deploy.Component(deploy.ServiceAuthor)
	testkit.Must(t, err)
	testkit.Must(t, deploy.Apply(testkit.Context(t), e.kube, objs))
	e.namespace(t, ns)
	u := e.tenant(t, ns, name)  // edits Services in ns...
	e.bindReviewer(t, ns, name) // ...and reviews
	e.waitAllowed(t, u, "create", reviewapi.Group, "planapprovals", namespace)
	probe := lbServiceIn(ns, "author-probe", 80)
	// The API server enforces a new policy once its informer has it: on a
	// loaded machine that has taken over 30 s.
	testkit.Eventually(t, 90*time.Second, "the author policy in force", func() error {
		_, err := u.kube.CoreV1().Services(ns).Create(testkit.Context(t), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return fmt.Errorf("a Service without its author was accepted")
		}
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), reviewapi.AuthorAnnotation) {
			return fmt.Errorf("refused, but not by the author policy: %w", err)
		}
		return nil
	})
	e.installWebhooks(t, 15)
	return u
}

// newAuthoredEnv is a manual-policy controller with the author webhook and
// a node: carol edits team-a's Services and reviews, alice reviews.
func newAuthoredEnv(t *testing.T) (e *env, carol, alice *user) {
	e = newEnv(t, options{policy: "manual", webhook: true})
	e.nodeA()
	return e, e.authoringReviewer(t, "team-a", "carol"), e.reviewer(t, "alice")
}

// With the optional service-author admission policy installed, the API
// server vouches for who last changed a Service, and that person's
// approval of their own change does not count; another reviewer's does.
// Nobody sets the author by hand: the controller's mutating webhook
// stamps it, and the policy checks the stamp.
func TestAuthorCannotApprove(t *testing.T) {
	testsize.SkipShort(t, "approvals through the API server, each waiting a controller retry")
	t.Parallel()
	e, carol, alice := newAuthoredEnv(t)
	svc := e.createService(t, carol, lbServiceIn("team-a", "authored", 80))
	if got := svc.Annotations[reviewapi.AuthorAnnotation]; got != carol.name {
		t.Fatalf("author %q, want %q stamped by the webhook", got, carol.name)
	}
	id := e.awaitingPlanIn("team-a", "authored")
	testkit.Must(t, e.approveAs(t, carol, svc, id, carol.name))
	e.eventWith(t, "team-a", "authored", "ApprovalIgnored", "made a change this plan contains and cannot approve it")
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if n := e.lbCount(); n != 0 {
			return fmt.Errorf("the author's own approval applied the plan: %d LBs", n)
		}
		return nil
	})
	if r := e.recordOf(t, "team-a", "authored"); r == nil || r.Find(id) == nil || !slices.Equal(r.Find(id).Authors, []string{carol.name}) {
		t.Fatalf("the author is not in the record: %+v", r)
	}
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngressIn("team-a", "authored", 60*time.Second)
	e.auditLine(t, "apply", id, alice.name)

	t.Run("a group's plan keeps every member's author", func(t *testing.T) {
		// Carol changes dave's member m2, then touches m1 (whose author
		// stays dave) so the group is planned again from m1's reconcile.
		// Her approval still does not count, and the audit names her.
		dave := e.tenant(t, "team-a", "dave")
		front := objectref.Group("team-a", "front")
		var seen []string
		add := func(name string, port int32) {
			m := lbServiceIn("team-a", name, port)
			m.Annotations = map[string]string{string(annotations.LBGroup): "front"}
			e.createService(t, dave, m)
			id := e.awaitingPlanIn("team-a", name, seen...)
			seen = append(seen, id)
			testkit.Must(t, e.approveObjectAs(t, alice, front, id, alice.name))
			e.waitIngressIn("team-a", name, 60*time.Second)
		}
		add("m1", 80)
		add("m2", 81)

		services := carol.kube.CoreV1().Services("team-a")
		m2, err := services.Get(testkit.Context(t), "m2", metav1.GetOptions{})
		testkit.Must(t, err)
		m2.Spec.Ports = append(m2.Spec.Ports, v1.ServicePort{Name: "p82", Port: 82, Protocol: v1.ProtocolTCP})
		_, err = services.Update(testkit.Context(t), m2, metav1.UpdateOptions{})
		testkit.Must(t, err)
		id := e.awaitingPlanIn("team-a", "m2", seen...)
		bumpService(t, carol, "team-a", "m1") // the author annotation stays dave's
		testkit.Must(t, e.approveObjectAs(t, carol, front, id, carol.name))
		testkit.Eventually(t, 60*time.Second, "carol's approval ignored", func() error {
			for _, name := range []string{"m1", "m2"} {
				for _, ev := range e.eventsIn("team-a", name, "ApprovalIgnored") {
					if strings.Contains(ev.Message, `"`+carol.name+`" made a change this plan contains`) {
						return nil
					}
				}
			}
			return fmt.Errorf("no ApprovalIgnored event for carol")
		})
		r := e.recordOf(t, "team-a", "front")
		if r == nil || r.Find(id) == nil || r.Find(id).Outcome != records.AwaitingApproval || !slices.Contains(r.Find(id).Authors, carol.name) {
			t.Fatalf("group record after carol's approval: %+v; want %s awaiting approval, carol among its authors", r, id)
		}
		testkit.Must(t, e.approveObjectAs(t, alice, front, id, alice.name))
		e.auditLine(t, "apply", id, alice.name)
		for _, a := range e.auditEntries(t) {
			if a.Action == "apply" && a.PlanID == id && a.Outcome == "applied" && !strings.Contains(a.Details["author"], carol.name) {
				t.Errorf("the apply's audit line names authors %q; want carol among them", a.Details["author"])
			}
		}
	})
}
