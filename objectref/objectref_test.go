package objectref

import (
	"cmp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseAndArg(t *testing.T) {
	cases := []struct {
		arg, ns string
		want    Ref
		// back is what Arg gives back ("" for arg itself).
		back string
	}{
		{"routes", "", RouteSet, ""},
		{"pools", "", TargetPools, ""},
		{"pools", "shop", Ref{Kind: KindService, Namespace: "shop", Name: "pools"}, "shop/pools"},
		{"shop/web", "", Ref{Kind: KindService, Namespace: "shop", Name: "web"}, ""},
		{"web", "", Ref{Kind: KindService, Namespace: "default", Name: "web"}, "default/web"},
		{"group:shop/front", "", Group("shop", "front"), ""},
		{"group:front", "shop", Group("shop", "front"), "group:shop/front"},
		{"group:front", "", Group("default", "front"), "group:default/front"},
		{"gateway:infra/gw", "", Gateway("infra", "gw", ""), ""},
		{"gateway:gw", "infra", Gateway("infra", "gw", ""), "gateway:infra/gw"},
		{"address:shop/k8s-a-01", "", Address("shop", "k8s-a-01"), ""},
		{"address:www", "shop", Address("shop", "www"), "address:shop/www"},
		{"pods:shop/web-80-tcp", "", PodPool("shop", "web", 80, corev1.ProtocolTCP), ""},
		{"pods:dns-53-udp", "kube-system", PodPool("kube-system", "dns", 53, corev1.ProtocolUDP), "pods:kube-system/dns-53-udp"},
		{"ruleset:infra/gw:HTTPRoute:shop:web", "", RuleSet("infra", "gw", KindHTTPRoute, "shop", "web"), ""},
	}
	for _, c := range cases {
		got, err := Parse(c.arg, c.ns, "default")
		if err != nil || got != c.want {
			t.Errorf("Parse(%q, -n %q) = %+v, %v; want %+v", c.arg, c.ns, got, err, c.want)
		}
		if want := cmp.Or(c.back, c.arg); got.Arg() != want {
			t.Errorf("%+v.Arg() = %q, want %q", got, got.Arg(), want)
		}
	}
	for _, bad := range []string{"group:", "group:a/b/c", "group:/front"} {
		if _, err := Parse(bad, "", "default"); err == nil || !strings.Contains(err.Error(), "is not a load balancer group") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
	for _, bad := range []string{"gateway:", "gateway:a/b/c"} {
		if _, err := Parse(bad, "", "default"); err == nil || !strings.Contains(err.Error(), "is not a Gateway") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
	for _, bad := range []string{"", "a/b/c", "/web"} {
		if _, err := Parse(bad, "", "default"); err == nil || !strings.Contains(err.Error(), "is not a Service") {
			t.Errorf("Parse(%q): %v", bad, err)
		}
	}
	if _, err := Parse("shop/web", "media", "default"); err == nil || !strings.Contains(err.Error(), "but -n is media") {
		t.Errorf("Parse with a conflicting -n: %v", err)
	}
}

// The spellings that are part of stored names (state keys, cloud owner
// tags) and of what people type must not change.
func TestSpellings(t *testing.T) {
	svc := Ref{Kind: KindService, Namespace: "shop", Name: "web", UID: "0b5c"}
	cases := []struct {
		ref                                       Ref
		key, stateKind, owner, arg, describe, str string
	}{
		{svc, "shop/web", "service", "0b5c", "shop/web", "Service shop/web", "Service shop/web"},
		{Group("shop", "front"), "group:shop/front", "group", "group:shop/front", "group:shop/front", "load balancer group shop/front", "ServiceGroup shop/front"},
		{Gateway("infra", "gw", "9f1e"), "gateway:infra/gw", "gateway", "9f1e", "gateway:infra/gw", "Gateway infra/gw", "Gateway infra/gw"},
		{Address("shop", "www"), "address:shop/www", "address", "", "address:shop/www", "address shop/www", "Address shop/www"},
		{PodPool("shop", "web", 8080, ""), "pods:shop/web-8080-tcp", "podpool", "", "pods:shop/web-8080-tcp", "pod pool shop/web-8080-tcp", "PodPool shop/web-8080-tcp"},
		{RuleSet("infra", "gw", KindHTTPRoute, "shop", "web"), "ruleset:infra/gw:HTTPRoute:shop:web", "ruleset", "",
			"ruleset:infra/gw:HTTPRoute:shop:web", "rule set infra/gw:HTTPRoute:shop:web", "RuleSet infra/gw:HTTPRoute:shop:web"},
		{RouteSet, "routes", "routes", "", "routes", "the route set", "RouteSet cluster"},
		{TargetPools, "targetpools", "targetpools", "", "pools", "the target pools", "TargetPools cluster"},
		// A workspace has no spelling of its own: it is only ever logged.
		{Workspace("x"), "/x", "service", "", "/x", "Workspace x", "Workspace x"},
	}
	for _, c := range cases {
		got := []string{c.ref.Key(), c.ref.StateKind(), c.ref.OwnerTag(), c.ref.Arg(), c.ref.Describe(), c.ref.String()}
		want := []string{c.key, c.stateKind, c.owner, c.arg, c.describe, c.str}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%+v: spelling %d = %q, want %q", c.ref, i, got[i], want[i])
			}
		}
	}
}

