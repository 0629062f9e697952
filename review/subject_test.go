package review

import (
	"reflect"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/reviewapi"
)

// installAuthorPolicy installs the admission policy (and its binding)
// that makes the API server check Services' author annotation.
func installAuthorPolicy(t *testing.T, f *reviewFixture) {
	t.Helper()
	for _, o := range reviewtest.Policies(t, reviewapi.AuthorAdmissionPolicy) {
		testkit.Must(t, f.client.Tracker().Add(o))
	}
}

// authored is a Service of shop whose annotation names its author,
// written now (its managedFields say so, as the API server's do).
func authored(name, author string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name),
		Labels: map[string]string{"tier": name}, Annotations: map[string]string{reviewapi.AuthorAnnotation: author},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: ptr.To(metav1.Now())}}}}
}

// TestServiceSubjectAuthor: a Service's change has contributors (a
// deletion none, unless it hands the load balancer over): its author only while the API server checks the
// annotation, else the Service as an input whose editor is unknown; and
// every TLS Secret it names, whose editor is never known.
func TestServiceSubjectAuthor(t *testing.T) {
	svc := authored("web", "carol")
	svc.Annotations[string(annotations.LBTLSSecrets)] = "web-tls,api-tls"
	svc.Annotations[string(annotations.LBHTTPSPorts)] = "443"
	secrets := []records.Input{
		{Resource: records.ResourceSecrets, Namespace: "shop", Name: "web-tls"},
		{Resource: records.ResourceSecrets, Namespace: "shop", Name: "api-tls"},
	}
	unchecked := newReviewFixture(t, "", false)
	s := unchecked.ServiceSubject(t.Context(), annotations.Read(svc), records.KindChange)
	want := records.Contributors{Unverified: append([]records.Input{{Resource: records.ResourceServices, Namespace: "shop", Name: "web"}}, secrets...)}
	if !reflect.DeepEqual(s.contrib, want) {
		t.Errorf("contributors without the author policy: %+v; want %+v", s.contrib, want)
	}
	f := newReviewFixture(t, "", false)
	installAuthorPolicy(t, f)
	s = f.ServiceSubject(t.Context(), annotations.Read(svc), records.KindChange)
	want = records.Contributors{Authors: []string{"carol"}, Unverified: secrets}
	if !reflect.DeepEqual(s.contrib, want) || s.ref != objectref.Service(svc) || s.event != svc || s.kind != records.KindChange || s.meta.Labels["tier"] != "web" {
		t.Errorf("subject %+v; want carol's change of shop/web with its Secrets, events on the Service", s)
	}
	// Its load balancer going because its type changed: carol's doing.
	if s := f.ServiceSubject(t.Context(), annotations.Read(svc), records.KindDestroy); !reflect.DeepEqual(s.contrib, want) {
		t.Errorf("a destroy of a Service that lives on has contributors %+v; want %+v", s.contrib, want)
	}
	deleted := svc.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if s := f.ServiceSubject(t.Context(), annotations.Read(deleted), records.KindDestroy); !s.contrib.Empty() {
		t.Errorf("a deletion has contributors %+v; want none", s.contrib)
	}
	// Handed over on deletion: carol set the deletion policy.
	deleted.Annotations[string(annotations.LBDeletionPolicy)] = annotations.DeletionRetain
	if s := f.ServiceSubject(t.Context(), annotations.Read(deleted), records.KindDestroy); !reflect.DeepEqual(s.contrib, want) {
		t.Errorf("a hand-over has contributors %+v; want %+v", s.contrib, want)
	}
}

// An author annotation read within policyPropagation of the author
// policy's install may have been written before an API server enforced
// the policy: it is not vouched for, and the Service is an input whose
// editor is unknown.
func TestNewAuthorPolicyIsNotReliedOn(t *testing.T) {
	f := newReviewFixture(t, "", false)
	for _, o := range reviewtest.Policies(t, reviewapi.AuthorAdmissionPolicy) {
		if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok {
			p = p.DeepCopy()
			p.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * time.Second))
			o = p
		}
		testkit.Must(t, f.client.Tracker().Add(o))
	}
	s := f.ServiceSubject(t.Context(), annotations.Read(authored("web", "dave")), records.KindChange)
	want := records.Contributors{Unverified: []records.Input{{Resource: records.ResourceServices, Namespace: "shop", Name: "web"}}}
	if !reflect.DeepEqual(s.contrib, want) {
		t.Errorf("contributors 10 s after the author policy was installed: %+v; want %+v", s.contrib, want)
	}
}

