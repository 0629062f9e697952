package tenancy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// The cloud of these tests: team-a's certificate, team-b's, one the
// platform uploaded by hand, and team-a's from another cluster.
var certs = map[string]map[string]string{
	"cert-a":     {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a"},
	"cert-b":     {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-b"},
	"cert-plat":  {"owner": "ops-team"},
	"cert-other": {lbmodel.TagClusterID: "staging", lbmodel.TagServiceNamespace: "team-a"},
	"cert-wild":  {},
	// Uploaded for team-a, and shared with team-b by the platform.
	"cert-a-shared": {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a"},
}

// The load balancers: untagged (nobody's), team-a/web's own (uid u1),
// another Service's, another cluster's.
var lbs = map[string]map[string]string{
	"lb-1":       {},
	"lb-mine":    {lbmodel.TagClusterID: "prod", lbmodel.TagServiceUID: "u1"},
	"lb-other":   {lbmodel.TagClusterID: "prod", lbmodel.TagServiceUID: "u9"},
	"lb-staging": {lbmodel.TagClusterID: "staging"},
}

// The load balancers by name: team-a's, team-a's group front's, team-b's,
// one made by hand (untagged), one of team-a in another cluster.
var lbNames = map[string]map[string]string{
	"shop-a":     {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a", lbmodel.TagServiceUID: "u1"},
	"front-a":    {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a", lbmodel.TagServiceUID: "group:team-a/front"},
	"shop-b":     {lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-b", lbmodel.TagServiceUID: "u2"},
	"legacy":     {"owner": "ops-team"},
	"shop-stage": {lbmodel.TagClusterID: "staging", lbmodel.TagServiceNamespace: "team-a", lbmodel.TagServiceUID: "u1"},
}

// The reserved addresses, by id and by IP: team-a's, team-b's, one made
// by hand (untagged), team-a's of another cluster.
var addresses = map[string]struct {
	id   string
	tags map[string]string
}{
	"addr-a":       {"addr-a", map[string]string{lbmodel.TagManagedBy: "x", lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a"}},
	"198.51.100.1": {"addr-a", map[string]string{lbmodel.TagManagedBy: "x", lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-a"}},
	"addr-b":       {"addr-b", map[string]string{lbmodel.TagManagedBy: "x", lbmodel.TagClusterID: "prod", lbmodel.TagServiceNamespace: "team-b"}},
	"addr-hand":    {"addr-hand", map[string]string{"owner": "ops-team"}},
	"addr-stage":   {"addr-stage", map[string]string{lbmodel.TagManagedBy: "x", lbmodel.TagClusterID: "staging", lbmodel.TagServiceNamespace: "team-a"}},
}

func grant(ns string, from string, name string) gatewayv1beta1.ReferenceGrant {
	return referenceGrant(ns, "", "Service", from, GrantGroup, GrantKind, name)
}

// routeGrant is a grant in ns from routes of kind in namespace from to
// Services (name, or all).
func routeGrant(ns, kind, from, name string) gatewayv1beta1.ReferenceGrant {
	return gatewayGrant(ns, kind, from, "Service", name)
}

// gatewayGrant is a ReferenceGrant of ns from Gateway API objects of kind
// in namespace from to core objects of toKind (all, or name).
func gatewayGrant(ns, kind, from, toKind, name string) gatewayv1beta1.ReferenceGrant {
	return referenceGrant(ns, gatewayv1beta1.GroupName, kind, from, "", toKind, name)
}

// referenceGrant is a ReferenceGrant of ns from objects of fromGroup and
// fromKind in namespace from to objects of toGroup and toKind (all, or
// name).
func referenceGrant(ns, fromGroup, fromKind, from, toGroup, toKind, name string) gatewayv1beta1.ReferenceGrant {
	to := gatewayv1beta1.ReferenceGrantTo{Group: gatewayv1beta1.Group(toGroup), Kind: gatewayv1beta1.Kind(toKind)}
	if name != "" {
		n := gatewayv1beta1.ObjectName(name)
		to.Name = &n
	}
	return gatewayv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.Group(fromGroup), Kind: gatewayv1beta1.Kind(fromKind), Namespace: gatewayv1beta1.Namespace(from)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{to},
		},
	}
}

// pods are the pods by IP the authorizer's PodAt finds.
var pods = map[string]PodAddress{
	"10.244.1.5":  {Namespace: "team-b"},
	"10.244.2.7":  {Namespace: "team-a"},
	"fd00:244::5": {Namespace: "team-b"},
	"10.0.0.4":    {Namespace: "team-b", HostNetwork: true},
	"10.244.9.9":  {Namespace: "team-b"},
	"10.244.9.10": {Namespace: "kube-system"},
}

// listenerGateways are the Gateways ListenerSets name, by namespace/name:
// each with its spec.allowedListeners; namespaceLabels what a selector
// reads.
var (
	listenerGateways = map[string]*gatewayv1.Gateway{
		"infra/shared": gatewayAllowing("shared", gatewayv1.NamespacesFromSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"listeners": "infra"}}),
		"infra/same":   gatewayAllowing("same", gatewayv1.NamespacesFromSame, nil),
		"infra/all":    gatewayAllowing("all", gatewayv1.NamespacesFromAll, nil),
		"infra/closed": {ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "closed"}},
	}
	namespaceLabels = map[string]map[string]string{"team-b": {"listeners": "infra"}, "team-a": {}}
)

func gatewayAllowing(name string, from gatewayv1.FromNamespaces, sel *metav1.LabelSelector) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
		Spec: gatewayv1.GatewaySpec{AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &from, Selector: sel}}}}
}

func authorizer(grants ...gatewayv1beta1.ReferenceGrant) *Authorizer {
	return &Authorizer{
		ClusterID: "prod",
		Shared: []SharedCertificate{{ID: "cert-plat", Namespaces: []string{"team-b"}}, {ID: "cert-wild", Namespaces: []string{"*"}},
			{ID: "cert-a-shared", Namespaces: []string{"team-b"}}, {ID: "cert-gone", Namespaces: []string{"team-b"}}},
		AdoptionAllowed: func(ns string) bool { return ns == "team-a" },
		Sources: Sources{
			CertificateTags: func(_ context.Context, id string) (map[string]string, bool, error) {
				t, ok := certs[id]
				return t, ok, nil
			},
			LoadBalancerTags: func(_ context.Context, id string) (map[string]string, bool, error) {
				t, ok := lbs[id]
				return t, ok, nil
			},
			LoadBalancerByName: func(_ context.Context, name string) (map[string]string, bool, error) {
				t, ok := lbNames[name]
				return t, ok, nil
			},
			Address: func(_ context.Context, ref string) (string, map[string]string, bool, error) {
				a, ok := addresses[ref]
				return a.id, a.tags, ok, nil
			},
			PodAt: func(_ context.Context, ip string) (PodAddress, bool, error) {
				p, ok := pods[ip]
				return p, ok, nil
			},
			Gateway: func(_ context.Context, ns, name string) (*gatewayv1.Gateway, bool, error) {
				gw, ok := listenerGateways[ns+"/"+name]
				return gw, ok, nil
			},
			NamespaceLabels: func(ns string) map[string]string { return namespaceLabels[ns] },
			Grants: func(_ context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
				var out []gatewayv1beta1.ReferenceGrant
				for _, g := range grants {
					if g.Namespace == ns {
						out = append(out, g)
					}
				}
				return out, nil
			},
		},
	}
}

// One row per reference type and rule: the tenant boundary as a table.
func TestAuthorize(t *testing.T) {
	teamA := objectref.Ref{Kind: objectref.KindService, Namespace: "team-a", Name: "web", UID: "u1"}
	teamB := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web", UID: "u2"}
	cert := func(id string) Reference {
		return Reference{Kind: Certificate, Annotation: annotations.LBCertificateIDs, Name: id}
	}
	// certIn is a certificate named by a member of a group of namespace
	// ns: the group's load balancer would serve it.
	certIn := func(id, ns string) Reference {
		return Reference{Kind: Certificate, Annotation: annotations.LBCertificateIDs, Namespace: ns, Name: id}
	}
	group := func(ns, name string) Reference {
		return Reference{Kind: Group, Annotation: annotations.LBGroup, Namespace: ns, Name: name}
	}
	// name is a name for the load balancer of a Service of ns, or of its
	// group (a member's name is its group's).
	name := func(ns, group, n string) Reference {
		return Reference{Kind: LoadBalancerName, Annotation: annotations.LBName, Namespace: ns, Group: group, Name: n}
	}
	svcOf := func(r objectref.Ref) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name, UID: types.UID(r.UID)}}
	}
	ownDefault := renderer.LoadBalancerName(svcOf(teamA), "prod")
	routeA := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: "team-a", Name: "shop"}
	routeB := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: "team-b", Name: "shop"}
	tcpB := objectref.Ref{Kind: objectref.KindTCPRoute, Namespace: "team-b", Name: "db"}
	tlsB := objectref.Ref{Kind: objectref.KindTLSRoute, Namespace: "team-b", Name: "db"}
	backend := func(ns, name string) Reference { return Reference{Kind: RouteBackend, Namespace: ns, Name: name} }
	policyA := objectref.Ref{Kind: objectref.KindBackendTLSPolicy, Namespace: "team-a", Name: "api-tls"}
	gwInfra := objectref.Gateway("infra", "gw", "uid-gw")
	gwCert := func(ns, name string) Reference { return Reference{Kind: GatewayCertificate, Namespace: ns, Name: name} }
	address := func(v string) Reference {
		return Reference{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: v}
	}
	addressGrant := func(ns, from, id string) gatewayv1beta1.ReferenceGrant {
		return referenceGrant(ns, "", "Service", from, GrantGroup, GrantAddressKind, id)
	}
	const notAnAddress = "it is not a reserved address of namespace team-b, nor one whose namespace lets Services of team-b take it"
	// A Gateway's spec.addresses: no annotation, the same rule with
	// Gateways for Services.
	gwA, gwB := objectref.Gateway("team-a", "gw", "uid-gw-a"), objectref.Gateway("team-b", "gw", "uid-gw-b")
	gwAddress := func(v string) Reference { return Reference{Kind: ReservedAddress, Name: v} }
	gatewayAddressGrant := func(ns, from, id string) gatewayv1beta1.ReferenceGrant {
		return referenceGrant(ns, gatewayv1beta1.GroupName, "Gateway", from, GrantGroup, GrantAddressKind, id)
	}
	const notAGatewayAddress = "it is not a reserved address of namespace team-b, nor one whose namespace lets Gateways of team-b take it " +
		"(a ReferenceGrant there from Gateway (gateway.networking.k8s.io) in team-b to group loadbalancer.example.com, kind Address)"
	podTarget := func(ns, ip string) Reference { return Reference{Kind: PodTarget, Namespace: ns, Name: ip} }
	const notAPod = "it is not the IP of a pod of namespace team-b"
	// hostname is host name h on a Gateway where namespace holder holds it.
	hostname := func(holder, h string) Reference { return Reference{Kind: GatewayHostname, Namespace: holder, Name: h} }
	hostGrant := func(ns, kind, from, name string) gatewayv1beta1.ReferenceGrant {
		return referenceGrant(ns, gatewayv1beta1.GroupName, kind, from, GrantHostnameGroup, GrantHostnameKind, name)
	}
	// A ListenerSet of ns naming Gateway infra/gw, and its listener's
	// certificate.
	setOf := func(ns string) objectref.Ref {
		return objectref.Ref{Kind: "ListenerSet", Namespace: ns, Name: "team-listeners"}
	}
	parentGateway := func(name string) Reference {
		return Reference{Kind: ListenerSetGateway, Namespace: "infra", Name: name}
	}
	const takesNone = "the Gateway takes no ListenerSets (spec.allowedListeners.namespaces.from None, the default)"
	const noHostGrant = "the namespace holding it on the Gateway has no ReferenceGrant from HTTPRoutes of namespace team-b to group gateway.example.com, kind Hostname"
	cases := []struct {
		name   string
		from   objectref.Ref
		ref    Reference
		grants []gatewayv1beta1.ReferenceGrant
		// refused: a word of the refusal; "" allowed.
		refused string
	}{
		{name: "own namespace's certificate", from: teamA, ref: cert("cert-a")},
		{name: "another namespace's certificate (hijack)", from: teamB, ref: cert("cert-a"), refused: "not a certificate of this namespace"},
		{name: "a certificate that does not exist: same words", from: teamB, ref: cert("cert-nope"), refused: "not a certificate of this namespace"},
		{name: "own namespace's certificate of another cluster", from: teamA, ref: cert("cert-other"), refused: "not a certificate of this namespace"},
		{name: "platform certificate shared with the namespace", from: teamB, ref: cert("cert-plat")},
		{name: "platform certificate not shared with it", from: teamA, ref: cert("cert-plat"), refused: "sharedCertificates"},
		{name: "certificate shared with every namespace", from: teamA, ref: cert("cert-wild")},
		// The load balancer serving it must be able to (the provider's rule).
		{name: "shared certificate that carries another namespace's tenant tags", from: teamB, ref: cert("cert-a-shared"), refused: "serves only certificates of this namespace"},
		{name: "shared certificate the cloud does not have", from: teamB, ref: cert("cert-gone"), refused: "no such certificate"},
		{name: "a home member's own certificate on its group's load balancer", from: teamA, ref: certIn("cert-a", "team-a")},
		{name: "a guest's own certificate on the owner's load balancer", from: teamB, ref: certIn("cert-b", "team-a"), refused: "load balancer of namespace team-a (the group's)"},
		{name: "a guest's untagged shared certificate on the owner's load balancer", from: teamB, ref: certIn("cert-plat", "team-a")},
		{name: "a guest naming the owner's certificate", from: teamB, ref: certIn("cert-a", "team-a"), refused: "not a certificate of this namespace"},
		// A BackendTLSPolicy's target Service and CA ConfigMap: its own
		// namespace only, whatever grants say.
		{name: "BackendTLSPolicy target Service of its namespace", from: policyA, ref: Reference{Kind: BackendTLSTarget, Namespace: "team-a", Name: "api"}},
		{name: "BackendTLSPolicy CA ConfigMap of its namespace", from: policyA, ref: Reference{Kind: BackendTLSCACertificate, Namespace: "team-a", Name: "ca"}},
		{name: "BackendTLSPolicy target Service of another namespace", from: policyA, ref: Reference{Kind: BackendTLSTarget, Namespace: "team-b", Name: "api"},
			grants:  []gatewayv1beta1.ReferenceGrant{referenceGrant("team-b", gatewayv1beta1.GroupName, "BackendTLSPolicy", "team-a", "", "Service", "")},
			refused: "its own namespace only"},
		{name: "BackendTLSPolicy CA ConfigMap of another namespace", from: policyA, ref: Reference{Kind: BackendTLSCACertificate, Namespace: "team-b", Name: "ca"},
			refused: "its own namespace only"},
		{name: "TLS Secret of its namespace", from: teamA, ref: Reference{Kind: TLSSecret, Annotation: annotations.LBTLSSecrets, Namespace: "team-a", Name: "tls"}},
		{name: "TLS Secret of another namespace", from: teamA, ref: Reference{Kind: TLSSecret, Annotation: annotations.LBTLSSecrets, Namespace: "team-b", Name: "tls"}, refused: "own namespace"},
		{name: "group of its namespace", from: teamA, ref: group("team-a", "front")},
		{name: "group of another namespace, no grant", from: teamB, ref: group("team-a", "front"), refused: "no ReferenceGrant"},
		{name: "group of another namespace, granted for all groups", from: teamB, ref: group("team-a", "front"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "")}},
		{name: "group of another namespace, granted for this group", from: teamB, ref: group("team-a", "front"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "front")}},
		{name: "granted for another group only", from: teamB, ref: group("team-a", "front"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "back")}, refused: "no ReferenceGrant"},
		{name: "grant to another namespace's Services", from: teamB, ref: group("team-a", "front"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-c", "")}, refused: "no ReferenceGrant"},
		{name: "grant made by the guest in its own namespace", from: teamB, ref: group("team-a", "front"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-b", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "adoption where allowed", from: teamA, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-1"}},
		{name: "adoption where not allowed", from: teamB, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-1"}, refused: "does not allow adoption"},
		{name: "adoption of its own load balancer", from: teamA, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-mine"}},
		// Another owner's and a missing one: the same words.
		{name: "adoption of another Service's", from: teamA, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-other"}, refused: "it is not a load balancer this Service may adopt: it does not exist, or its owner tags name another cluster or object"},
		{name: "adoption of another cluster's", from: teamA, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-staging"}, refused: "it is not a load balancer this Service may adopt: it does not exist, or its owner tags name another cluster or object"},
		{name: "adoption of a missing one", from: teamA, ref: Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-gone"}, refused: "it is not a load balancer this Service may adopt: it does not exist, or its owner tags name another cluster or object"},
		{name: "a name nobody has", from: teamA, ref: name("team-a", "", "shop-new")},
		{name: "the name of its own load balancer", from: teamA, ref: name("team-a", "", "shop-a")},
		{name: "the name of its group's load balancer", from: teamA, ref: name("team-a", "front", "front-a")},
		{name: "a guest naming the group's load balancer's name (ignored: not the primary)", from: teamB, ref: name("team-a", "front", "front-a")},
		{name: "the name of an untagged load balancer (adoption)", from: teamA, ref: name("team-a", "", "legacy")},
		{name: "the name of another namespace's load balancer (squatting)", from: teamB, ref: name("team-b", "", "shop-a"), refused: "reserved for or used by another owner"},
		{name: "the name of its namespace's load balancer in another cluster", from: teamA, ref: name("team-a", "", "shop-stage"), refused: "reserved for or used by another owner"},
		{name: "its own default name", from: teamA, ref: name("team-a", "", ownDefault)},
		{name: "its group's default name", from: teamA, ref: name("team-a", "front", renderer.GroupLoadBalancerName("prod", "team-a", "front"))},
		{name: "another namespace's group's default name (squatting)", from: teamB, ref: name("team-b", "", renderer.GroupLoadBalancerName("prod", "team-a", "front")), refused: "reserved for another owner"},
		{name: "another Service's default name", from: teamB, ref: name("team-b", "", ownDefault), refused: "reserved for another owner"},
		{name: "a group's default name for another group", from: teamA, ref: name("team-a", "back", renderer.GroupLoadBalancerName("prod", "team-a", "front")), refused: "reserved for another owner"},
		{name: "another cluster's default form", from: teamA, ref: name("team-a", "", renderer.LoadBalancerName(svcOf(teamA), "staging")), refused: "reserved for another owner"},
		{name: "a name like the default form but not it", from: teamA, ref: name("team-a", "", "k8s-"+strings.Repeat("A", 28))},
		{name: "route backend of its namespace", from: routeA, ref: backend("team-a", "web")},
		{name: "route backend of another namespace, no grant", from: routeB, ref: backend("team-a", "web"), refused: "no ReferenceGrant from HTTPRoutes of namespace team-b"},
		{name: "route backend, granted for all Services", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "HTTPRoute", "team-b", "")}},
		{name: "route backend, granted for this Service", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "HTTPRoute", "team-b", "web")}},
		{name: "route backend, granted for another Service only", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "HTTPRoute", "team-b", "db")}, refused: "no ReferenceGrant"},
		{name: "route backend, granted to another kind of route", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "TCPRoute", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "TCPRoute backend of another namespace, no grant", from: tcpB, ref: backend("team-a", "db"), refused: "no ReferenceGrant from TCPRoutes of namespace team-b"},
		{name: "TCPRoute backend, granted to HTTPRoutes only", from: tcpB, ref: backend("team-a", "db"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "HTTPRoute", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "TCPRoute backend, granted to TCPRoutes", from: tcpB, ref: backend("team-a", "db"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "TCPRoute", "team-b", "db")}},
		{name: "TLSRoute backend, granted to TCPRoutes only", from: tlsB, ref: backend("team-a", "db"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "TCPRoute", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "route backend, a group grant is not a Service grant", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "route backend, a grant the route's namespace made", from: routeB, ref: backend("team-a", "web"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-b", "HTTPRoute", "team-b", "")}, refused: "no ReferenceGrant"},
		{name: "reserved address of its namespace, by id", from: teamA, ref: address("addr-a")},
		{name: "reserved address of its namespace, by IP", from: teamA, ref: address("198.51.100.1")},
		// Another namespace's, a missing one, one made by hand, another
		// cluster's: the same words, naming no owner.
		{name: "reserved address of another namespace, no grant", from: teamB, ref: address("addr-a"), refused: notAnAddress},
		{name: "reserved address of another namespace by IP, no grant", from: teamB, ref: address("198.51.100.1"), refused: notAnAddress},
		{name: "a reserved address that does not exist", from: teamB, ref: address("addr-gone"), refused: notAnAddress},
		{name: "an address made by hand (untagged)", from: teamB, ref: address("addr-hand"), refused: notAnAddress},
		{name: "an address of another cluster", from: teamA, ref: address("addr-stage"), refused: "it is not a reserved address of namespace team-a"},
		{name: "reserved address of another namespace, granted for all", from: teamB, ref: address("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{addressGrant("team-a", "team-b", "")}},
		{name: "reserved address by IP, granted for it by id", from: teamB, ref: address("198.51.100.1"), grants: []gatewayv1beta1.ReferenceGrant{addressGrant("team-a", "team-b", "addr-a")}},
		{name: "reserved address, granted for another address only", from: teamB, ref: address("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{addressGrant("team-a", "team-b", "addr-x")}, refused: notAnAddress},
		{name: "reserved address, a group grant is not an address grant", from: teamB, ref: address("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", "")}, refused: notAnAddress},
		{name: "reserved address, a grant the taker's namespace made", from: teamB, ref: address("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{addressGrant("team-b", "team-b", "")}, refused: notAnAddress},
		{name: "reserved address, a grant to Gateways is not a grant to Services", from: teamB, ref: address("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{gatewayAddressGrant("team-a", "team-b", "")}, refused: notAnAddress},
		{name: "Gateway address of its namespace, by IP", from: gwA, ref: gwAddress("198.51.100.1")},
		{name: "Gateway address of its namespace, by id", from: gwA, ref: gwAddress("addr-a")},
		{name: "Gateway address of another namespace, no grant", from: gwB, ref: gwAddress("198.51.100.1"), refused: notAGatewayAddress},
		{name: "Gateway address that does not exist", from: gwB, ref: gwAddress("192.0.2.1"), refused: notAGatewayAddress},
		{name: "Gateway address of another cluster", from: gwA, ref: gwAddress("addr-stage"), refused: "it is not a reserved address of namespace team-a, nor one whose namespace lets Gateways"},
		{name: "Gateway address made by hand", from: gwB, ref: gwAddress("addr-hand"), refused: notAGatewayAddress},
		{name: "Gateway address, a grant to Services is not a grant to Gateways", from: gwB, ref: gwAddress("198.51.100.1"), grants: []gatewayv1beta1.ReferenceGrant{addressGrant("team-a", "team-b", "")}, refused: notAGatewayAddress},
		{name: "Gateway address by IP, granted to Gateways for it by id", from: gwB, ref: gwAddress("198.51.100.1"), grants: []gatewayv1beta1.ReferenceGrant{gatewayAddressGrant("team-a", "team-b", "addr-a")}},
		{name: "Gateway address, granted to Gateways for another address only", from: gwB, ref: gwAddress("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{gatewayAddressGrant("team-a", "team-b", "addr-x")}, refused: notAGatewayAddress},
		{name: "Gateway address, a grant the Gateway's namespace made", from: gwB, ref: gwAddress("addr-a"), grants: []gatewayv1beta1.ReferenceGrant{gatewayAddressGrant("team-b", "team-b", "")}, refused: notAGatewayAddress},
		{name: "Gateway certificate of its namespace", from: gwInfra, ref: gwCert("infra", "tls")},
		{name: "Gateway certificate of another namespace, no grant", from: gwInfra, ref: gwCert("team-a", "tls"), refused: "no ReferenceGrant from Gateways of namespace infra to its Secrets"},
		{name: "Gateway certificate, granted for all Secrets", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "Gateway", "infra", "Secret", "")}},
		{name: "Gateway certificate, granted for this Secret", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "Gateway", "infra", "Secret", "tls")}},
		{name: "Gateway certificate, granted for another Secret only", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "Gateway", "infra", "Secret", "db-password")}, refused: "no ReferenceGrant"},
		{name: "Gateway certificate, granted to routes, not Gateways", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "HTTPRoute", "infra", "Secret", "")}, refused: "no ReferenceGrant"},
		{name: "Gateway certificate, a Service grant is not a Secret grant", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "Gateway", "infra", "Service", "")}, refused: "no ReferenceGrant"},
		{name: "Gateway certificate, a grant the Gateway's namespace made", from: gwInfra, ref: gwCert("team-a", "tls"), grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("infra", "Gateway", "infra", "Secret", "")}, refused: "no ReferenceGrant"},
		{name: "host name its namespace holds", from: routeB, ref: hostname("team-b", "shop.example")},
		{name: "host name another namespace holds, no grant", from: routeB, ref: hostname("team-a", "shop.example"), refused: noHostGrant},
		{name: "host name, granted for all", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "HTTPRoute", "team-b", "")}},
		{name: "host name, granted for it", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "HTTPRoute", "team-b", "shop.example")}},
		{name: "wildcard host name, granted for it", from: routeB, ref: hostname("team-a", "*.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "HTTPRoute", "team-b", "*.example")}},
		{name: "host name, granted for another only", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "HTTPRoute", "team-b", "api.example")}, refused: noHostGrant},
		{name: "host name, granted to TLSRoutes only", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "TLSRoute", "team-b", "")}, refused: noHostGrant},
		{name: "TLSRoute SNI name, granted to TLSRoutes", from: tlsB, ref: hostname("team-a", "db.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-a", "TLSRoute", "team-b", "db.example")}},
		{name: "host name, a Service grant is not a host name grant", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{routeGrant("team-a", "HTTPRoute", "team-b", "")}, refused: noHostGrant},
		{name: "pod target, a pod of the Service's namespace", from: teamB, ref: podTarget("team-b", "10.244.1.5")},
		{name: "pod target, IPv6", from: teamB, ref: podTarget("team-b", "fd00:244::5")},
		{name: "pod target, another namespace's pod", from: teamB, ref: podTarget("team-b", "10.244.2.7"), refused: notAPod},
		{name: "pod target, the system's pod", from: teamB, ref: podTarget("team-b", "10.244.9.10"), refused: notAPod},
		{name: "pod target, no pod (a node, the metadata API)", from: teamB, ref: podTarget("team-b", "169.254.169.254"), refused: notAPod},
		{name: "pod target, a host-network pod is its node", from: teamB, ref: podTarget("team-b", "10.0.0.4"), refused: "host's network"},
		{name: "pod target, of a Service of another namespace", from: teamA, ref: podTarget("team-b", "10.244.1.5"), refused: notAPod},
		{name: "ListenerSet on a Gateway whose selector selects its namespace", from: setOf("team-b"), ref: parentGateway("shared")},
		{name: "ListenerSet on a Gateway whose selector does not select its namespace", from: setOf("team-a"), ref: parentGateway("shared"), refused: "selector does not select namespace team-a"},
		{name: "ListenerSet on a Gateway taking every namespace's", from: setOf("team-a"), ref: parentGateway("all")},
		{name: "ListenerSet on a Gateway without allowedListeners (None)", from: setOf("team-b"), ref: parentGateway("closed"), refused: takesNone},
		{name: "ListenerSet of another namespace on a Gateway taking its own (Same)", from: setOf("team-b"), ref: parentGateway("same"), refused: "its own namespace only"},
		{name: "ListenerSet of the Gateway's namespace (Same)", from: setOf("infra"), ref: parentGateway("same")},
		{name: "ListenerSet on a Gateway that does not exist: the same words as None", from: setOf("team-b"), ref: parentGateway("gone"), refused: takesNone},
		{name: "ListenerSet certificate of another namespace, granted to Gateways only", from: setOf("team-b"), ref: gwCert("team-a", "tls"),
			grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "Gateway", "team-b", "Secret", "")}, refused: "no ReferenceGrant from ListenerSets of namespace team-b to its Secrets"},
		{name: "ListenerSet certificate of another namespace, granted to ListenerSets", from: setOf("team-b"), ref: gwCert("team-a", "tls"),
			grants: []gatewayv1beta1.ReferenceGrant{gatewayGrant("team-a", "ListenerSet", "team-b", "Secret", "tls")}},
		{name: "host name, a grant the taker's namespace made", from: routeB, ref: hostname("team-a", "shop.example"), grants: []gatewayv1beta1.ReferenceGrant{hostGrant("team-b", "HTTPRoute", "team-b", "")}, refused: noHostGrant},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := authorizer(c.grants...).Authorize(context.Background(), c.from, []Reference{c.ref})
			var refused *RefusedError
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.refused != "" && !errors.As(err, &refused):
				t.Fatalf("want a refusal, got %v", err)
			case c.refused != "" && !strings.Contains(err.Error(), c.refused):
				t.Fatalf("refusal %q does not say %q", err, c.refused)
			}
			if refused != nil {
				msg := err.Error()
				if !strings.Contains(msg, string(c.ref.Annotation)) {
					t.Errorf("refusal %q does not name the annotation", msg)
				}
				// A host name's holder is not even named by its reference.
				if c.ref.Kind == GatewayHostname && strings.Contains(refused.Reason, c.ref.Namespace) {
					t.Errorf("refusal %q names the holder %s", refused.Reason, c.ref.Namespace)
				}
				// Never another tenant's object: no owner, no tag.
				for _, leak := range []string{"team-a", lbmodel.TagServiceNamespace, "ops-team", "prod"} {
					if leak != c.from.Namespace && c.ref.Namespace != leak && strings.Contains(msg, leak) {
						t.Errorf("refusal %q names %q", msg, leak)
					}
				}
			}
		})
	}
}