func TestMatches(t *testing.T) {
	a := Ref{Kind: KindService, Namespace: "shop", Name: "web", UID: "1"}
	b := a
	b.UID = "2"
	if !a.Matches(a) || a.Matches(b) || a.Matches(Group("shop", "web")) {
		t.Error("Matches must compare kind, namespace, name and uid")
	}
}

// A hashed name stands on a uid, or without one on namespace/name: two
// objects of one name and different uids get different names, and the
// digest is SHA-256's of the parts joined by NUL, cut to the digits asked.
func TestHashedName(t *testing.T) {
	a := Gateway("infra", "gw", "uid-1")
	b := Gateway("infra", "gw", "uid-2")
	if a.HashSeed() == b.HashSeed() || Gateway("infra", "gw", "").HashSeed() != "name:infra/gw" {
		t.Errorf("seeds %q, %q, %q", a.HashSeed(), b.HashSeed(), Gateway("infra", "gw", "").HashSeed())
	}
	// sha256("a\x00b") begins 59b271ae.
	if got := HashedName("p-", 8, "a", "b"); got != "p-59b271ae" || got == HashedName("p-", 8, "ab") {
		t.Errorf("HashedName = %s: want p- and 8 digits of the parts joined by NUL", got)
	}
}

// A pod pool's name reads back into its Service port; nothing else does.
func TestPodPoolName(t *testing.T) {
	for _, c := range []struct {
		svc   string
		port  int32
		proto corev1.Protocol
	}{{"web", 80, corev1.ProtocolTCP}, {"dns-53-udp", 53, corev1.ProtocolUDP}, {"a-1", 65535, corev1.ProtocolSCTP}} {
		svc, port, proto, ok := ParsePodPoolName(PodPoolName(c.svc, c.port, c.proto))
		if !ok || svc != c.svc || port != c.port || proto != c.proto {
			t.Errorf("%v: read back %q %d %q %v", c, svc, port, proto, ok)
		}
	}
	for _, bad := range []string{"web", "web-80", "-80-tcp", "web-0-tcp", "web-65536-tcp", "web-80-http", "web-x-tcp"} {
		if _, _, _, ok := ParsePodPoolName(bad); ok {
			t.Errorf("%q read as a pod pool's name", bad)
		}
	}
}

// A rule set's name reads back into its Gateway and route; nothing else
// does.
func TestRuleSetName(t *testing.T) {
	gw, kind, ns, route, ok := ParseRuleSetName(RuleSetName("gw", KindGRPCRoute, "shop", "web.v2"))
	if !ok || gw != "gw" || kind != KindGRPCRoute || ns != "shop" || route != "web.v2" {
		t.Errorf("read back %q %q %q %q %v", gw, kind, ns, route, ok)
	}
	for _, bad := range []string{"gw", "gw:HTTPRoute:shop", "gw:HTTPRoute:shop:web:x", ":HTTPRoute:shop:web", "gw:HTTPRoute::web"} {
		if _, _, _, _, ok := ParseRuleSetName(bad); ok {
			t.Errorf("%q read as a rule set's name", bad)
		}
	}
}
