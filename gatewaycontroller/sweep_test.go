package gatewaycontroller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// The sweep's tests run the controller over client-go's fake clientsets
// with the fake engine and review of program_test.go: they check what it
// decides on each answer. The e2e runs it on a real API server, terraform
// and the simulator.

const claimsNS = "example-ccm"

var sweptNN = types.NamespacedName{Namespace: "infra", Name: "gw"}

// sweepFixture is a controller of class example over gwc and kube, under
// the cluster's auto policy.
type sweepFixture struct {
	c    *Controller
	gwc  *gwfake.Clientset
	kube *kubefake.Clientset
	eng  *fakeEngine
	rv   *fakeReview
}

func newSweepFixture(t *testing.T, recs []*records.Record, gws ...*gatewayv1.Gateway) *sweepFixture {
	t.Helper()
	gwc := gwfake.NewSimpleClientset()
	_, err := gwc.GatewayV1().GatewayClasses().Create(t.Context(), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	for _, gw := range gws {
		_, err := gwc.GatewayV1().Gateways(gw.Namespace).Create(t.Context(), gw, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	f := &sweepFixture{gwc: gwc, kube: kubefake.NewClientset(claimsOf("uid-1")),
		eng: &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}}, rv: &fakeReview{records: recs}}
	f.c, err = New(gwc, f.kube, &Cloud{Engine: f.eng, Review: f.rv, Infra: fakeInfra{},
		Settings: Settings{Policy: annotations.ApplyAuto, ClaimsNamespace: claimsNS, HostnameClaimGrace: time.Minute}})
	testkit.Must(t, err)
	return f
}

// watch starts the informers and waits for them.
func (f *sweepFixture) watch(t *testing.T) {
	t.Helper()
	f.c.Watch(t.Context())
	if !cache.WaitForCacheSync(t.Context().Done(), f.c.synced...) {
		t.Fatal("informers not synced")
	}
}

// claimsOf is the claims ConfigMap of Gateway infra/gw of uid.
func claimsOf(uid types.UID) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: claimsNS, Name: claimsName(sweptNN),
		Annotations: map[string]string{annotationClaimsOf: sweptNN.String(), annotationClaimsUID: string(uid)}},
		Data: map[string]string{claimsKey: `{"hosts":{"shop.example":{"namespace":"team-a","since":"2026-01-01T00:00:00Z"}}}`}}
}

// claimsUID is the uid the claims ConfigMap of infra/gw names, "" when
// there is none.
func (f *sweepFixture) claimsUID(t *testing.T) types.UID {
	t.Helper()
	cm, err := f.kube.CoreV1().ConfigMaps(claimsNS).Get(t.Context(), claimsName(sweptNN), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	testkit.Must(t, err)
	return types.UID(cm.Annotations[annotationClaimsUID])
}

func httpGateway(uid types.UID, policy string) *gatewayv1.Gateway {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: sweptNN.Namespace, Name: sweptNN.Name, UID: uid},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	if policy != "" {
		gw.Annotations = map[string]string{string(annotations.LBApplyPolicy): policy}
	}
	return gw
}

var waitApproval = &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual}

