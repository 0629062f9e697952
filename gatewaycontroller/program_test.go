package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/tenancy"
)

// fakeEngine answers ReconcileGateway with lb and err, and keeps what it
// was asked to build. A fake: these tests check the controller's
// decisions on each answer; the engine itself runs real terraform in its
// own tests and the e2e.
type fakeEngine struct {
	lb *engine.LoadBalancer
	// existing: lb was built before the controller started.
	existing bool
	err      error
	built    []gateway.LoadBalancer
	removed  int
	// removedUIDs are the uids of the Gateways whose load balancers it
	// was asked to destroy.
	removedUIDs []string
	// sets are the rule sets it was asked to converge, in order, and
	// destroyed those it was asked to destroy; setErr answers both.
	sets      []lbmodel.RuleSet
	destroyed []objectref.Ref
	setErr    error
	// calls are "lb" and "set" in the order they were asked.
	calls []string
	mu    sync.Mutex
}

// GetGatewayLoadBalancer is lb once one was built.
func (f *fakeEngine) GetGatewayLoadBalancer(context.Context, gateway.LoadBalancer) (*engine.LoadBalancer, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lb, (len(f.built) > 0 || f.existing) && f.lb != nil, nil
}

func (f *fakeEngine) PreviewRuleSet(context.Context, lbmodel.RuleSet, engine.PolicyObject, string) (*engine.Speculation, []engine.Verdict, error) {
	return nil, nil, errors.New("not in these tests")
}

func (f *fakeEngine) ReconcileRuleSet(_ context.Context, s lbmodel.RuleSet, _ engine.Review) (*engine.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets, f.calls = append(f.sets, s), append(f.calls, "set")
	return &engine.Outcome{}, f.setErr
}

func (f *fakeEngine) DestroyRuleSet(_ context.Context, ref objectref.Ref, _ engine.Review) (*engine.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.destroyed = append(f.destroyed, ref)
	return &engine.Outcome{}, f.setErr
}

func (f *fakeEngine) ReconcileGateway(_ context.Context, g gateway.LoadBalancer, _ map[string]string, _ engine.Review) (*engine.LoadBalancer, *engine.Outcome, error) {
	f.built, f.calls = append(f.built, g), append(f.calls, "lb")
	if f.lb == nil || f.err != nil {
		return f.lb, &engine.Outcome{}, f.err
	}
	// What it holds of routes' rules, as the held_routes output says.
	lb := *f.lb
	lb.HeldRoutes, lb.AllRoutesHeld = nil, false
	for _, r := range g.Rules {
		if r.Route != nil && !slices.Contains(lb.HeldRoutes, r.Route.Key()) {
			lb.HeldRoutes = append(lb.HeldRoutes, r.Route.Key())
		}
	}
	f.lb = &lb
	return f.lb, &engine.Outcome{}, nil
}

func (f *fakeEngine) PreviewGateway(context.Context, gateway.LoadBalancer, map[string]string, engine.PolicyObject, string) (*engine.Speculation, []engine.Verdict, error) {
	return nil, nil, errors.New("not in these tests")
}

func (f *fakeEngine) RemoveGateway(_ context.Context, g gateway.LoadBalancer, _ engine.Review) (*engine.Outcome, error) {
	f.removed++
	f.removedUIDs = append(f.removedUIDs, g.UID)
	return &engine.Outcome{}, f.err
}

// fakeReview runs the change under the policy it is given, and keeps the
// policies and failures; its plan records are records.
type fakeReview struct {
	mu       sync.Mutex // rule sets are run at once
	policies []annotations.ApplyPolicy
	failed   []error
	events   []string
	records  []*records.Record
}

func (f *fakeReview) Records(context.Context) ([]*records.Record, error) { return f.records, nil }

func (f *fakeReview) Run(_ context.Context, _ *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error) {
	f.mu.Lock()
	f.policies = append(f.policies, pol)
	f.mu.Unlock()
	return change(engine.Review{Policy: pol})
}

