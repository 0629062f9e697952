package review

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/reviewapi"
)

// reviewFixture is a board whose records live in client-go's fake
// clientset (the real records.Store over it), whose approvals and unlock
// requests come from a lister and a fake dynamic client, with events in
// memory and the audit log in a file. Fakes, so that a failure names the
// function: the e2e runs the same paths against a real API server.
type reviewFixture struct {
	*Board
	client    *fake.Clientset
	dyn       *dynamicfake.FakeDynamicClient
	events    *record.FakeRecorder
	auditPath string
}

// newReviewFixture reviews under reviewtest.Config plus extra; objs are the
// PlanApprovals, StateUnlocks and AddressReleases present, honoured (the identity policy
// installed) unless noPolicy.
func newReviewFixture(t *testing.T, extra string, noPolicy bool, objs ...*unstructured.Unstructured) *reviewFixture {
	t.Helper()
	cfg := testConfig(t, extra)
	f := &reviewFixture{events: record.NewFakeRecorder(100), auditPath: filepath.Join(t.TempDir(), "audit.log")}
	log, err := audit.Open(f.auditPath)
	testkit.Must(t, err)
	t.Cleanup(func() { _ = log.Close() })
	var kube []runtime.Object
	if !noPolicy {
		kube = append(kube, reviewtest.Policies(t, reviewapi.AdmissionPolicy)...)
	}
	f.client = fake.NewClientset(kube...)
	reviewtest.Versioned(f.client)
	f.Board = New(cfg, log)
	f.setClient(f.client, f.events)
	var dynObjs []runtime.Object
	// One indexer a resource, as the approvals' informers have them.
	idx := map[schema.GroupVersionResource]cache.Indexer{}
	for _, gvr := range []schema.GroupVersionResource{reviewapi.PlanApprovals, reviewapi.StateUnlocks, reviewapi.AddressReleases} {
		idx[gvr] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
	resourceOf := map[string]schema.GroupVersionResource{reviewapi.KindPlanApproval: reviewapi.PlanApprovals,
		reviewapi.KindStateUnlock: reviewapi.StateUnlocks, reviewapi.KindAddressRelease: reviewapi.AddressReleases}
	for _, o := range objs {
		testkit.Must(t, idx[resourceOf[o.GetKind()]].Add(o))
		dynObjs = append(dynObjs, o)
	}
	f.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		reviewapi.PlanApprovals:   reviewapi.KindPlanApproval + "List",
		reviewapi.StateUnlocks:    reviewapi.KindStateUnlock + "List",
		reviewapi.AddressReleases: reviewapi.KindAddressRelease + "List",
	}, dynObjs...)
	// Deleted objects leave the listers, as they leave an informer's cache.
	f.dyn.PrependReactor("delete", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		i := idx[a.GetResource()]
		if o, ok, _ := i.GetByKey(a.GetNamespace() + "/" + a.(clienttesting.DeleteAction).GetName()); ok {
			testkit.Must(t, i.Delete(o))
		}
		return false, nil, nil
	})
	f.approvals.client, f.approvals.dyn = f.client, f.dyn
	f.approvals.plans = cache.NewGenericLister(idx[reviewapi.PlanApprovals], reviewapi.PlanApprovals.GroupResource())
	f.approvals.unlocks = cache.NewGenericLister(idx[reviewapi.StateUnlocks], reviewapi.StateUnlocks.GroupResource())
	f.approvals.released = cache.NewGenericLister(idx[reviewapi.AddressReleases], reviewapi.AddressReleases.GroupResource())
	return f
}

// policyInstalled sets when the identity policy was installed: requests
// made before it count for nothing.
func (f *reviewFixture) policyInstalled(t *testing.T, at time.Time) {
	t.Helper()
	pols := f.client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p, err := pols.Get(t.Context(), reviewapi.AdmissionPolicy, metav1.GetOptions{})
	testkit.Must(t, err)
	p.CreationTimestamp = metav1.NewTime(at)
	_, err = pols.Update(t.Context(), p, metav1.UpdateOptions{})
	testkit.Must(t, err)
}

// takeEvents returns the events recorded since the last call.
func (f *reviewFixture) takeEvents() []reviewtest.Event { return reviewtest.Take(f.events) }

// auditLog returns the audit log's entries and its raw text.
func (f *reviewFixture) auditLog(t *testing.T) ([]audit.Entry, string) {
	t.Helper()
	raw, err := os.ReadFile(f.auditPath)
	testkit.Must(t, err)
	var out []audit.Entry
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %d: %v: %s", len(out)+1, err, sc.Text())
		}
		out = append(out, e)
	}
	return out, string(raw)
}

// get reads the record of workspace through the store.
func (f *reviewFixture) get(t *testing.T, ws string) *records.Record {
	t.Helper()
	r, err := f.store.Get(t.Context(), ws)
	testkit.Must(t, err)
	return r
}

