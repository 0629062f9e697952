package gatewaycontroller

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/preview"
)

// The Gateways an edit concerns: a Gateway of this controller's class
// itself; for a route, the Gateways of this class it names now or named
// before, each with its routes as they would be (the edited route's new
// version in, its old one out). A stored edit gets no preview.
func TestPreviewConcerns(t *testing.T) {
	gwc, kube := gwfake.NewSimpleClientset(), kubefake.NewClientset()
	ctx := t.Context()
	create := func(err error) { testkit.Must(t, err) }
	_, err := gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName}}, metav1.CreateOptions{})
	create(err)
	_, err = gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "other.example/c"}}, metav1.CreateOptions{})
	create(err)
	for name, class := range map[string]string{"gw": "example", "gw-2": "example", "theirs": "other"} {
		_, err := gwc.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class)}}, metav1.CreateOptions{})
		create(err)
	}
	route := func(name string, parents ...string) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
		for _, p := range parents {
			r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{Name: gatewayv1.ObjectName(p), Namespace: ptr.To(gatewayv1.Namespace("infra"))})
		}
		return r
	}
	for _, r := range []*gatewayv1.HTTPRoute{route("shop", "gw"), route("other", "gw")} {
		_, err := gwc.GatewayV1().HTTPRoutes("team-a").Create(ctx, r, metav1.CreateOptions{})
		create(err)
	}
	// The API server serves TCPRoutes and GRPCRoutes (discovery says
	// so): db names gw.
	gwc.Resources = []*metav1.APIResourceList{{GroupVersion: gatewayv1.GroupVersion.String(), APIResources: []metav1.APIResource{{Name: "tcproutes"}, {Name: "grpcroutes"}}}}
	_, err = gwc.GatewayV1().TCPRoutes("team-a").Create(ctx, &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"},
		Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: route("", "gw").Spec.ParentRefs}}}, metav1.CreateOptions{})
	create(err)
	c := watching(t, gwc, kube, &Cloud{})
	req := func(kind string, cur, old runtime.Object) *admissionv1.AdmissionRequest {
		return dryRunOf(t, kind, cur, old)
	}
	names := func(gws []*gatewayv1.Gateway) []string {
		var out []string
		for _, g := range gws {
			out = append(out, g.Name)
		}
		return out
	}

	// shop moves from gw to gw-2 and theirs: both of ours, not theirs.
	moved := route("shop", "gw-2", "theirs")
	moved.Spec.Hostnames = []gatewayv1.Hostname{"new.example"}
	e, err := c.concerned(req("HTTPRoute", moved, route("shop", "gw")))
	testkit.Must(t, err)
	gws, routes := e.gws, e.now
	if got := names(gws); len(got) != 2 || got[0] != "gw-2" || got[1] != "gw" {
		t.Fatalf("concerned %v, want gw-2 (named now) and gw (named before)", got)
	}
	if rs := routes(gws[0]).http; len(rs) != 1 || rs[0].Name != "shop" || len(rs[0].Spec.Hostnames) != 1 {
		t.Errorf("gw-2's routes %v, want the edited shop", rs)
	}
	if rs := routes(gws[1]); len(rs.http) != 1 || rs.http[0].Name != "other" || len(rs.l4) != 1 || rs.l4[0].Name != "db" {
		t.Errorf("gw's routes %+v, want other only (shop left) and TCPRoute db", rs)
	}
	// A TCPRoute's edit: db moves from gw to gw-2.
	db := &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"}}
	db.Spec.ParentRefs = route("", "gw-2").Spec.ParentRefs
	dbWas := db.DeepCopy()
	dbWas.Spec.ParentRefs = route("", "gw").Spec.ParentRefs
	e, err = c.concerned(req("TCPRoute", db, dbWas))
	testkit.Must(t, err)
	gws, routes = e.gws, e.now
	if got := names(gws); len(got) != 2 || got[0] != "gw-2" || got[1] != "gw" {
		t.Fatalf("concerned %v, want gw-2 and gw", got)
	}
	if rs := routes(gws[0]); len(rs.l4) != 1 || rs.l4[0].Name != "db" || rs.l4[0].Kind != "TCPRoute" {
		t.Errorf("gw-2's routes %+v, want the edited db", rs)
	}
	if rs := routes(gws[1]); len(rs.l4) != 0 || len(rs.http) != 2 {
		t.Errorf("gw's routes %+v, want shop and other, db gone", rs)
	}
	// A GRPCRoute's edit, decided as the HTTPRoute it is read as: api
	// is created on gw-2; gw's routes stay as they are.
	api := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "api"}}
	api.Spec.ParentRefs = route("", "gw-2").Spec.ParentRefs
	e, err = c.concerned(req("GRPCRoute", api, nil))
	testkit.Must(t, err)
	gws, routes = e.gws, e.now
	if got := names(gws); len(got) != 1 || got[0] != "gw-2" {
		t.Fatalf("concerned %v, want gw-2", got)
	}
	if rs := routes(gws[0]).http; len(rs) != 1 || rs[0].Name != "api" || gateway.KindOf(rs[0]) != gateway.KindGRPCRoute {
		t.Errorf("gw-2's routes %v, want the GRPCRoute api", rs)
	}
	e, err = c.concerned(req("Gateway", &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "theirs"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "other"}}, nil))
	if gws = e.gws; err != nil || len(gws) != 0 {
		t.Errorf("another class's Gateway: %v, %v; want none", names(gws), err)
	}

	stored := req("HTTPRoute", moved, nil)
	stored.DryRun = ptr.To(false)
	if resp := c.Preview(func(string) bool { return true })(ctx, stored); !resp.Allowed || len(resp.Warnings) != 0 {
		t.Errorf("a stored edit: %+v, want allowed without warnings", resp)
	}
}