func (f *fakeReview) GatewaySubject(*gatewayv1.Gateway, review.GatewayInputs, string) review.Subject {
	return review.Subject{}
}
func (f *fakeReview) RuleSetSubject(*gatewayv1.Gateway, review.GatewayInputs, objectref.Ref, string) review.Subject {
	return review.Subject{}
}
func (f *fakeReview) GatewayAddressSubject(*gatewayv1.Gateway, string, string, string) review.Subject {
	return review.Subject{}
}
func (f *fakeReview) Failed(_ review.Subject, err error)       { f.failed = append(f.failed, err) }
func (f *fakeReview) Removed(context.Context, *engine.Outcome) {}
func (f *fakeReview) Eventf(_ review.Subject, _, reason, format string, args ...any) {
	f.events = append(f.events, reason+": "+fmt.Sprintf(format, args...))
}

// fakeInfra has pool tp-all (or poolErr) and reads Secrets with secret.
type fakeInfra struct {
	poolErr error
	secret  func(ctx context.Context, ns, name string) (string, string, error)
}

func (f fakeInfra) Pool(context.Context) (string, error)         { return "tp-all", f.poolErr }
func (f fakeInfra) ExistingPool(context.Context) (string, error) { return "tp-all", f.poolErr }
func (f fakeInfra) TLSSecret(ctx context.Context, ns, name string) (string, string, error) {
	return f.secret(ctx, ns, name)
}