func TestAuthorizeReadFailureDecidesNothing(t *testing.T) {
	a := authorizer()
	a.CertificateTags = func(context.Context, string) (map[string]string, bool, error) {
		return nil, false, errors.New("cloud down")
	}
	err := a.Authorize(context.Background(), objectref.Ref{Namespace: "team-a"}, []Reference{{Kind: Certificate, Name: "cert-a"}})
	var refused *RefusedError
	if err == nil || errors.As(err, &refused) || !strings.Contains(err.Error(), "cloud down") {
		t.Fatalf("a failed read must be an error, not a decision: %v", err)
	}
}

// Grants that cannot be read refuse: no stale allow, and no error that a
// retry would turn into the last grants read.
func TestAuthorizeUnreadableGrantsRefuse(t *testing.T) {
	a := authorizer(grant("team-a", "team-b", ""))
	a.Grants = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
		return nil, fmt.Errorf("list: %w", ErrGrantsUnreadable)
	}
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
	err := a.Authorize(context.Background(), from, []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-a", Name: "front"}})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "cannot read the ReferenceGrants of namespace team-a") {
		t.Fatalf("unreadable grants: %v, want a refusal saying so", err)
	}
	// Nor for another namespace's address, said without its namespace.
	err = a.Authorize(context.Background(), from, []Reference{{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: "addr-a"}})
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "cannot read the ReferenceGrants that decide it") || strings.Contains(err.Error(), "team-a") {
		t.Fatalf("unreadable grants for an address: %v, want a refusal saying so without the owner", err)
	}
	// Nor for a host name another namespace holds on a Gateway.
	route := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: "team-b", Name: "shop"}
	err = a.Authorize(context.Background(), route, []Reference{{Kind: GatewayHostname, Namespace: "team-a", Name: "shop.example"}})
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "cannot read the ReferenceGrants that decide it") || strings.Contains(refused.Reason, "team-a") {
		t.Fatalf("unreadable grants for a host name: %v, want a refusal saying so without the holder", err)
	}
	// Its own namespace's group needs no grant.
	if err := a.Authorize(context.Background(), from, []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-b", Name: "front"}}); err != nil {
		t.Fatalf("own group with grants unreadable: %v", err)
	}
}

