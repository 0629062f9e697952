package annotations

import (
	"errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseEmpty(t *testing.T) {
	lb, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if lb.ApplyPolicy != ApplyAuto || lb.NodeSelector != nil || lb.HealthCheck != (HealthCheck{}) || lb.Type != "" || lb.TargetType != TargetTypeNode || lb.Pods() {
		t.Errorf("unexpected defaults: %+v", lb)
	}
}

func TestParseAll(t *testing.T) {
	lb, err := Parse(map[string]string{
		string(LBType):                          "lb-large",
		string(LBInternal):                      " true\n",
		string(LBAlgorithm):                     "source_ip",
		string(LBProxyProtocol):                 "true",
		string(LBName):                          "shop.frontend_1",
		string(LBAdoptID):                       "lb-0123abcd",
		string(LBNodeSelector):                  "role in (ingress),zone!=b",
		string(LBApplyPolicy):                   "plan-only",
		string(LBHealthCheckPort):               "32100",
		string(LBHealthCheckPath):               "/readyz?full=1",
		string(LBHealthCheckInterval):           "1m",
		string(LBHealthCheckTimeout):            "30",
		string(LBHealthCheckHealthyThreshold):   "2",
		string(LBHealthCheckUnhealthyThreshold): "10",
		string(LegacySourceRanges):              "2001:db8::/32, 10.1.2.3/8,10.0.0.0/8,,",
		"unrelated.example.org/x":               "ignored",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := HealthCheck{Protocol: "http", Port: 32100, Path: "/readyz?full=1", Interval: time.Minute,
		Timeout: 30 * time.Second, HealthyThreshold: 2, UnhealthyThreshold: 10}
	if lb.HealthCheck != want {
		t.Errorf("health check = %+v, want %+v", lb.HealthCheck, want)
	}
	if lb.Type != "lb-large" || !lb.Internal || lb.Algorithm != "source_ip" || !lb.ProxyProtocol ||
		lb.Name != "shop.frontend_1" || lb.AdoptID != "lb-0123abcd" || lb.ApplyPolicy != ApplyPlanOnly {
		t.Errorf("parsed %+v", lb)
	}
	if got := lb.NodeSelector.String(); got != "role in (ingress),zone!=b" {
		t.Errorf("selector = %q", got)
	}
	wantRanges := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	if len(lb.SourceRanges) != 2 || lb.SourceRanges[0] != wantRanges[0] || lb.SourceRanges[1] != wantRanges[1] {
		t.Errorf("source ranges = %v", lb.SourceRanges)
	}
	if len(lb.HostBitsFixed) != 1 || lb.HostBitsFixed[0] != "10.1.2.3/8" {
		t.Errorf("host bits fixed = %v", lb.HostBitsFixed)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		ann      Name
		value    string
		accepted string // substring of Error.Accepted
	}{
		{LBType, "lb-huge", "lb-small, lb-medium, lb-large"},
		{LBInternal, "yes", "true, false"},
		{LBAlgorithm, "random", "round_robin, least_connections, source_ip"},
		{LBProxyProtocol, "1", "true, false"},
		{LBTargetType, "pod", "node, ip"},
		{LBName, "-leading-dash", "letters, digits"},
		{LBName, `a"b`, "letters, digits"},
		{LBAdoptID, "i-123", "lb-"},
		{LBAddress, "lb-123", "addr-"},
		{LBAddress, "fe80::1%eth0", "addr-"},
		{LBAddressKeep, "yes", "true, false"},
		{LBDeletionPolicy, "orphan", "delete, retain"},
		{LBNodeSelector, "a in (", "label selector"},
		{LBApplyPolicy, "always", "auto, manual, plan-only"},
		{LBHealthCheckProtocol, "udp", "tcp, http, https"},
		{LBHealthCheckProtocol, "HTTPS", "tcp, http, https"},
		{LBHealthCheckPort, "0", "1-65535"},
		{LBHealthCheckPort, "http", "1-65535"},
		{LBHealthCheckPath, "healthz", "starting with /"},
		{LBHealthCheckPath, "/a b", "without spaces"},
		{LBHealthCheckInterval, "1500ms", "whole seconds"},
		{LBHealthCheckInterval, "301s", "1s-300s"},
		{LBHealthCheckTimeout, "soon", "1s-60s"},
		{LBHealthCheckHealthyThreshold, "11", "1-10"},
		{LBHealthCheckUnhealthyThreshold, "-1", "1-10"},
		{LegacySourceRanges, "10.0.0.0/8,nope", "CIDRs"},
		{LBGroup, "Store_Front", "DNS label"},
		{LBGroup, "shop/", "DNS label"},
		{LBGroup, "/front", "DNS label"},
		{LBGroup, "a/b/c", "DNS label"},
		{LBGroup, strings.Repeat("g", 64), "DNS label"},
		{LBHTTPPorts, "http", "port numbers"},
		{LBHTTPPorts, "80,0", "1-65535"},
		{LBHTTPPorts, "65536", "1-65535"},
		{LBHTTPPorts, "80,,443", "comma-separated"},
		{LBHTTPPorts, "80,", "comma-separated"},
		{LBHTTPPorts, "80 443", "comma-separated"},
		{LBHTTPPorts, "8080, 80,8080", "none twice"},
		{LBHTTPSPorts, "443.0", "port numbers"},
		{LBHTTPSPorts, "443,443", "none twice"},
		{LBTLSSecrets, "Shop-TLS", "DNS-1123"},
		{LBTLSSecrets, "shop_tls", "DNS-1123"},
		{LBTLSSecrets, "ns/shop-tls", "DNS-1123"},
		{LBTLSSecrets, strings.Repeat("s", 254), "DNS-1123"},
		{LBTLSSecrets, "a,b, a", "none twice"},
		{LBTLSSecrets, "a,", "comma-separated"},
		{LBCertificateIDs, "lb-123", "cert-"},
		{LBCertificateIDs, "cert-", "cert-"},
		{LBCertificateIDs, "cert-a_b", "cert-"},
		{LBCertificateIDs, "cert-" + strings.Repeat("a", 65), "cert-"},
		{LBCertificateIDs, "cert-a,cert-b,cert-a", "none twice"},
		{LBRedirectHTTPToHTTPS, "yes", "true, false"},
		{LBStickySessions, "on", "true, false"},
		{LBStickySessionsCookieName, "a b", "RFC 6265"},
		{LBStickySessionsCookieName, "a;b", "RFC 6265"},
		{LBStickySessionsCookieName, "sess=1", "RFC 6265"},
		{LBStickySessionsCookieName, strings.Repeat("c", 65), "1-64"},
		{LBStickySessionsCookieTTL, "0", "1s-168h"},
		{LBStickySessionsCookieTTL, "169h", "1s-168h"},
		{LBStickySessionsCookieTTL, "604801", "1s-168h"},
		{LBStickySessionsCookieTTL, "1.5s", "whole seconds"},
		{LBStickySessionsCookieTTL, "forever", "whole seconds"},
	}
	for _, c := range cases {
		_, err := Parse(map[string]string{string(c.ann): c.value})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s=%q: err = %v, want *Error", c.ann, c.value, err)
			continue
		}
		if e.Annotation != c.ann || e.Value != c.value || !strings.Contains(e.Accepted, c.accepted) {
			t.Errorf("%s=%q: got %+v", c.ann, c.value, e)
		}
		if msg := err.Error(); !strings.Contains(msg, string(c.ann)) || !strings.Contains(msg, "accepted: ") {
			t.Errorf("message %q does not name the annotation and accepted values", msg)
		}
	}
}

func TestParseGroup(t *testing.T) {
	for v, want := range map[string]Group{
		"storefront":      {Name: "storefront"},
		" platform/edge ": {Namespace: "platform", Name: "edge"},
	} {
		lb, err := Parse(map[string]string{string(LBGroup): v})
		if err != nil || lb.Group != want {
			t.Errorf("%q: group %+v, %v; want %+v", v, lb.Group, err, want)
		}
	}
	if g, err := ParseGroup(map[string]string{string(LBGroup): "edge/front", string(LBType): "huge"}); err != nil || g.Name != "front" {
		t.Errorf("ParseGroup reads the group alone: %+v %v", g, err)
	}
	if _, err := ParseGroup(map[string]string{string(LBGroup): "Front"}); err == nil || !strings.Contains(err.Error(), string(LBGroup)) {
		t.Errorf("ParseGroup of an invalid value: %v", err)
	}
	if g, err := ParseGroup(nil); err != nil || g != (Group{}) {
		t.Errorf("ParseGroup of none: %+v %v", g, err)
	}
	if g := (Group{Name: "front"}).In("shop"); g != (Group{Namespace: "shop", Name: "front"}) || g.String() != "shop/front" {
		t.Errorf("In: %+v %q", g, g.String())
	}
	if g := (Group{Namespace: "platform", Name: "edge"}).In("shop"); g.Namespace != "platform" {
		t.Errorf("In overrode the namespace named: %+v", g)
	}
	if g := (Group{}).In("shop"); g != (Group{}) {
		t.Errorf("no group is in a namespace: %+v", g)
	}
}

func TestParseCrossChecks(t *testing.T) {
	cases := map[string]struct {
		ann  map[string]string
		want Name
	}{
		"path with tcp": {map[string]string{
			string(LBHealthCheckProtocol): "tcp", string(LBHealthCheckPath): "/x"}, LBHealthCheckPath},
		"timeout not below interval": {map[string]string{
			string(LBHealthCheckInterval): "5s", string(LBHealthCheckTimeout): "5s"}, LBHealthCheckTimeout},
		"interval below default timeout": {map[string]string{
			string(LBHealthCheckInterval): "3s"}, LBHealthCheckInterval},
		"adopt without name": {map[string]string{string(LBAdoptID): "lb-1"}, LBAdoptID},
		"internal with an address": {map[string]string{
			string(LBInternal): "true", string(LBAddress): "198.51.100.7"}, LBAddress},
		"internal keeping an address": {map[string]string{
			string(LBInternal): "true", string(LBAddressKeep): "true"}, LBAddressKeep},
		"retain in a group": {map[string]string{
			string(LBDeletionPolicy): "retain", string(LBGroup): "front"}, LBDeletionPolicy},
		"target type ip with a node selector": {map[string]string{
			string(LBTargetType): TargetTypeIP, string(LBNodeSelector): "pool=ingress"}, LBNodeSelector},
		"target type ip with a health check port": {map[string]string{
			string(LBTargetType): TargetTypeIP, string(LBHealthCheckPort): "32100"}, LBHealthCheckPort},
		"target type ip in a group": {map[string]string{
			string(LBTargetType): TargetTypeIP, string(LBGroup): "front"}, LBGroup},
		"target type node with a node selector": {map[string]string{ // no error: the timeout below is the one expected
			string(LBTargetType): TargetTypeNode, string(LBNodeSelector): "pool=ingress", string(LBHealthCheckTimeout): "10s"}, LBHealthCheckTimeout},
		"path with https": {map[string]string{ // no error: the timeout below is the one expected
			string(LBHealthCheckProtocol): "https", string(LBHealthCheckPath): "/x", string(LBHealthCheckTimeout): "10s"}, LBHealthCheckTimeout},
	}
	for name, c := range cases {
		_, err := Parse(c.ann)
		var e *Error
		if !errors.As(err, &e) || e.Annotation != c.want {
			t.Errorf("%s: err = %v, want *Error on %s", name, err, c.want)
		}
	}
	for proto, want := range map[string]string{"": "http", "http": "http", "https": "https"} {
		lb, err := Parse(map[string]string{string(LBHealthCheckPath): "/ok", string(LBHealthCheckProtocol): proto})
		if err != nil || lb.HealthCheck.Protocol != want || lb.HealthCheck.Path != "/ok" {
			t.Errorf("path with protocol %q: %+v %v, want protocol %s", proto, lb.HealthCheck, err, want)
		}
	}
	_, err := Parse(map[string]string{string(LBHealthCheckPath): "/ok", string(LBHealthCheckProtocol): "tcp"})
	if err == nil || !strings.Contains(err.Error(), "a path needs an http or https health check") {
		t.Errorf("path with tcp: %v", err)
	}
}

func TestParseUnknownAndSeveral(t *testing.T) {
	_, err := Parse(map[string]string{
		Prefix + "health-check-protocl": "http", //nolint:misspell // the typo under test
		string(LBType):                  "xl",
		Prefix + "totally-new":          "x",
	})
	msg := err.Error()
	for _, want := range []string{
		"did you mean " + string(LBHealthCheckProtocol),
		`"` + Prefix + `totally-new": value "x": unknown annotation`,
		string(LBType),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Count(msg, "\n") != 2 {
		t.Errorf("want 3 errors, got %q", msg)
	}
	// Empty values are "not set", also for unknown-to-others keys.
	if _, err := Parse(map[string]string{string(LBType): "  "}); err != nil {
		t.Errorf("empty value: %v", err)
	}
}

func TestDefinitionsComplete(t *testing.T) {
	for _, d := range Definitions {
		if len(d.Accepted) == 0 || d.Default == "" {
			t.Errorf("%s: Accepted and Default must be documented", d.Name)
		}
		ann := map[string]string{string(d.Name): d.Example}
		// Some annotations only make sense with others.
		for n, v := range map[Name]map[Name]string{
			LBAdoptID:                  {LBName: "legacy-lb"},
			LBHTTPSPorts:               {LBCertificateIDs: "cert-1"},
			LBTLSSecrets:               {LBHTTPSPorts: "443"},
			LBCertificateIDs:           {LBHTTPSPorts: "443"},
			LBRedirectHTTPToHTTPS:      {LBHTTPPorts: "80", LBHTTPSPorts: "443", LBCertificateIDs: "cert-1"},
			LBStickySessions:           {LBHTTPPorts: "80"},
			LBStickySessionsCookieName: {LBStickySessions: "true", LBHTTPPorts: "80"},
			LBStickySessionsCookieTTL:  {LBStickySessions: "true", LBHTTPPorts: "80"},
		}[d.Name] {
			ann[string(n)] = v
		}
		if _, err := Parse(ann); err != nil {
			t.Errorf("%s: documented example %q does not parse: %v", d.Name, d.Example, err)
		}
		if !strings.HasPrefix(string(d.Name), Prefix) && d.Name != LegacySourceRanges {
			t.Errorf("%s: missing prefix %s", d.Name, Prefix)
		}
	}
}

func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", filepath.FromSlash(DocsPath))
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `go run ./hack/gen-annotation-docs`)", err)
	}
	if string(got) != string(Markdown()) {
		t.Errorf("%s is stale: run `go run ./hack/gen-annotation-docs`", DocsPath)
	}
}