// An author annotation written before the author policy was in force was
// never checked, however late the Service is first planned: a Service last
// written before the policy (its managedFields), or whose managedFields
// tell nothing, is an input whose editor is unknown; one written since,
// its author's.
func TestAuthorWrittenBeforeThePolicyIsNotTrusted(t *testing.T) {
	f := newReviewFixture(t, "", false)
	installed := time.Now().Add(-time.Hour)
	for _, o := range reviewtest.Policies(t, reviewapi.AuthorAdmissionPolicy) {
		if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok {
			p = p.DeepCopy()
			p.CreationTimestamp = metav1.NewTime(installed)
			o = p
		}
		if b, ok := o.(*admissionv1.ValidatingAdmissionPolicyBinding); ok {
			b = b.DeepCopy()
			b.CreationTimestamp = metav1.NewTime(installed)
			o = b
		}
		testkit.Must(t, f.client.Tracker().Add(o))
	}
	written := func(at time.Time, sub string) *v1.Service {
		svc := authored("web", "mallory-says-dave")
		svc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: ptr.To(metav1.NewTime(at))}}
		if sub != "" {
			// The controller's own status write after the policy proves
			// nothing of the annotation.
			svc.ManagedFields = append(svc.ManagedFields, metav1.ManagedFieldsEntry{Manager: "ccm", Operation: metav1.ManagedFieldsOperationUpdate,
				Subresource: sub, Time: ptr.To(metav1.Now())})
		}
		return svc
	}
	unverified := records.Contributors{Unverified: []records.Input{{Resource: records.ResourceServices, Namespace: "shop", Name: "web"}}}
	for _, c := range []struct {
		name string
		svc  *v1.Service
		want records.Contributors
	}{
		{"written before the policy, first planned now", written(installed.Add(-time.Minute), ""), unverified},
		{"written before, its status since", written(installed.Add(-time.Minute), "status"), unverified},
		{"managedFields stripped", func() *v1.Service { s := authored("web", "dave"); s.ManagedFields = nil; return s }(), unverified},
		{"written since the policy", written(installed.Add(time.Minute), ""), records.Contributors{Authors: []string{"mallory-says-dave"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if s := f.ServiceSubject(t.Context(), annotations.Read(c.svc), records.KindChange); !reflect.DeepEqual(s.contrib, c.want) {
				t.Errorf("contributors %+v; want %+v", s.contrib, c.want)
			}
		})
	}
}