// What building a Gateway comes to, for each answer of the engine and the
// pools: Programmed with the addresses, or Pending/Invalid with why and
// when to look again, the addresses last applied kept; the backends get the pool's id; the Gateway gets the
// finalizer before anything is built.
func TestProgram(t *testing.T) {
	active := &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", IPv6: "2001:db8::7", Status: "active"}
	for _, tc := range []struct {
		name      string
		lb        *engine.LoadBalancer
		err       error
		pool      error
		policy    annotations.ApplyPolicy
		annotated string
		ok        bool
		reason    gatewayv1.GatewayConditionReason
		retry     time.Duration
		has       string
		wantPol   annotations.ApplyPolicy
	}{
		{name: "applied", lb: active, ok: true, reason: gatewayv1.GatewayReasonProgrammed, has: "lb-1"},
		{name: "provisioning", lb: &engine.LoadBalancer{ID: "lb-1", Status: "provisioning"}, reason: gatewayv1.GatewayReasonPending, retry: provisioningRetry, has: "provisioning"},
		{name: "in error", lb: &engine.LoadBalancer{ID: "lb-1", Status: "error"}, reason: gatewayv1.GatewayReasonInvalid, has: "status error"},
		{name: "awaiting approval", err: &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual},
			reason: gatewayv1.GatewayReasonPending, retry: approvalRetry, has: "plan-0123456789ab"},
		{name: "plan-only keeps what serves", lb: active, err: &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyPlanOnly},
			ok: true, reason: gatewayv1.GatewayReasonProgrammed},
		{name: "denied", err: &engine.DeniedError{PlanID: "plan-0123456789ab"}, reason: gatewayv1.GatewayReasonPending, retry: approvalRetry, has: "denied"},
		{name: "failed", err: errors.New("apply: boom"), reason: gatewayv1.GatewayReasonInvalid, retry: provisioningRetry, has: "boom"},
		{name: "no pool yet", pool: errors.New("not read yet"), reason: gatewayv1.GatewayReasonPending, retry: provisioningRetry, has: "target pool of every node"},
		{name: "annotation tightens", lb: active, annotated: "manual", ok: true, reason: gatewayv1.GatewayReasonProgrammed, wantPol: annotations.ApplyManual},
		{name: "annotation cannot loosen", lb: active, policy: annotations.ApplyManual, annotated: "auto", ok: true, reason: gatewayv1.GatewayReasonProgrammed, wantPol: annotations.ApplyManual},
		{name: "unknown annotation is strictest", lb: active, annotated: "yolo", ok: true, reason: gatewayv1.GatewayReasonProgrammed, wantPol: annotations.ApplyPlanOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
				Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
			if tc.annotated != "" {
				gw.Annotations = map[string]string{string(annotations.LBApplyPolicy): tc.annotated}
			}
			gw.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Value: "198.51.100.1"}} // last applied
			client := newClient(t, gw)
			eng, rv := &fakeEngine{lb: tc.lb, err: tc.err}, &fakeReview{}
			c := &Controller{gw: client, services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv, Settings: Settings{Policy: annotations.ApplyAuto},
				Infra: fakeInfra{poolErr: tc.pool}}}
			if tc.policy != "" {
				c.cloud.Policy = tc.policy
			}
			tr := gateway.Translation{Rules: []gateway.Rule{{Name: "team-a/shop/0.0:80", ListenerPort: 80, Priority: 1,
				Backends: []gateway.Backend{{Port: 30001, Weight: 1}}}}}
			p, err := c.program(t.Context(), gw, nil, tr)
			if err != nil {
				t.Fatal(err)
			}
			if p.ok != tc.ok || p.reason != tc.reason || p.retry != tc.retry || !strings.Contains(p.message, tc.has) {
				t.Errorf("programmed %+v; want ok %v, reason %s, retry %s, a message with %q", p, tc.ok, tc.reason, tc.retry, tc.has)
			}
			if tc.ok && (len(p.addresses) != 2 || p.addresses[0].Value != "203.0.113.7" || p.addresses[1].Value != "2001:db8::7") {
				t.Errorf("addresses %+v", p.addresses)
			}
			if !tc.ok && (len(p.addresses) != 1 || p.addresses[0].Value != "198.51.100.1") {
				t.Errorf("addresses %+v, want those last applied kept", p.addresses)
			}
			if tc.wantPol != "" && !slices.Equal(rv.policies, []annotations.ApplyPolicy{tc.wantPol}) {
				t.Errorf("ran under %v, want %s", rv.policies, tc.wantPol)
			}
			cur, err := client.GatewayV1().Gateways("infra").Get(t.Context(), "gw", metav1.GetOptions{})
			if err != nil || !slices.Contains(cur.Finalizers, Finalizer) {
				t.Errorf("finalizers %v, %v; want %s before anything is built", cur.Finalizers, err, Finalizer)
			}
			if tc.pool == nil {
				if len(eng.built) != 1 || eng.built[0].Rules[0].Backends[0].TargetPoolID != "tp-all" || eng.built[0].UID != "uid-gw" {
					t.Errorf("built %+v, want the rule forwarding to pool tp-all", eng.built)
				}
			}
		})
	}
}

// A rule forwarding to a ClusterIP Service: the Gateway is built, the
// rule without that backend, and a warning event names the rule, once
// per change rather than at every look.
func TestProgramUnreachableBackend(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	eng, rv := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}}, &fakeReview{}
	c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv, Infra: fakeInfra{}}}
	tr := gateway.Translation{Rules: []gateway.Rule{{Name: "team-a/shop/0.0:80", ListenerPort: 80, Backends: []gateway.Backend{{Weight: 1}, {Port: 30001, Weight: 1}}}}}
	for range 2 {
		p, err := c.program(t.Context(), gw, nil, tr)
		testkit.Must(t, err)
		if !p.ok {
			t.Fatalf("programmed %+v, want Programmed", p)
		}
	}
	if len(rv.events) != 1 || !strings.Contains(rv.events[0], "BackendUnreachable") || !strings.Contains(rv.events[0], "team-a/shop/0.0:80") {
		t.Errorf("events %q, want one BackendUnreachable naming the rule", rv.events)
	}
	if b := eng.built[1].Rules[0].Backends; len(b) != 1 || b[0].Port != 30001 {
		t.Errorf("built backends %+v, want the node port one only", b)
	}
}