// A Gateway whose finalizer whoever may update it removes, then deleted:
// its load balancer is destroyed under review, under the stricter of the
// policy its last plan was reviewed under and that of its last state
// (the informer's tombstone); the claims go once the destroy is applied,
// not while it waits; and nothing is destroyed twice.
func TestSweepGoneWithoutFinalizer(t *testing.T) {
	for _, tc := range []struct {
		name            string
		planned, before string // its apply-policy annotation when planned, just before its deletion
		want            annotations.ApplyPolicy
	}{
		{name: "auto", want: annotations.ApplyAuto},
		{name: "manual when planned, taken off before the deletion", planned: "manual", want: annotations.ApplyManual},
		{name: "manual set just before the deletion", before: "manual", want: annotations.ApplyManual},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f := newSweepFixture(t, nil, httpGateway("uid-1", tc.planned))
			f.watch(t)
			testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
			if len(f.eng.built) != 1 {
				t.Fatalf("built %d load balancers, want 1", len(f.eng.built))
			}

			// The tenant takes the finalizer off (and sets the annotation), then deletes it.
			gws := f.gwc.GatewayV1().Gateways(sweptNN.Namespace)
			cur, err := gws.Get(ctx, sweptNN.Name, metav1.GetOptions{})
			testkit.Must(t, err)
			if !slices.Contains(cur.Finalizers, Finalizer) {
				t.Fatalf("finalizers %v, want %s", cur.Finalizers, Finalizer)
			}
			// The label tells its last state from the one planned.
			cur.Finalizers, cur.Annotations, cur.Labels = nil, nil, map[string]string{"edited": "yes"}
			if tc.before != "" {
				cur.Annotations = map[string]string{string(annotations.LBApplyPolicy): tc.before}
			}
			_, err = gws.Update(ctx, cur, metav1.UpdateOptions{})
			testkit.Must(t, err)
			testkit.Must(t, gws.Delete(ctx, sweptNN.Name, metav1.DeleteOptions{}))
			testkit.Eventually(t, 10*time.Second, "the deletion seen, with its last state", func() error {
				if _, err := f.c.gateways.Gateways(sweptNN.Namespace).Get(sweptNN.Name); !apierrors.IsNotFound(err) {
					return fmt.Errorf("lister: %v", err)
				}
				if p, _ := f.c.planned.get(sweptNN); p.last == nil || p.last.Labels["edited"] != "yes" {
					return errors.New("the tombstone is not kept")
				}
				return nil
			})

			f.eng.err = waitApproval
			testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
			if f.claimsUID(t) != "uid-1" {
				t.Error("the claims went while the destroy waits")
			}
			f.eng.err = nil
			testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
			testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
			if !slices.Equal(f.eng.removedUIDs, []string{"uid-1", "uid-1"}) {
				t.Errorf("destroyed %v, want uid-1's load balancer, waiting then applied, and nothing after", f.eng.removedUIDs)
			}
			if got := f.rv.policies[1:]; len(got) != 2 || got[0] != tc.want || got[1] != tc.want {
				t.Errorf("destroys reviewed under %v, want %s", got, tc.want)
			}
			if uid := f.claimsUID(t); uid != "" {
				t.Errorf("claims of %s left after the destroy", uid)
			}
		})
	}
}

// A controller that starts learns from the plan records the Gateways
// planned before it, and its first work item sweeps each one gone (under
// the policy its record says, the cluster's being auto). A record whose
// Gateway the informer misses but the API server serves (a uid match) is
// never swept, nor one without a uid, nor another kind's.
func TestSweepAfterRestart(t *testing.T) {
	ctx := t.Context()
	live := httpGateway("uid-live", "")
	live.Name = "live"
	recs := []*records.Record{
		{Object: objectref.Gateway("infra", "gw", "uid-1"), Policy: "manual"},
		{Object: objectref.Gateway("infra", "live", "uid-live"), Policy: "auto"},
		{Object: objectref.Gateway("infra", "old", ""), Policy: "auto"},
		{Object: objectref.Ref{Kind: objectref.KindService, Namespace: "infra", Name: "gw", UID: "uid-svc"}, Policy: "auto"},
	}
	f := newSweepFixture(t, recs, live) // informers not started: the lister misses live
	f.c.queue.Add(key{records: true})
	for f.c.queue.Len() > 0 {
		f.c.next(ctx)
	}
	if !slices.Equal(f.eng.removedUIDs, []string{"uid-1"}) || !slices.Equal(f.rv.policies, []annotations.ApplyPolicy{annotations.ApplyManual}) {
		t.Errorf("destroyed %v under %v; want uid-1's alone, under manual", f.eng.removedUIDs, f.rv.policies)
	}
	if uid := f.claimsUID(t); uid != "" {
		t.Errorf("claims of %s left after the destroy", uid)
	}
	if _, ok := f.c.planned.get(types.NamespacedName{Namespace: "infra", Name: "live"}); !ok {
		t.Error("forgot the workspace of a Gateway that exists")
	}
}