// Of several Gateways' previews, the outcome is the worst.
func TestWorse(t *testing.T) {
	for _, tc := range []struct{ a, b, want preview.Outcome }{
		{preview.NoChange, preview.Changes, preview.Changes},
		{preview.Changes, preview.NeedsApproval, preview.NeedsApproval},
		{preview.NeedsApproval, preview.Refused, preview.Refused},
		{preview.Refused, preview.NoChange, preview.Refused},
	} {
		if got := worse(tc.a, tc.b); got != tc.want {
			t.Errorf("worse(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

// A route's dry run previews only the Gateways whose listeners would take
// it, as edited or as it was. Of any other Gateway it names it says only
// that it is not previewed: no plan, no policy, and the same words for a
// Gateway of another namespace that refuses the route, one that does not
// exist and another controller's, so a dry run is no oracle of other
// namespaces' Gateways; of one in the route's own namespace, what the
// route's status would say.
func TestRoutePreviewOnlyWhereTaken(t *testing.T) {
	gwc, kube := gwfake.NewSimpleClientset(), kubefake.NewClientset()
	ctx := t.Context()
	for name, ctrl := range map[string]gatewayv1.GatewayController{"example": ControllerName, "other": "other.example/c"} {
		_, err := gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.GatewayClassSpec{ControllerName: ctrl}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	all := gatewayv1.NamespacesFromAll
	for _, g := range []struct {
		ns, name, class string
		allowed         *gatewayv1.AllowedRoutes
	}{
		{"infra", "shared", "example", &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}},
		{"infra", "closed", "example", nil}, // Same: team-a's routes are refused
		{"infra", "theirs", "other", &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}},
		{"team-a", "tcp-only", "example", &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "TCPRoute"}}}},
	} {
		_, err := gwc.GatewayV1().Gateways(g.ns).Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: g.name},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(g.class),
				Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: g.allowed}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	c := watching(t, gwc, kube, &Cloud{})
	route := func(parents ...string) *gatewayv1.HTTPRoute {
		r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shop"}}
		for _, p := range parents {
			ns, name, _ := strings.Cut(p, "/")
			r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name), Namespace: ptr.To(gatewayv1.Namespace(ns))})
		}
		return r
	}
	dryRun := func(cur, old *gatewayv1.HTTPRoute) *admissionv1.AdmissionRequest {
		if old == nil {
			return dryRunOf(t, "HTTPRoute", cur, nil)
		}
		return dryRunOf(t, "HTTPRoute", cur, old)
	}
	taking := func(req *admissionv1.AdmissionRequest) ([]string, []string) {
		e, err := c.concerned(req)
		testkit.Must(t, err)
		gws, untaken := c.taking(ctx, e)
		var names []string
		for _, gw := range gws {
			names = append(names, gw.Namespace+"/"+gw.Name)
		}
		return names, untaken
	}

	gws, untaken := taking(dryRun(route("infra/shared", "infra/closed", "infra/missing", "infra/theirs", "team-a/tcp-only"), nil))
	if len(gws) != 1 || gws[0] != "infra/shared" {
		t.Errorf("previewed %v, want infra/shared only (its listener takes the route)", gws)
	}
	if len(untaken) != 4 {
		t.Fatalf("said of the others %q, want a line for each of the 4", untaken)
	}
	// Refusing, missing, another controller's: the same words.
	same := strings.ReplaceAll(untaken[0], "infra/closed", "infra/X")
	for i, name := range []string{"infra/missing", "infra/theirs"} {
		if got := strings.ReplaceAll(untaken[i+1], name, "infra/X"); got != same {
			t.Errorf("Gateway %s: %q, want what is said of one refusing the route: %q", name, got, same)
		}
	}
	for _, l := range untaken[:3] {
		if !strings.HasPrefix(l, preview.Prefix) || strings.Contains(l, "NotAllowedByListeners") || strings.Contains(l, "plan") || strings.Contains(l, "policy") {
			t.Errorf("of another namespace's Gateway: %q, want only that it is not previewed", l)
		}
	}
	if !strings.Contains(untaken[3], "Gateway team-a/tcp-only: not previewed: the route would not attach to it: NotAllowedByListeners: listener http does not take HTTPRoute") {
		t.Errorf("of its own namespace's Gateway: %q, want what the route's status would say", untaken[3])
	}
	// A route leaving a Gateway that took it: that Gateway is previewed
	// (its rules go).
	if gws, _ := taking(dryRun(route("infra/closed"), route("infra/shared"))); len(gws) != 1 || gws[0] != "infra/shared" {
		t.Errorf("leaving infra/shared: previewed %v, want infra/shared", gws)
	}
	// The whole answer to a route no Gateway takes: no plan, no outcome,
	// no preview of the namespace's budget spent.
	spent := 0
	resp := c.Preview(func(string) bool { spent++; return true })(ctx, dryRun(route("infra/closed"), nil))
	if !resp.Allowed || len(resp.Warnings) != 1 || spent != 0 || !strings.Contains(resp.Warnings[0], "not previewed") {
		t.Errorf("a route nothing takes: %+v, %d previews spent; want one line saying it is not previewed", resp, spent)
	}
}