// TestGroupSubject: a group's subject takes the rules' view from its
// first member and its events to the caller or, without one, to its
// record; a member's deletion changes a group that keeps members.
func TestGroupSubject(t *testing.T) {
	f := newReviewFixture(t, "", false)
	installAuthorPolicy(t, f)
	g := annotations.Group{Namespace: "shop", Name: "front"}
	a, b := authored("a", "alice"), authored("b", "bob")
	const ws = "prod-group-shop-front-0123456789abcdef"
	cases := []struct {
		name    string
		members []*v1.Service
		caller  *v1.Service
		kind    string
		// wantKind and wantAuthors are the subject's; onRecord: its events
		// go to the record's ConfigMap.
		wantKind    string
		wantAuthors []string
		onRecord    bool
	}{
		// Every member's author: the change of one is planned from another's
		// reconcile as well.
		{name: "a member's change", members: []*v1.Service{a, b}, caller: b, kind: records.KindChange, wantKind: records.KindChange, wantAuthors: []string{"alice", "bob"}},
		{name: "a member's deletion", members: []*v1.Service{a}, caller: b, kind: records.KindDestroy, wantKind: records.KindChange},
		{name: "the last member's deletion", caller: b, kind: records.KindDestroy, wantKind: records.KindDestroy},
		{name: "a drift check", members: []*v1.Service{a, b}, kind: records.KindDrift, wantKind: records.KindDrift, onRecord: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := f.GroupSubject(t.Context(), g, ws, c.members, c.caller, c.kind)
			if s.ref != objectref.Group("shop", "front") || s.kind != c.wantKind || !slices.Equal(s.contrib.Authors, c.wantAuthors) {
				t.Errorf("subject %v kind %q authors %q; want group shop/front, %q, %q", s.ref, s.kind, s.contrib.Authors, c.wantKind, c.wantAuthors)
			}
			if len(c.members) > 0 && s.meta.Labels["tier"] != c.members[0].Name {
				t.Errorf("rules see labels %v; want the first member's", s.meta.Labels)
			}
			checkEventsGo(t, f, s, c.caller, c.onRecord, ws)
		})
	}
	// The record keeps the members the rendering said, once known.
	s := f.GroupSubject(t.Context(), g, ws, []*v1.Service{a}, a, records.KindChange).WithMembers([]*v1.Service{a, b})
	if len(s.members) != 2 || !slices.Equal(s.contrib.Authors, []string{"alice"}) {
		t.Errorf("with members: %+v", s)
	}
}

// checkEventsGo checks where s's events go: to obj, or (onRecord) to the
// ConfigMap of ws's record in the controller's namespace.
func checkEventsGo(t *testing.T, f *reviewFixture, s Subject, obj *v1.Service, onRecord bool, ws string) {
	t.Helper()
	if !onRecord {
		if s.event != obj {
			t.Errorf("events go to %v; want the Service", s.event)
		}
		return
	}
	cm, ok := s.event.(*v1.ConfigMap)
	if !ok || cm.Name != records.IndexName(ws) || cm.Namespace != f.cfg.Review.Namespace {
		t.Errorf("events go to %#v; want the ConfigMap %s/%s", s.event, f.cfg.Review.Namespace, records.IndexName(ws))
	}
}

// TestDriftSubject: a drift check's subject is its object's, of kind
// drift, whatever the kind of object the engine converged.
func TestDriftSubject(t *testing.T) {
	f := newReviewFixture(t, "", false)
	svc := authored("web", "carol")
	a, b := authored("a", ""), authored("b", "")
	const ws = "prod-some-workspace-0123456789abcdef"
	cases := []struct {
		name     string
		k        engine.Known
		ref      objectref.Ref
		onRecord bool
	}{
		{name: "service", k: engine.Known{Ref: objectref.Service(svc), Service: svc}, ref: objectref.Service(svc)},
		{name: "group", k: engine.Known{Ref: objectref.Group("shop", "front"), Group: &engine.KnownGroup{Namespace: "shop", Name: "front", Members: []*v1.Service{b, a}}},
			ref: objectref.Group("shop", "front"), onRecord: true},
		{name: "target pools", k: engine.Known{Ref: objectref.TargetPools}, ref: objectref.TargetPools, onRecord: true},
		{name: "route set", k: engine.Known{Ref: objectref.RouteSet}, ref: objectref.RouteSet, onRecord: true},
		{name: "gateway", k: engine.Known{Ref: objectref.Gateway("infra", "gw", "uid-gw")}, ref: objectref.Gateway("infra", "gw", "uid-gw"), onRecord: true},
		{name: "address", k: engine.Known{Ref: objectref.Address("shop", "k8s-a-x")}, ref: objectref.Address("shop", "k8s-a-x"), onRecord: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.k.Job = engine.Job{Key: ws}
			s := f.DriftSubject(t.Context(), c.k)
			if s.ref != c.ref || s.kind != records.KindDrift || !s.contrib.Empty() {
				t.Errorf("subject %v kind %q contributors %+v; want %v, a drift check, none", s.ref, s.kind, s.contrib, c.ref)
			}
			checkEventsGo(t, f, s, c.k.Service, c.onRecord, ws)
		})
	}
	g := f.DriftSubject(t.Context(), cases[1].k)
	if len(g.members) != 2 || g.members[0] != a {
		t.Errorf("group members %v; want them in rendering order (a, b)", g.members)
	}
}