// A Gateway that cannot be built (no HTTP listener) is Invalid, reported,
// and nothing is built or held by a finalizer.
func TestProgramInvalid(t *testing.T) {
	for name, tr := range map[string]gateway.Translation{
		"no HTTP listener": {Refused: map[gatewayv1.SectionName]gateway.Reason{"http": {Reason: "ProtocolConflict"}}},
	} {
		t.Run(name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
				Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
			client := newClient(t, gw)
			eng, rv := &fakeEngine{}, &fakeReview{}
			c := &Controller{gw: client, cloud: &Cloud{Engine: eng, Review: rv, Infra: fakeInfra{}}}
			p, err := c.program(t.Context(), gw, nil, tr)
			if err != nil {
				t.Fatal(err)
			}
			if p.ok || p.reason != gatewayv1.GatewayReasonInvalid || len(rv.failed) != 1 || len(eng.built) != 0 {
				t.Errorf("programmed %+v, failures %v, built %d; want Invalid, reported, nothing built", p, rv.failed, len(eng.built))
			}
			cur, _ := client.GatewayV1().Gateways("infra").Get(t.Context(), "gw", metav1.GetOptions{})
			if len(cur.Finalizers) != 0 {
				t.Errorf("finalizers %v on a Gateway nothing was built for", cur.Finalizers)
			}
		})
	}
}

// newClient is a fake clientset holding gw (created through its v1
// client: given to the constructor, it would be filed under another
// version the scheme also registers).
func newClient(t *testing.T, gw *gatewayv1.Gateway) *gwfake.Clientset {
	t.Helper()
	client := gwfake.NewSimpleClientset()
	if _, err := client.GatewayV1().Gateways(gw.Namespace).Create(t.Context(), gw.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return client
}

// An HTTPS listener's certificateRefs: a Secret of the Gateway's
// namespace is read; one of another namespace only with that namespace's
// ReferenceGrant, and without it is never read (RefNotPermitted); another
// kind, or a Secret that does not check out, is InvalidCertificateRef.
func TestCertificates(t *testing.T) {
	var read []string
	secret := func(_ context.Context, ns, name string) (string, string, error) {
		read = append(read, ns+"/"+name)
		if name == "broken" {
			return "", "", errors.New("is of type \"Opaque\", not kubernetes.io/tls")
		}
		return "CRT " + ns + "/" + name, "KEY " + ns + "/" + name, nil
	}
	grant := gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "certs", Name: "g"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "Gateway", Namespace: "infra"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Secret", Name: ptr.To(gatewayv1beta1.ObjectName("shared"))}},
		}}
	c := &Controller{cloud: &Cloud{Infra: fakeInfra{secret: secret}}, refs: &tenancy.Authorizer{Sources: tenancy.Sources{
		Grants: func(_ context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
			if ns == "certs" {
				return []gatewayv1beta1.ReferenceGrant{grant}, nil
			}
			return nil, nil
		}}}}
	ref := func(ns, kind, name string) gatewayv1.SecretObjectReference {
		r := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
		if ns != "" {
			r.Namespace = ptr.To(gatewayv1.Namespace(ns))
		}
		if kind != "" {
			r.Kind = ptr.To(gatewayv1.Kind(kind))
		}
		return r
	}
	https := func(name string, refs ...gatewayv1.SecretObjectReference) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: refs}}
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{
			https("own", ref("", "", "own-tls")),
			https("granted", ref("certs", "", "shared"), ref("", "Secret", "own-tls")),
			https("not-granted", ref("certs", "", "private")),
			https("kind", ref("", "ConfigMap", "own-tls")),
			https("broken", ref("", "", "broken")),
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		}}}
	certs, pems, keys := c.certificates(t.Context(), gw)
	if got := certs["own"]; got.Unresolved != nil || !slices.Equal(got.Keys, []string{"infra/own-tls"}) {
		t.Errorf("own: %+v", got)
	}
	if got := certs["granted"]; got.Unresolved != nil || !slices.Equal(got.Keys, []string{"certs/shared", "infra/own-tls"}) {
		t.Errorf("granted: %+v", got)
	}
	for name, reason := range map[gatewayv1.SectionName]gatewayv1.ListenerConditionReason{
		"not-granted": gatewayv1.ListenerReasonRefNotPermitted,
		"kind":        gatewayv1.ListenerReasonInvalidCertificateRef,
		"broken":      gatewayv1.ListenerReasonInvalidCertificateRef,
	} {
		if got := certs[name]; got.Unresolved == nil || got.Unresolved.Reason != string(reason) {
			t.Errorf("%s: %+v, want %s", name, got, reason)
		}
	}
	if _, ok := certs["http"]; ok {
		t.Error("an HTTP listener has certificates")
	}
	if slices.Contains(read, "certs/private") {
		t.Error("read a Secret of another namespace without its grant")
	}
	if pems["certs/shared"] != "CRT certs/shared" || keys["infra/own-tls"] != "KEY infra/own-tls" || len(pems) != 2 {
		t.Errorf("pems %v, keys %v", pems, keys)
	}
}