func TestReferences(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "web"}}
	lb := &annotations.LoadBalancer{CertificateIDs: []string{"cert-1"}, TLSSecrets: []string{"tls"}, Group: annotations.Group{Namespace: "team-a", Name: "front"}, AdoptID: "lb-9", Name: "shop"}
	got := References(svc, lb)
	want := []Reference{
		// Served by the group's load balancer.
		{Kind: Certificate, Annotation: annotations.LBCertificateIDs, Namespace: "team-a", Name: "cert-1"},
		{Kind: TLSSecret, Annotation: annotations.LBTLSSecrets, Namespace: "team-b", Name: "tls"},
		{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-a", Name: "front"},
		{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: "lb-9"},
		// A member's name is its group's.
		{Kind: LoadBalancerName, Annotation: annotations.LBName, Namespace: "team-a", Group: "front", Name: "shop"},
	}
	if len(got) != len(want) {
		t.Fatalf("References = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reference %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if refs := References(svc, &annotations.LoadBalancer{CertificateIDs: []string{"cert-1"}}); len(refs) != 1 || refs[0].Namespace != "team-b" {
		t.Errorf("a Service's own load balancer serves its certificates: %+v", refs)
	}
	if refs := References(svc, &annotations.LoadBalancer{Group: annotations.Group{Name: "own"}}); len(refs) != 1 || refs[0].Namespace != "team-b" {
		t.Errorf("a group without a namespace is the Service's: %+v", refs)
	}
	if refs := References(svc, &annotations.LoadBalancer{Name: "shop"}); len(refs) != 1 || refs[0] != (Reference{Kind: LoadBalancerName, Annotation: annotations.LBName, Namespace: "team-b", Name: "shop"}) {
		t.Errorf("a Service's own name: %+v", refs)
	}
	// An address's namespace is the cloud's to tell.
	if refs := References(svc, &annotations.LoadBalancer{Address: "198.51.100.1"}); len(refs) != 1 || refs[0] != (Reference{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: "198.51.100.1"}) {
		t.Errorf("a reserved address: %+v", refs)
	}
}

// A refusal for want of grants the controller has not read says so and is
// Unread (tried again soon): the grants unreadable, or a grant the API
// server has and the watch has not delivered yet (created a moment
// before). That grant is only read to say so: it allows nothing before
// the watch has it. Without one, the refusal is the plain one, not Unread.
func TestRefusalForGrantsNotReadYet(t *testing.T) {
	from := objectref.Ref{Kind: objectref.KindService, Namespace: "team-b", Name: "web"}
	group := []Reference{{Kind: Group, Annotation: annotations.LBGroup, Namespace: "team-a", Name: "front"}}
	address := []Reference{{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: "addr-a"}}
	a := authorizer() // the watch has no grant
	now := time.Now()
	a.live.now = func() time.Time { return now }
	var refused *RefusedError
	if err := a.Authorize(t.Context(), from, group); !errors.As(err, &refused) || refused.Unread || !strings.Contains(refused.Reason, "has no ReferenceGrant") {
		t.Fatalf("no grant anywhere: %v (unread %v), want the plain refusal", err, refused != nil && refused.Unread)
	}
	a.GrantsNow = func(_ context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
		if ns != "team-a" && ns != "" { // "": every namespace's (an address's)
			return nil, nil
		}
		return []gatewayv1beta1.ReferenceGrant{grant("team-a", "team-b", ""), referenceGrant("team-a", "", "Service", "team-b", GrantGroup, GrantAddressKind, "")}, nil
	}
	err := a.Authorize(t.Context(), from, group)
	if !errors.As(err, &refused) || !refused.Unread || !strings.Contains(refused.Reason, "has not read the newest ReferenceGrants of namespace team-a yet") {
		t.Fatalf("a grant not delivered yet: %v, want an Unread refusal saying so", err)
	}
	// An address's refusal names no namespace, whose name would tell whose it is.
	if err := a.Authorize(t.Context(), from, address); !errors.As(err, &refused) || !refused.Unread || strings.Contains(refused.Reason, "team-a") {
		t.Fatalf("an address's grant not delivered yet: %v, want an Unread refusal without the owner", err)
	}
	// The live read says nothing when it fails: the plain refusal (once
	// the last one kept is GrantsNowTTL old).
	a.GrantsNow = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
		return nil, errors.New("timeout")
	}
	now = now.Add(GrantsNowTTL)
	if err := a.Authorize(t.Context(), from, group); !errors.As(err, &refused) || refused.Unread {
		t.Fatalf("the live read failing: %v, want the plain refusal", err)
	}
	a.Grants = func(context.Context, string) ([]gatewayv1beta1.ReferenceGrant, error) {
		return nil, fmt.Errorf("pending: %w", ErrGrantsUnreadable)
	}
	if err := a.Authorize(t.Context(), from, group); !errors.As(err, &refused) || !refused.Unread || !strings.Contains(refused.Reason, "cannot read the ReferenceGrants of namespace team-a") {
		t.Fatalf("grants unreadable: %v, want an Unread refusal saying so", err)
	}
}
