package gateway

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/tenancy"
)

// update rewrites the golden files of the translation:
// go test ./gateway/ -run TestTranslateGolden -update
var update = flag.Bool("update", false, "rewrite testdata/translate/*.out.yaml from what Translate and Program decide")

// translateIn is a golden case's input: the Gateway API objects, and what
// the controller reads beside them (namespaces' labels, Services' node
// ports, ReferenceGrants, the claims kept, the HTTPS listeners'
// certificates).
type translateIn struct {
	// Now is when the Gateway is looked at (2026-01-01T00:00:00Z if
	// unset); Grace the claims' grace.
	Now   time.Time `json:"now"`
	Grace string    `json:"grace"`
	// Namespaces are the namespaces' labels, by name.
	Namespaces map[string]map[string]string `json:"namespaces"`
	// Services are the node ports of the Services backendRefs name, by
	// namespace/name and then port (node port 0: a ClusterIP Service).
	Services map[string]map[int32]int32 `json:"services"`
	// AppProtocols are the appProtocol of Services' ports, by
	// namespace/name and then port (none: unset).
	AppProtocols map[string]map[int32]string `json:"appProtocols"`
	// ReferenceGrants decide consent (host names, backends of another
	// namespace) as package tenancy does.
	ReferenceGrants []gatewayv1beta1.ReferenceGrant `json:"referenceGrants"`
	Claims          Claims                          `json:"claims"`
	// Certificates are the keys each HTTPS listener's certificateRefs
	// resolved to, by listener name.
	Certificates map[gatewayv1.SectionName][]string `json:"certificates"`
	// Unresolved say why a listener's certificateRefs do not resolve
	// (InvalidCertificateRef), by listener name.
	Unresolved map[gatewayv1.SectionName]string `json:"unresolved"`
	Gateway    *gatewayv1.Gateway               `json:"gateway"`
	HTTPRoutes []*gatewayv1.HTTPRoute           `json:"httpRoutes"`
	GRPCRoutes []*gatewayv1.GRPCRoute           `json:"grpcRoutes"`
	TLSRoutes  []*gatewayv1.TLSRoute            `json:"tlsRoutes"`
	TCPRoutes  []*gatewayv1.TCPRoute            `json:"tcpRoutes"`
	UDPRoutes  []*gatewayv1.UDPRoute            `json:"udpRoutes"`
	// ListenerSets are those naming the Gateway (their listeners'
	// certificates are by ListenerID: namespace/name/listener).
	ListenerSets []*gatewayv1.ListenerSet `json:"listenerSets"`
}

// translateOut is what is decided: the load balancer (the model the
// engine renders), what the statuses say, and the claims kept.
type translateOut struct {
	LoadBalancer lbmodel.LoadBalancer `json:"loadBalancer"`
	// Listeners are, by name, the routes attached and why a listener is
	// refused or not built ("Reason: message").
	Listeners map[gatewayv1.SectionName]listenerOut `json:"listeners"`
	// Routes are each route's state under its parentRefs, by "Kind
	// namespace/name".
	Routes      map[string][]parentOut `json:"routes,omitempty"`
	Unreachable []string               `json:"unreachable,omitempty"`
	Claims      Claims                 `json:"claims"`
	Moves       []string               `json:"moves,omitempty"`
	Recheck     *time.Time             `json:"recheck,omitempty"`
	// Addresses are what spec.addresses asks for (none: it names none).
	Addresses *Addresses `json:"addresses,omitempty"`
	// ListenerSets are each ListenerSet's state, by namespace/name, and
	// AttachedListenerSets the Gateway's count of those accepted.
	ListenerSets         map[string]listenerSetOut `json:"listenerSets,omitempty"`
	AttachedListenerSets int32                     `json:"attachedListenerSets,omitempty"`
}

type listenerSetOut struct {
	Accepted  string                                `json:"accepted"`
	Listeners map[gatewayv1.SectionName]listenerOut `json:"listeners,omitempty"`
}

type listenerOut struct {
	Attached int32  `json:"attached"`
	Refused  string `json:"refused,omitempty"`
	Pending  string `json:"pending,omitempty"`
}

type parentOut struct {
	SectionName  string `json:"sectionName,omitempty"`
	Accepted     string `json:"accepted"`
	ResolvedRefs string `json:"resolvedRefs"`
}

// TestTranslateGolden: each testdata/translate/NAME.in.yaml, translated
// and programmed, is NAME.out.yaml (rewritten with -update).
func TestTranslateGolden(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join("testdata", "translate", "*.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) < 6 {
		t.Fatalf("found %d golden cases in testdata/translate, want at least 6", len(ins))
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var c translateIn
			if err := yaml.UnmarshalStrict(b, &c); err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			got, err := yaml.Marshal(c.decide(t))
			if err != nil {
				t.Fatal(err)
			}
			outPath := strings.TrimSuffix(in, ".in.yaml") + ".out.yaml"
			if *update {
				if err := os.WriteFile(outPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what is decided now (run with -update to rewrite it, and review the diff):\n%s", outPath, got)
			}
		})
	}
}