// A Gateway leaving: its load balancer's destroy runs under review; the
// finalizer goes only once it is applied (a destroy waiting for approval
// keeps the Gateway), and a Gateway without the finalizer is let go at
// once, nothing destroyed, unless this controller planned it (whoever
// may update it took the finalizer off, then moved it to another class).
func TestRemove(t *testing.T) {
	for _, tc := range []struct {
		name      string
		finalizer bool
		planned   bool
		err       error
		gone      bool
		destroys  int
	}{
		{name: "destroyed", finalizer: true, gone: true, destroys: 1},
		{name: "destroy awaiting approval", finalizer: true, err: &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual}, destroys: 1},
		{name: "never built", gone: true},
		{name: "finalizer taken off", planned: true, gone: true, destroys: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"}}
			if tc.finalizer {
				gw.Finalizers = []string{Finalizer, "other.example/keep"}
			}
			client := newClient(t, gw)
			gw, err := client.GatewayV1().Gateways("infra").Get(t.Context(), "gw", metav1.GetOptions{})
			testkit.Must(t, err)
			eng, rv := &fakeEngine{err: tc.err}, &fakeReview{}
			c := &Controller{gw: client, cloud: &Cloud{Engine: eng, Review: rv, Infra: fakeInfra{}}}
			if tc.planned {
				c.planned.plan(gw, annotations.ApplyAuto)
			}
			gone, err := c.remove(t.Context(), gw)
			testkit.Must(t, err)
			if gone != tc.gone || eng.removed != tc.destroys {
				t.Errorf("gone %v after %d destroys, want %v after %d", gone, eng.removed, tc.gone, tc.destroys)
			}
			cur, err := client.GatewayV1().Gateways("infra").Get(t.Context(), "gw", metav1.GetOptions{})
			testkit.Must(t, err)
			if has := slices.Contains(cur.Finalizers, Finalizer); has != (tc.finalizer && !tc.gone) {
				t.Errorf("finalizers %v after the removal (gone %v)", cur.Finalizers, tc.gone)
			}
			if tc.finalizer && !slices.Contains(cur.Finalizers, "other.example/keep") {
				t.Errorf("another controller's finalizer went: %v", cur.Finalizers)
			}
		})
	}
}

// fakePods hands out a pool id per Service port and keeps who uses
// which; refused makes Use fail.
type fakePods struct {
	uses    map[string][]lbmodel.ServicePort
	refused error
}

func (f *fakePods) Use(_ context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	if f.refused != nil {
		return nil, f.refused
	}
	f.uses[user] = ports
	out := map[lbmodel.ServicePort]string{}
	for _, p := range ports {
		out[p] = "tp-" + p.Service
	}
	return out, nil
}

func (f *fakePods) Known(context.Context, []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	return nil, errors.New("not in these tests")
}