// TestAddressSubject: an address's change (a reservation, a move) has as
// contributors every Service involved, the one letting go as much as the
// one taking it; its events go to the taker, else (detached) to the
// record's ConfigMap; rules see the taker.
func TestAddressSubject(t *testing.T) {
	f := newReviewFixture(t, "", false)
	installAuthorPolicy(t, f)
	blue, green := authored("blue", "bob"), authored("green", "grace")
	const ws = "prod-address-shop-k8s-a-x-0123456789abcdef"
	in := func(svc *v1.Service) *annotations.Service { return annotations.Read(svc) }
	s := f.AddressSubject(t.Context(), "shop", "k8s-a-x", ws, in(green), []*annotations.Service{in(green), in(blue)}, records.KindChange)
	if s.ref != objectref.Address("shop", "k8s-a-x") || s.kind != records.KindChange || !slices.Equal(s.contrib.Authors, []string{"grace", "bob"}) {
		t.Errorf("move: subject %v kind %q authors %q; want address shop/k8s-a-x, a change, grace and bob", s.ref, s.kind, s.contrib.Authors)
	}
	if s.meta.Labels["tier"] != "green" {
		t.Errorf("rules see labels %v; want the taker's", s.meta.Labels)
	}
	checkEventsGo(t, f, s, green, false, ws)
	detached := f.AddressSubject(t.Context(), "shop", "k8s-a-x", ws, nil, []*annotations.Service{in(blue)}, records.KindChange)
	if !slices.Equal(detached.contrib.Authors, []string{"bob"}) {
		t.Errorf("detach: authors %q; want bob", detached.contrib.Authors)
	}
	checkEventsGo(t, f, detached, nil, true, ws)
}

// TestGatewaySubject: a Gateway's change has as contributors the Gateway,
// each route and ListenerSet naming it, each TLS Secret its listeners name, each
// Service its rules forward to and the BackendTLSPolicies and CA ConfigMaps
// deciding how they reach it, inputs whose editor is unknown (so nobody
// who may edit one approves it), each once; a deletion has none; events
// go to the Gateway by reference (it is not a kind of client-go's scheme).
func TestGatewaySubject(t *testing.T) {
	f := newReviewFixture(t, "", false)
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"}}
	in := GatewayInputs{
		Routes: []objectref.Ref{
			{Kind: objectref.KindHTTPRoute, Namespace: "team-a", Name: "shop"},
			{Kind: objectref.KindHTTPRoute, Namespace: "team-b", Name: "web"},
			{Kind: objectref.KindTCPRoute, Namespace: "team-b", Name: "db"},
			{Kind: objectref.KindListenerSet, Namespace: "team-b", Name: "listeners"},
		},
		Secrets:     []types.NamespacedName{{Namespace: "infra", Name: "cert"}, {Namespace: "team-a", Name: "shop-cert"}},
		Services:    []types.NamespacedName{{Namespace: "team-a", Name: "api"}, {Namespace: "team-a", Name: "api"}},
		TLSPolicies: []types.NamespacedName{{Namespace: "team-a", Name: "api-tls"}},
		ConfigMaps:  []types.NamespacedName{{Namespace: "team-a", Name: "ca"}},
	}
	routes := in.Routes
	s := f.GatewaySubject(gw, in, records.KindChange)
	want := []records.Input{
		{Group: records.GroupGatewayAPI, Resource: records.ResourceGateways, Namespace: "infra", Name: "gw"},
		{Group: records.GroupGatewayAPI, Resource: records.ResourceHTTPRoutes, Namespace: "team-a", Name: "shop"},
		{Group: records.GroupGatewayAPI, Resource: records.ResourceHTTPRoutes, Namespace: "team-b", Name: "web"},
		{Group: records.GroupGatewayAPI, Resource: records.ResourceTCPRoutes, Namespace: "team-b", Name: "db"},
		{Group: records.GroupGatewayAPI, Resource: records.ResourceListenerSets, Namespace: "team-b", Name: "listeners"},
		{Resource: records.ResourceSecrets, Namespace: "infra", Name: "cert"},
		{Resource: records.ResourceSecrets, Namespace: "team-a", Name: "shop-cert"},
		{Resource: records.ResourceServices, Namespace: "team-a", Name: "api"},
		{Group: records.GroupGatewayAPI, Resource: records.ResourceBackendTLSPolicies, Namespace: "team-a", Name: "api-tls"},
		{Resource: records.ResourceConfigMaps, Namespace: "team-a", Name: "ca"},
	}
	if !reflect.DeepEqual(s.contrib, records.Contributors{Unverified: want}) {
		t.Errorf("contributors %+v, want %+v", s.contrib, want)
	}
	if got := want[1].String(); got != "HTTPRoute team-a/shop" {
		t.Errorf("input named %q", got)
	}
	if got := want[3].String(); got != "TCPRoute team-b/db" {
		t.Errorf("input named %q", got)
	}
	if s.ref != objectref.Gateway("infra", "gw", "uid-gw") {
		t.Errorf("ref %+v", s.ref)
	}
	ev, ok := s.event.(*v1.ObjectReference)
	if !ok || ev.Kind != "Gateway" || ev.APIVersion != "gateway.networking.k8s.io/v1" || ev.Name != "gw" || ev.UID != "uid-gw" {
		t.Errorf("events go to %#v", s.event)
	}
	if got := want[4].String(); got != "ListenerSet team-b/listeners" {
		t.Errorf("input named %q", got)
	}
	if got := want[7].String(); got != "Service team-a/api" {
		t.Errorf("input named %q", got)
	}
	if got := want[8].String() + ", " + want[9].String(); got != "BackendTLSPolicy team-a/api-tls, ConfigMap team-a/ca" {
		t.Errorf("inputs named %q", got)
	}
	if d := f.GatewaySubject(gw, GatewayInputs{Routes: routes}, records.KindDestroy); !d.contrib.Empty() {
		t.Errorf("a deletion's contributors %+v, want none", d.contrib)
	}
}