func TestStricterNeverLoosens(t *testing.T) {
	order := []ApplyPolicy{ApplyAuto, ApplyManual, ApplyPlanOnly}
	for i, a := range order {
		for j, b := range order {
			want := order[max(i, j)]
			if got := Stricter(a, b); got != want {
				t.Errorf("Stricter(%s, %s) = %s, want %s", a, b, got, want)
			}
		}
	}
}

// Values reach events and terminals: escaped, and cut when huge.
func TestErrorsQuoteAndTruncateValues(t *testing.T) {
	huge := strings.Repeat("a", 200_000)
	_, err := Parse(map[string]string{string(LBType): "\x1b]0;pwned\a" + "\n", string(LBAlgorithm): huge})
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\a") {
		t.Errorf("control characters reach the message: %q", msg)
	}
	if len(msg) > 1000 || !strings.Contains(msg, "(200000 bytes)") {
		t.Errorf("huge value not truncated (%d bytes): %.300s", len(msg), msg)
	}
}

// Retired annotations are not errors (the Service keeps working) and do
// nothing; the controller reports them.
func TestRetiredAnnotationsDoNothing(t *testing.T) {
	lb, err := Parse(map[string]string{string(LBApprovePlan): "plan-0123456789ab", string(LBForceUnlock): "x"})
	if err != nil || lb.ApplyPolicy != ApplyAuto {
		t.Fatalf("%+v %v", lb, err)
	}
	for n := range Retired {
		if _, ok := Lookup(n); ok {
			t.Errorf("%s is both retired and defined", n)
		}
	}
}