// With pod targets a rule forwards to each backend Service port's pod
// pool, with port 0, and the pool of every node is not made; a pool that
// cannot be made leaves the Gateway Pending; a Gateway removed uses none.
func TestProgramPodTargets(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	a := lbmodel.ServicePort{Namespace: "team-a", Service: "a", Port: 80, Protocol: "TCP"}
	b := lbmodel.ServicePort{Namespace: "team-a", Service: "b", Port: 80, Protocol: "TCP"}
	tr := gateway.Translation{Rules: []gateway.Rule{{Name: "team-a/shop/0.0:80", ListenerPort: 80, Priority: 1,
		Backends: []gateway.Backend{{Pods: &a, Weight: 1}, {Pods: &b, Weight: 3}}}}}
	eng, rv := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}}, &fakeReview{}
	pods := &fakePods{uses: map[string][]lbmodel.ServicePort{}}
	c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv, Pods: pods,
		Infra: fakeInfra{poolErr: errors.New("the pool of every node is not needed")}, Settings: Settings{Policy: annotations.ApplyAuto, PodTargets: true}}}
	p, err := c.program(t.Context(), gw, nil, tr)
	testkit.Must(t, err)
	if !p.ok {
		t.Fatalf("programmed %+v", p)
	}
	got := eng.built[0].Rules[0].Backends
	if len(got) != 2 || got[0].TargetPoolID != "tp-a" || got[0].Port != 0 || got[1].TargetPoolID != "tp-b" || got[1].Weight != 3 {
		t.Errorf("built backends %+v, want a's and b's pod pools on port 0", got)
	}
	if u := pods.uses["gateway:infra/gw"]; !slices.Equal(u, []lbmodel.ServicePort{a, b}) {
		t.Errorf("uses %v", pods.uses)
	}

	pods.refused = errors.New("pods not listed yet")
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || p.ok || p.reason != gatewayv1.GatewayReasonPending || !strings.Contains(p.message, "pods not listed yet") {
		t.Errorf("pools refused: %+v, %v; want Pending saying why", p, err)
	}
	pods.refused = nil
	if gone, err := c.destroy(t.Context(), gw); !gone || err != nil {
		t.Fatalf("destroy: %v %v", gone, err)
	}
	if u, ok := pods.uses["gateway:infra/gw"]; !ok || len(u) != 0 {
		t.Errorf("after the removal the Gateway uses %v, want none", u)
	}
}

// heldPods are pod pools as the leader keeps them (podpools.Pools): Want
// registers the ports, and the worker applies a new pool at once, but
// for those held (its first plan awaiting approval under
// targetPools.applyPolicy manual); Use applies and waits, failing on a
// held one.
type heldPods struct {
	ids  map[lbmodel.ServicePort]string
	held map[lbmodel.ServicePort]bool
	uses map[string][]lbmodel.ServicePort
}

func (f *heldPods) Want(user string, ports []lbmodel.ServicePort) {
	f.uses[user] = ports
	for _, p := range ports {
		if f.ids[p] == "" && !f.held[p] {
			f.ids[p] = fmt.Sprintf("tp-%s-%d", p.Service, p.Port)
		}
	}
}

func (f *heldPods) Use(_ context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	f.Want(user, ports)
	out := map[lbmodel.ServicePort]string{}
	for _, p := range ports {
		if f.ids[p] == "" {
			return out, fmt.Errorf("%s: %w", p.Ref().Describe(), &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual})
		}
		out[p] = f.ids[p]
	}
	return out, nil
}

func (f *heldPods) Known(_ context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	out := map[lbmodel.ServicePort]string{}
	for _, p := range ports {
		if id := f.ids[p]; id != "" {
			out[p] = id
		}
	}
	return out, nil
}

