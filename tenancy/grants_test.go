package tenancy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// refGrant is namespace owner's ReferenceGrant from kind of group in
// namespace from to kind of toGroup, named name (any if "").
func refGrant(group, kind, from, toGroup, toKind, name string) gatewayv1beta1.ReferenceGrant {
	g := gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "owner", Name: "g"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.Group(group), Kind: gatewayv1beta1.Kind(kind), Namespace: gatewayv1beta1.Namespace(from)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: gatewayv1beta1.Group(toGroup), Kind: gatewayv1beta1.Kind(toKind)}}}}
	if name != "" {
		n := gatewayv1beta1.ObjectName(name)
		g.Spec.To[0].Name = &n
	}
	return g
}

// Every consent reads a ReferenceGrant one way (matches): the group,
// kind and namespace it is from, the group and kind it is to, the name
// it names (none: all); a grant off in any of them allows nothing.
func TestGrantsReadOneWay(t *testing.T) {
	const gw = gatewayv1beta1.GroupName
	for _, c := range []struct {
		what  string
		allow func(gatewayv1beta1.ReferenceGrant) bool
		// right is the grant that allows; wrong ones change one field.
		group, kind, toGroup, toKind, name string
	}{
		{"group", func(g gatewayv1beta1.ReferenceGrant) bool { return Allows(g, "tenant", "front") }, "", "Service", GrantGroup, GrantKind, "front"},
		{"address", func(g gatewayv1beta1.ReferenceGrant) bool { return AllowsAddress(g, "tenant", "addr-1") }, "", "Service", GrantGroup, GrantAddressKind, "addr-1"},
		{"hostname", func(g gatewayv1beta1.ReferenceGrant) bool {
			return AllowsHostname(g, "HTTPRoute", "tenant", "shop.example")
		}, gw, "HTTPRoute", GrantHostnameGroup, GrantHostnameKind, "shop.example"},
		{"route backend", func(g gatewayv1beta1.ReferenceGrant) bool { return AllowsRoute(g, "TCPRoute", "tenant", "db") }, gw, "TCPRoute", "", "Service", "db"},
	} {
		if !c.allow(refGrant(c.group, c.kind, "tenant", c.toGroup, c.toKind, c.name)) || !c.allow(refGrant(c.group, c.kind, "tenant", c.toGroup, c.toKind, "")) {
			t.Errorf("%s: the grant naming it (or no name) does not allow", c.what)
		}
		for field, g := range map[string]gatewayv1beta1.ReferenceGrant{
			"from group":     refGrant(c.group+"x", c.kind, "tenant", c.toGroup, c.toKind, c.name),
			"from kind":      refGrant(c.group, c.kind+"x", "tenant", c.toGroup, c.toKind, c.name),
			"from namespace": refGrant(c.group, c.kind, "other", c.toGroup, c.toKind, c.name),
			"to group":       refGrant(c.group, c.kind, "tenant", c.toGroup+"x", c.toKind, c.name),
			"to kind":        refGrant(c.group, c.kind, "tenant", c.toGroup, c.toKind+"x", c.name),
			"to name":        refGrant(c.group, c.kind, "tenant", c.toGroup, c.toKind, c.name+"x"),
		} {
			if c.allow(g) {
				t.Errorf("%s: a grant with another %s allows", c.what, field)
			}
		}
	}
}