// The address annotation takes an id or an IP (canonical); spec.loadBalancerIP
// names one by IP when the annotation is unset, and is refused when it says
// otherwise or the load balancer is internal.
func TestAddressAndLoadBalancerIP(t *testing.T) {
	svc := func(ann map[string]string, specIP string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.ServiceSpec{LoadBalancerIP: specIP}}
	}
	for _, c := range []struct {
		name   string
		ann    map[string]string
		specIP string
		want   string // LB.Address, or the error's words
		err    bool
	}{
		{"id", map[string]string{string(LBAddress): "addr-0a1b"}, "", "addr-0a1b", false},
		{"IPv4", map[string]string{string(LBAddress): " 198.51.100.7 "}, "", "198.51.100.7", false},
		{"IPv6 canonical", map[string]string{string(LBAddress): "2001:DB8:0::7"}, "", "2001:db8::7", false},
		{"IPv4-mapped", map[string]string{string(LBAddress): "::ffff:198.51.100.7"}, "", "198.51.100.7", false},
		{"spec only", nil, "198.51.100.7", "198.51.100.7", false},
		{"both alike", map[string]string{string(LBAddress): "198.51.100.7"}, "198.51.100.7", "198.51.100.7", false},
		{"both differ", map[string]string{string(LBAddress): "198.51.100.7"}, "198.51.100.8", "spec.loadBalancerIP names 198.51.100.8", true},
		{"id and spec", map[string]string{string(LBAddress): "addr-0a1b"}, "198.51.100.8", "spec.loadBalancerIP names 198.51.100.8", true},
		{"spec not an IP", nil, "example.com", "is not an IP", true},
		{"spec on internal", map[string]string{string(LBInternal): "true"}, "10.255.0.9", "internal load balancer", true},
	} {
		in := Read(svc(c.ann, c.specIP))
		switch {
		case c.err && (in.Err == nil || !strings.Contains(in.Err.Error(), c.want)):
			t.Errorf("%s: err %v, want one saying %q", c.name, in.Err, c.want)
		case !c.err && (in.Err != nil || in.LB.Address != c.want):
			t.Errorf("%s: address %q (%v), want %q", c.name, in.LB.Address, in.Err, c.want)
		}
	}
	if !IsAddressID("addr-0a1b") || IsAddressID("198.51.100.7") {
		t.Error("IsAddressID tells ids from IPs wrongly")
	}
}

func TestRetains(t *testing.T) {
	for _, c := range []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{string(LBDeletionPolicy): "retain"}, true},
		{map[string]string{string(LBDeletionPolicy): "delete"}, false},
		// Another annotation invalid: the deletion policy still holds.
		{map[string]string{string(LBDeletionPolicy): "retain", string(LBHealthCheckPort): "0"}, true},
		{map[string]string{string(LBDeletionPolicy): "Retain"}, false},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n", Annotations: c.ann}}
		if got := Read(svc).Retains(); got != c.want {
			t.Errorf("Retains(%v) = %v, want %v", c.ann, got, c.want)
		}
	}
}