// decide runs Translate and Program on the case, as the controller does.
func (c translateIn) decide(t *testing.T) translateOut {
	t.Helper()
	if c.Gateway == nil {
		t.Fatal("the case has no gateway")
	}
	now := c.Now
	if now.IsZero() {
		now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var grace time.Duration
	if c.Grace != "" {
		var err error
		if grace, err = time.ParseDuration(c.Grace); err != nil {
			t.Fatalf("grace: %v", err)
		}
	}
	var l4 []L4Route
	for _, r := range c.TLSRoutes {
		l4 = append(l4, TLSRoute(r))
	}
	for _, r := range c.TCPRoutes {
		l4 = append(l4, TCPRoute(r))
	}
	for _, r := range c.UDPRoutes {
		l4 = append(l4, UDPRoute(r))
	}
	http := slices.Clone(c.HTTPRoutes)
	for _, r := range c.GRPCRoutes {
		http = append(http, GRPCRoute(r))
	}
	b := Boundary{ListenerSets: c.ListenerSets, Claims: c.Claims, Now: now, Grace: grace, Consent: c.consent}
	tr := Translate(c.Gateway, http, l4, func(ns string) map[string]string { return c.Namespaces[ns] }, c.backend, b)
	certs := Certificates{}
	for l, keys := range c.Certificates {
		certs[l] = ListenerCertificates{Keys: keys}
	}
	for l, why := range c.Unresolved {
		certs[l] = ListenerCertificates{Unresolved: &Reason{Reason: string(gatewayv1.ListenerReasonInvalidCertificateRef), Message: why}}
	}
	lb, pending, unreachable := Program(c.Gateway, tr, certs)
	unresolved := map[gatewayv1.SectionName]Reason{}
	for l, lc := range certs {
		if lc.Unresolved != nil {
			unresolved[l] = *lc.Unresolved
		}
	}
	tr = WithUnresolved(tr, unresolved)

	out := translateOut{LoadBalancer: lb, Listeners: map[gatewayv1.SectionName]listenerOut{}, Routes: map[string][]parentOut{},
		Unreachable: unreachable, Claims: tr.Claims}
	for _, l := range c.Gateway.Spec.Listeners {
		lo := listenerOut{Attached: tr.Attached[l.Name]}
		if r, ok := tr.Refused[l.Name]; ok {
			lo.Refused = said(r)
		}
		if r, ok := pending[l.Name]; ok {
			lo.Pending = said(r)
		}
		out.Listeners[l.Name] = lo
	}
	for key, ps := range tr.Parents {
		var outs []parentOut
		for _, p := range ps {
			po := parentOut{Accepted: said(p.Accepted), ResolvedRefs: said(p.ResolvedRefs)}
			if p.Ref.SectionName != nil {
				po.SectionName = string(*p.Ref.SectionName)
			}
			outs = append(outs, po)
		}
		out.Routes[fmt.Sprintf("%s %s", key.Kind, key.NamespacedName)] = outs
	}
	for _, m := range tr.Moves {
		out.Moves = append(out.Moves, m.String())
	}
	if !tr.Recheck.IsZero() {
		out.Recheck = &tr.Recheck
	}
	if len(c.Gateway.Spec.Addresses) > 0 {
		out.Addresses = &tr.Addresses
	}
	out.AttachedListenerSets = tr.AttachedListenerSets
	for k, st := range tr.ListenerSets {
		if out.ListenerSets == nil {
			out.ListenerSets = map[string]listenerSetOut{}
		}
		so := listenerSetOut{Accepted: said(st.Accepted)}
		for _, l := range st.Listeners {
			lo := listenerOut{Attached: l.Attached}
			if l.Refused != nil {
				lo.Refused = said(*l.Refused)
			}
			if r, ok := pending[l.ID]; ok {
				lo.Pending = said(r)
			}
			if so.Listeners == nil {
				so.Listeners = map[gatewayv1.SectionName]listenerOut{}
			}
			so.Listeners[l.Name] = lo
		}
		out.ListenerSets[k.String()] = so
	}
	return out
}

// said is a condition as people read it: "Reason: message".
func said(r Reason) string {
	if r.Message == "" {
		return r.Reason
	}
	return r.Reason + ": " + r.Message
}

// backend resolves a backendRef as the controller does: a Service of the
// route's namespace (or of another, with its ReferenceGrant), on the node
// port of the port named, in the pool of every node, in the protocol its
// appProtocol says.
func (c translateIn) backend(route objectref.Ref, ref gatewayv1.BackendRef) (lbmodel.Backend, gatewayv1.RouteConditionReason, string) {
	ns := route.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	if ns != route.Namespace && !slices.ContainsFunc(c.grantsOf(ns), func(g gatewayv1beta1.ReferenceGrant) bool {
		return tenancy.AllowsRoute(g, route.Kind, route.Namespace, string(ref.Name))
	}) {
		return lbmodel.Backend{}, gatewayv1.RouteReasonRefNotPermitted, fmt.Sprintf("Service %s/%s: no ReferenceGrant of namespace %s allows it", ns, ref.Name, ns)
	}
	ports, ok := c.Services[ns+"/"+string(ref.Name)]
	if !ok {
		return lbmodel.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s not found", ns, ref.Name)
	}
	var port int32
	if ref.Port != nil {
		port = *ref.Port
	}
	nodePort, ok := ports[port]
	if !ok {
		return lbmodel.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s has no port %d", ns, ref.Name, port)
	}
	var app *string
	if a, ok := c.AppProtocols[ns+"/"+string(ref.Name)][port]; ok {
		app = &a
	}
	return lbmodel.Backend{TargetPoolID: "tp-every-node", Port: int(nodePort), Protocol: BackendProtocol(route.Kind, app)}, "", ""
}

// consent is the holder's ReferenceGrant to a route serving its host
// name, decided by package tenancy.
func (c translateIn) consent(route RouteKey, owner, hostname string) bool {
	return slices.ContainsFunc(c.grantsOf(owner), func(g gatewayv1beta1.ReferenceGrant) bool {
		return tenancy.AllowsHostname(g, string(route.Kind), route.Namespace, hostname)
	})
}

func (c translateIn) grantsOf(namespace string) []gatewayv1beta1.ReferenceGrant {
	var out []gatewayv1beta1.ReferenceGrant
	for _, g := range c.ReferenceGrants {
		if g.Namespace == namespace {
			out = append(out, g)
		}
	}
	return out
}