// TestPodPoolSubject: a pod pool's change has as contributors the
// Service (its selector) and whatever makes its namespace's pods, each an
// input whose editor is unknown, so that whoever scales a Deployment or
// writes an EndpointSlice there cannot approve the plan it causes; the
// pool's destroy after the Service's deletion has none.
func TestPodPoolSubject(t *testing.T) {
	f := newReviewFixture(t, "", false)
	svc := authored("web", "carol")
	const ws = "prod-podpool-shop-web"
	ref := objectref.PodPool("shop", "web", 80, v1.ProtocolTCP)
	s := f.PodPoolSubject(ref, svc, ws, records.KindChange)
	want := append([]records.Input{{Resource: records.ResourceServices, Namespace: "shop", Name: "web"}}, records.PodMakers("shop")...)
	if !reflect.DeepEqual(s.contrib, records.Contributors{Unverified: want}) {
		t.Errorf("contributors %+v, want %+v", s.contrib, want)
	}
	for _, in := range records.PodMakers("shop") {
		if in.Namespace != "shop" || in.Name != "" {
			t.Errorf("pod maker %+v: want every object of its resource in shop", in)
		}
	}
	if got := want[3].String(); got != "any Deployment of namespace shop" {
		t.Errorf("input named %q", got)
	}
	checkEventsGo(t, f, s, svc, false, ws)
	if d := f.PodPoolSubject(ref, svc, ws, records.KindDestroy); !reflect.DeepEqual(d.contrib.Unverified, want) {
		t.Errorf("a destroy while the Service lives (it stopped asking for pod targets): contributors %+v, want %+v", d.contrib, want)
	}
	gone := svc.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if d := f.PodPoolSubject(ref, gone, ws, records.KindDestroy); !d.contrib.Empty() {
		t.Errorf("the destroy of a deleted Service's pool: contributors %+v, want none", d.contrib)
	}
	if d := f.PodPoolSubject(ref, nil, ws, records.KindDestroy); !d.contrib.Empty() {
		t.Errorf("the destroy of a gone Service's pool: contributors %+v, want none", d.contrib)
	}
}