// dryRunOf is a dry run of team-a's object of kind, edited from old (nil:
// created).
func dryRunOf(t *testing.T, kind string, cur, old runtime.Object) *admissionv1.AdmissionRequest {
	t.Helper()
	r := &admissionv1.AdmissionRequest{Kind: metav1.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: kind}, Namespace: "team-a", DryRun: ptr.To(true)}
	raw, err := json.Marshal(cur)
	testkit.Must(t, err)
	r.Object.Raw = raw
	if old != nil {
		raw, err := json.Marshal(old)
		testkit.Must(t, err)
		r.OldObject.Raw = raw
	}
	return r
}

// A dry run from a namespace other than the Gateway's sees the shared
// load balancer's plan without the lines naming other namespaces' objects
// (a team's certificate being renewed), only how many; the Gateway's own
// namespace sees every line.
func TestOwnLines(t *testing.T) {
	lines := []string{
		preview.Prefix + "Gateway infra/gw: cloud change (terraform plan): +1 ~1 -1",
		preview.Prefix + `Gateway infra/gw: UPDATES module.load_balancer.example_load_balancer.this`,
		preview.Prefix + `Gateway infra/gw: REPLACES module.certificates.example_certificate.this["team-a/shop-tls"]`,
		preview.Prefix + `Gateway infra/gw: CREATES module.certificates.example_certificate.this["team-b/web-tls"]`,
		preview.Prefix + `Gateway infra/gw: DESTROYS module.certificates.example_certificate.this["infra/wildcard"]`,
	}
	got := ownLines(lines, "team-b", "infra")
	want := []string{lines[0], lines[1], lines[3], preview.Prefix + "2 change(s) of other namespaces' objects on the shared load balancer, not shown"}
	if !slices.Equal(got, want) {
		t.Errorf("team-b's lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := ownLines(lines, "infra", "infra"); !slices.Equal(got, lines) {
		t.Errorf("the Gateway's namespace's lines: %q", got)
	}
}