// Two teams on one Gateway: team-b's new pod pool, its first plan
// awaiting approval, holds back team-b's route alone (Pending, naming its
// own backend, its set kept as applied); the load balancer and team-a's
// changed route are applied meanwhile. Once the pool is applied, team-b's
// set is.
func TestProgramPodPoolHoldsOnlyItsRoute(t *testing.T) {
	gw, _ := twoRoutes()
	a := lbmodel.ServicePort{Namespace: "team-a", Service: "shop", Port: 80, Protocol: "TCP"}
	b := lbmodel.ServicePort{Namespace: "team-b", Service: "web", Port: 80, Protocol: "TCP"}
	b2 := lbmodel.ServicePort{Namespace: "team-b", Service: "web", Port: 8080, Protocol: "TCP"}
	rule := func(name, key string, route *lbmodel.RouteRef, ports ...lbmodel.ServicePort) gateway.Rule {
		r := gateway.Rule{Name: name, ListenerPort: 80, OrderKey: key, Route: route}
		for _, p := range ports {
			r.Backends = append(r.Backends, gateway.Backend{Pods: &p, Weight: 1})
		}
		return r
	}
	tr := gateway.Translation{Rules: []gateway.Rule{rule("team-b/web/0.0:80", "1", webRoute, b),
		rule("team-a/shop/0.0:80", "2", shopRoute, a), catchAll}}
	eng, rv := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}}, &fakeReview{}
	pods := &heldPods{ids: map[lbmodel.ServicePort]string{}, held: map[lbmodel.ServicePort]bool{}, uses: map[string][]lbmodel.ServicePort{}}
	c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv, Pods: pods,
		Infra: fakeInfra{poolErr: errors.New("the pool of every node is not needed")}, Settings: Settings{Policy: annotations.ApplyAuto, PodTargets: true}}}
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || !p.ok {
		t.Fatalf("first program: %+v, %v", p, err)
	}
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-a:shop 1", "lb-1 gw:HTTPRoute:team-b:web 1"}) {
		t.Fatalf("rule sets applied: %q", got)
	}

	// team-b forwards to a new Service port too, whose pool's first plan
	// awaits approval; meanwhile team-a's route changes.
	pods.held[b2] = true
	eng.sets, eng.calls = nil, nil
	tr.Rules = []gateway.Rule{rule("team-b/web/0.0:80", "1", webRoute, b, b2),
		rule("team-a/shop/0.0:80", "2", shopRoute, a), rule("team-a/shop/1.0:80", "3", shopRoute, a), catchAll}
	p, err := c.program(t.Context(), gw, nil, tr)
	if err != nil || !p.ok || p.retry != approvalRetry {
		t.Fatalf("team-b's pool awaiting approval: %+v, %v; want the Gateway programmed, looked at again in %s", p, err, approvalRetry)
	}
	if len(eng.built) != 2 || !slices.Equal(eng.calls, []string{"lb", "set"}) {
		t.Fatalf("built %d times, calls %v; want the load balancer reconciled, then a set", len(eng.built), eng.calls)
	}
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-a:shop 2"}) || eng.sets[0].Rules[1].Backends[0].TargetPoolID != "tp-shop-80" {
		t.Fatalf("rule sets applied %q (%+v); want team-a's changed set alone, on its pool", got, eng.sets)
	}
	if len(eng.destroyed) != 0 {
		t.Errorf("destroyed %v; team-b's set waits as applied", eng.destroyed)
	}
	shop := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "shop"}}
	web := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "web"}}
	if st := p.rules.by[shop]; st.reason != RulesApplied {
		t.Errorf("team-a's route told %+v, want %s", st, RulesApplied)
	}
	if st := p.rules.by[web]; st.reason != RulesPending || st.status != metav1.ConditionUnknown ||
		!strings.Contains(st.message, "team-b/web port 8080") || strings.Contains(st.message, "team-a") {
		t.Errorf("team-b's route told %+v; want Pending, naming its own new backend alone", st)
	}

	// Approved and applied: team-b's set follows.
	pods.held = nil
	eng.sets = nil
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || !p.ok || p.rules.by[web].reason != RulesApplied {
		t.Fatalf("pool applied: %+v, %v", p, err)
	}
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-b:web 1"}) || eng.sets[0].Rules[0].Backends[1].TargetPoolID != "tp-web-8080" {
		t.Fatalf("rule sets applied %q; want team-b's, on its new pool", got)
	}
}