// objectsOf counts the ConfigMaps and Secrets the store keeps for ws.
func (f *reviewFixture) objectsOf(t *testing.T, ws string) int {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: records.LabelWorkspace}
	cms, err := f.client.CoreV1().ConfigMaps(f.cfg.Review.Namespace).List(t.Context(), sel)
	testkit.Must(t, err)
	secrets, err := f.client.CoreV1().Secrets(f.cfg.Review.Namespace).List(t.Context(), sel)
	testkit.Must(t, err)
	n := 0
	for _, o := range cms.Items {
		if o.Annotations[records.AnnotationWorkspace] == ws {
			n++
		}
	}
	for _, o := range secrets.Items {
		if o.Annotations[records.AnnotationWorkspace] == ws {
			n++
		}
	}
	return n
}

// Fixtures of reviews: the Service shop/web (ref web, approvals_test.go)
// and its workspace.
const webWS = "prod-service-shop-web-0123456789abcdef"

var webSvc = &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1"}}

func webSubject(kind string) Subject {
	return Subject{ref: web, event: webSvc, kind: kind}
}

// planAt is a plan with changes (+add), its saved file written.
func planAt(t *testing.T, id string, add int, created time.Time) *engine.Plan {
	t.Helper()
	file := filepath.Join(t.TempDir(), id+".tfplan")
	testkit.Must(t, os.WriteFile(file, []byte("saved "+id), 0o600))
	return &engine.Plan{ID: id, File: file, Workspace: webWS, Hash: "hcl-" + id, Created: created,
		HasChanges: add > 0, Summary: engine.PlanSummary{Add: add}, Text: "text of " + id}
}

func stateUnlockObj(name string, ref objectref.Ref, lockID, requester string) *unstructured.Unstructured {
	return reviewObj(reviewapi.KindStateUnlock, name, &reviewapi.StateUnlockSpec{Object: ref, LockID: lockID, Requester: requester}, time.Now())
}

// reviewObj is a review.example.com object of kind in the controller's
// namespace, with spec, made at created.
func reviewObj(kind, name string, spec any, created time.Time) *unstructured.Unstructured {
	content, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	u := &unstructured.Unstructured{Object: map[string]any{"spec": content}}
	u.SetAPIVersion(reviewapi.GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace("example-ccm")
	u.SetName(name)
	u.SetUID(types.UID("u-" + name))
	u.SetCreationTimestamp(metav1.NewTime(created))
	return u
}

func testConfig(t *testing.T, extra string) *cloudconfig.Config { return reviewtest.Config(t, extra) }

// wantEvent is an event expected: its type and reason, and what its
// message says (has) and must not say (not).
type wantEvent struct {
	typ, reason string
	has, not    []string
}

// wantAudit is an audit line expected; has is in its error or a detail.
type wantAudit struct {
	action, actor, outcome, planID string
	has                            string
}

func checkEvents(t *testing.T, got []reviewtest.Event, want []wantEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("events:\n%s\nwant %d: %v", eventsText(got), len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.typ || g.Reason != w.reason {
			t.Errorf("event %d = %s %s %q; want %s %s", i, g.Type, g.Reason, g.Message, w.typ, w.reason)
		}
		for _, s := range w.has {
			if !strings.Contains(g.Message, s) {
				t.Errorf("event %d (%s) = %q; want it to say %q", i, g.Reason, g.Message, s)
			}
		}
		for _, s := range w.not {
			if strings.Contains(g.Message, s) {
				t.Errorf("event %d (%s) = %q; must not say %q", i, g.Reason, g.Message, s)
			}
		}
	}
}

func eventsText(evs []reviewtest.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s %s %q\n", e.Type, e.Reason, e.Message)
	}
	return b.String()
}

func checkAudit(t *testing.T, got []audit.Entry, object string, want []wantAudit) {
	t.Helper()
	if len(got) != len(want) {
		var b strings.Builder
		for _, e := range got {
			line, _ := json.Marshal(e)
			fmt.Fprintf(&b, "  %s\n", line)
		}
		t.Fatalf("audit lines:\n%swant %d: %v", b.String(), len(want), want)
	}
	for i, w := range want {
		g := got[i]
		if g.Action != w.action || g.Actor != w.actor || g.Outcome != w.outcome || g.PlanID != w.planID {
			t.Errorf("audit line %d = action %q actor %q outcome %q plan %q; want %q %q %q %q",
				i, g.Action, g.Actor, g.Outcome, g.PlanID, w.action, w.actor, w.outcome, w.planID)
		}
		if w.has != "" && !strings.Contains(g.Error, w.has) && !slices.ContainsFunc(slices.Collect(maps.Values(g.Details)), func(d string) bool { return strings.Contains(d, w.has) }) {
			t.Errorf("audit line %d (%s) = error %q details %v; want it to say %q", i, g.Action, g.Error, g.Details, w.has)
		}
		if g.Object != object {
			t.Errorf("audit line %d names %q; want %q", i, g.Object, object)
		}
	}
}

const self = "example-cloud-controller-manager"