// A Gateway deleted without the finalizer and created again under its
// name (a new uid; the workspace is by name): the earlier one's load
// balancer is destroyed first, the new one Pending meanwhile, saying why,
// and built after; the claims of the earlier one go, a later one's stay.
func TestSweepReplaced(t *testing.T) {
	ctx := t.Context()
	recs := []*records.Record{{Object: objectref.Gateway("infra", "gw", "uid-1"), Policy: "auto"}}
	f := newSweepFixture(t, recs, httpGateway("uid-2", ""))
	testkit.Must(t, f.c.readRecords(ctx))
	f.watch(t)

	f.eng.err = waitApproval
	testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
	cur, err := f.gwc.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
	testkit.Must(t, err)
	prog := meta.FindStatusCondition(cur.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed))
	if len(f.eng.built) != 0 || prog == nil || prog.Reason != string(gatewayv1.GatewayReasonPending) || !strings.Contains(prog.Message, "earlier Gateway of this name") ||
		slices.Contains(cur.Finalizers, Finalizer) {
		t.Errorf("while the earlier destroy waits: built %d, Programmed %+v, finalizers %v; want nothing built, Pending saying why", len(f.eng.built), prog, cur.Finalizers)
	}

	f.eng.err = nil
	testkit.Must(t, f.c.syncGateway(ctx, sweptNN))
	if !slices.Equal(f.eng.removedUIDs, []string{"uid-1", "uid-1"}) || len(f.eng.built) != 1 || f.eng.built[0].UID != "uid-2" {
		t.Errorf("destroyed %v, built %d; want uid-1's destroyed, then uid-2's built", f.eng.removedUIDs, len(f.eng.built))
	}
	if uid := f.claimsUID(t); uid != "" {
		t.Errorf("claims of %s left", uid)
	}
	if p, _ := f.c.planned.get(sweptNN); p.uid != "uid-2" {
		t.Errorf("planned %+v, want uid-2", p)
	}

	// The claims a later Gateway of the name wrote are not the earlier one's.
	_, err = f.kube.CoreV1().ConfigMaps(claimsNS).Create(ctx, claimsOf("uid-2"), metav1.CreateOptions{})
	testkit.Must(t, err)
	testkit.Must(t, f.c.claims.removeOf(ctx, sweptNN, "uid-1"))
	if f.claimsUID(t) != "uid-2" {
		t.Error("the sweep of uid-1 deleted uid-2's claims")
	}
}

// A destroy the engine says this process already made is done: no retry
// loop on a workspace it destroyed.
func TestDestroyAlreadyGone(t *testing.T) {
	gw := httpGateway("uid-1", "")
	eng := &fakeEngine{err: fmt.Errorf("delete Gateway infra/gw: workspace x: %w", engine.ErrGone)}
	c := &Controller{gw: newClient(t, gw), cloud: &Cloud{Engine: eng, Review: &fakeReview{}, Infra: fakeInfra{}}}
	c.planned.plan(gw, annotations.ApplyAuto)
	gone, err := c.destroy(t.Context(), gw)
	if !gone || err != nil {
		t.Errorf("gone %v, %v; want gone", gone, err)
	}
	if _, ok := c.planned.get(sweptNN); ok {
		t.Error("still planned")
	}
}

// Only an applied destroy forgets a workspace; a later Gateway of the
// name, or a record read late, does not overwrite what was planned since.
func TestPlannedGateways(t *testing.T) {
	var p plannedGateways
	one, two := httpGateway("uid-1", ""), httpGateway("uid-2", "")
	p.plan(one, annotations.ApplyManual)
	p.set(sweptNN, plannedGateway{uid: "uid-0", policy: annotations.ApplyAuto}, false)
	if g, _ := p.get(sweptNN); g.uid != "uid-1" || g.policy != annotations.ApplyManual || !p.has(one) || p.has(two) {
		t.Errorf("planned %+v; want uid-1's, under manual", g)
	}
	p.saw(two) // another uid's tombstone
	p.forget(sweptNN, "uid-2")
	if g, _ := p.get(sweptNN); g.last != one {
		t.Errorf("planned %+v after another uid's tombstone and removal; want uid-1's as planned", g)
	}
	p.forget(sweptNN, "uid-1")
	if _, ok := p.get(sweptNN); ok {
		t.Error("uid-1's workspace not forgotten")
	}
}
