package annotations

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
)

func TestParseListeners(t *testing.T) {
	lb, err := Parse(map[string]string{
		string(LBHTTPPorts):                " 8080, 80 ",
		string(LBHTTPSPorts):               "8443,443,+9443",
		string(LBTLSSecrets):               "shop-tls, a.legacy-tls,b",
		string(LBCertificateIDs):           "cert-Z9,cert-0123456789abcdef",
		string(LBRedirectHTTPToHTTPS):      "true",
		string(LBStickySessions):           "true",
		string(LBStickySessionsCookieName): "__Host-shop.v1!#$%&'*+-^_`|~",
		string(LBStickySessionsCookieTTL):  "604800",
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{80, 8080}; !slices.Equal(lb.HTTPPorts, want) {
		t.Errorf("http ports = %v, want %v (sorted)", lb.HTTPPorts, want)
	}
	if want := []int32{443, 8443, 9443}; !slices.Equal(lb.HTTPSPorts, want) {
		t.Errorf("https ports = %v, want %v (sorted)", lb.HTTPSPorts, want)
	}
	if want := []string{"shop-tls", "a.legacy-tls", "b"}; !slices.Equal(lb.TLSSecrets, want) {
		t.Errorf("tls secrets = %q, want %q (the annotation's order: the first is the default)", lb.TLSSecrets, want)
	}
	if want := []string{"cert-Z9", "cert-0123456789abcdef"}; !slices.Equal(lb.CertificateIDs, want) {
		t.Errorf("certificate ids = %q, want %q (the annotation's order)", lb.CertificateIDs, want)
	}
	want := StickySessions{Enabled: true, CookieName: "__Host-shop.v1!#$%&'*+-^_`|~", TTL: 7 * 24 * time.Hour}
	if !lb.RedirectHTTPToHTTPS || lb.StickySessions != want || !lb.Certificates() || lb.HTTPSRedirectPort() != 443 {
		t.Errorf("parsed %+v", lb)
	}

	// Unset: nothing, and the renderer's defaults are not filled in here.
	lb, err = Parse(map[string]string{string(LBHTTPPorts): "80", string(LBStickySessions): "true", string(LBRedirectHTTPToHTTPS): "false"})
	if err != nil {
		t.Fatal(err)
	}
	if lb.StickySessions != (StickySessions{Enabled: true}) || lb.HTTPSPorts != nil || lb.Certificates() || lb.HTTPSRedirectPort() != 0 {
		t.Errorf("parsed %+v", lb)
	}
	// The bounds are the cloud's (exampleapi; the simulator enforces them).
	if MaxCertificates != exampleapi.MaxListenerCertificates {
		t.Errorf("MaxCertificates = %d, the cloud serves %d per listener", MaxCertificates, exampleapi.MaxListenerCertificates)
	}
	for _, ok := range []string{"1", "1s", "168h", "604800", "90m"} {
		if _, err := Parse(map[string]string{string(LBHTTPPorts): "80", string(LBStickySessions): "true", string(LBStickySessionsCookieTTL): ok}); err != nil {
			t.Errorf("ttl %q: %v", ok, err)
		}
	}
	for _, ok := range []string{"1", "65535", "1,65535"} {
		if _, err := Parse(map[string]string{string(LBHTTPPorts): ok}); err != nil {
			t.Errorf("ports %q: %v", ok, err)
		}
	}
	for _, ok := range []string{strings.Repeat("s", 253), "a,b,c", "shop.example.com-tls"} {
		if _, err := Parse(map[string]string{string(LBHTTPSPorts): "443", string(LBTLSSecrets): ok}); err != nil {
			t.Errorf("secrets %q: %v", Truncate(ok), err)
		}
	}
	name := strings.Repeat("c", 64)
	if _, err := Parse(map[string]string{string(LBHTTPPorts): "80", string(LBStickySessions): "true", string(LBStickySessionsCookieName): name}); err != nil {
		t.Errorf("64-character cookie name: %v", err)
	}
}

// A list item in an error is quoted and cut like the whole value.
func TestListErrorsNameTheItem(t *testing.T) {
	cases := []struct {
		ann    Name
		value  string
		reason string
	}{
		{LBHTTPPorts, "80,eighty", `"eighty" is not a whole number`},
		{LBHTTPPorts, "80,70000", "port 70000 is out of range"},
		{LBHTTPPorts, "99999999999999999999", `port "99999999999999999999" is out of range`},
		{LBHTTPPorts, "-1", "port -1 is out of range"},
		{LBHTTPSPorts, "443, 8443,443", "port 443 is listed twice"},
		{LBHTTPSPorts, "443,,8443", "item 2 is empty"},
		{LBTLSSecrets, "shop,Shop", `"Shop" is not a Secret name: a lowercase RFC 1123 subdomain`},
		{LBTLSSecrets, "shop, shop", `Secret name "shop" is listed twice`},
		{LBCertificateIDs, "cert-1,cert 2", `"cert 2" is not a certificate id`},
		{LBCertificateIDs, "cert-1, cert-1", `certificate id "cert-1" is listed twice`},
		{LBTLSSecrets, "\x1b[2J" + strings.Repeat("x", 1000), `"\x1b[2J` + strings.Repeat("x", 60) + `… (1004 bytes)" is not a Secret name`},
	}
	for _, c := range cases {
		_, err := Parse(map[string]string{string(c.ann): c.value})
		var e *Error
		if !errors.As(err, &e) || e.Annotation != c.ann || !strings.Contains(e.Reason, c.reason) {
			t.Errorf("%s=%q: err = %v, want a reason with %q", c.ann, Truncate(c.value), err, c.reason)
		}
	}
}

func TestParseListenerCrossChecks(t *testing.T) {
	ids := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("cert-%d", i))
		}
		return strings.Join(s, ",")
	}
	secrets := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("tls-%d", i))
		}
		return strings.Join(s, ",")
	}
	const (
		httpP  = LBHTTPPorts
		httpsP = LBHTTPSPorts
		sec    = LBTLSSecrets
		cert   = LBCertificateIDs
		redir  = LBRedirectHTTPToHTTPS
		sticky = LBStickySessions
		cookie = LBStickySessionsCookieName
		ttl    = LBStickySessionsCookieTTL
	)
	cases := map[string]struct {
		ann    map[Name]string
		want   Name
		reason string // substring of the one error's reason
	}{
		"port in both": {map[Name]string{httpP: "80,8080", httpsP: "443,80", cert: "cert-1"}, httpsP,
			"port 80 also in " + string(httpP)},
		"ports in both": {map[Name]string{httpP: "80,8080,9000", httpsP: "8080,80", cert: "cert-1"}, httpsP,
			"ports 80, 8080 also in " + string(httpP)},
		"https without certificate": {map[Name]string{httpsP: "443"}, httpsP,
			"needs a certificate: set " + string(sec) + " or " + string(cert)},
		"secrets without https": {map[Name]string{httpP: "80", sec: "shop-tls"}, sec, "set " + string(httpsP)},
		"ids without https":     {map[Name]string{cert: "cert-1"}, cert, "set " + string(httpsP)},
		"too many ids":          {map[Name]string{httpsP: "443", cert: ids(26)}, cert, "26 certificates (0 Secrets, 26 certificate ids): an https listener serves at most 25"},
		"too many secrets":      {map[Name]string{httpsP: "443", sec: secrets(26)}, sec, "26 certificates (26 Secrets, 0 certificate ids)"},
		"too many together": {map[Name]string{httpsP: "443", sec: secrets(20), cert: ids(6)}, cert,
			"26 certificates (20 Secrets, 6 certificate ids)"},
		"redirect without http": {map[Name]string{redir: "true", httpsP: "443", cert: "cert-1"}, redir,
			"needs " + string(httpP)},
		"redirect without https": {map[Name]string{redir: "true", httpP: "80"}, redir, "needs " + string(httpsP)},
		"sticky without http(s)": {map[Name]string{sticky: "true"}, sticky, "needs " + string(httpP) + " or " + string(httpsP)},
		"cookie name without sticky": {map[Name]string{httpP: "80", cookie: "SHOP"}, cookie,
			string(sticky) + " is not true"},
		"cookie ttl with sticky false": {map[Name]string{httpP: "80", sticky: "false", ttl: "1h"}, ttl,
			string(sticky) + " is not true"},
	}
	for name, c := range cases {
		ann := map[string]string{}
		for n, v := range c.ann {
			ann[string(n)] = v
		}
		_, err := Parse(ann)
		var e *Error
		switch {
		case !errors.As(err, &e) || e.Annotation != c.want || !strings.Contains(e.Reason, c.reason):
			t.Errorf("%s: err = %v, want *Error on %s with %q", name, err, c.want, c.reason)
		case strings.Count(err.Error(), "\n") != 0:
			t.Errorf("%s: want one error, got %v", name, err)
		case e.Value != ann[string(c.want)]:
			t.Errorf("%s: error value %q, want the annotation's", name, e.Value)
		}
	}
	// Both halves of a redirect missing: both said.
	_, err := Parse(map[string]string{string(redir): "true"})
	if err == nil || !strings.Contains(err.Error(), "needs "+string(httpP)) || !strings.Contains(err.Error(), "needs "+string(httpsP)) {
		t.Errorf("redirect alone: %v", err)
	}
	// Exactly at the limit, and the combinations the checks allow.
	for name, ann := range map[string]map[Name]string{
		"25 together":              {httpsP: "443", sec: secrets(12), cert: ids(13)},
		"sticky on https only":     {httpsP: "443", cert: "cert-1", sticky: "true", cookie: "S", ttl: "60"},
		"sticky with redirect":     {httpP: "80", httpsP: "443", cert: "cert-1", redir: "true", sticky: "true"},
		"redirect false, no ports": {redir: "false"},
		"sticky false, no ports":   {sticky: "false"},
	} {
		a := map[string]string{}
		for n, v := range ann {
			a[string(n)] = v
		}
		if _, err := Parse(a); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHTTPSRedirectPort(t *testing.T) {
	cases := []struct {
		redirect bool
		https    []int32
		want     int32
	}{
		{true, []int32{443}, 443},
		{true, []int32{8443, 443, 9443}, 443},
		{true, []int32{100, 443, 8443}, 443}, // 443 wins over a lower port
		{true, []int32{100, 8443}, 100},
		{true, []int32{9443, 8443}, 8443},
		{true, []int32{8443, 9443}, 8443},
		{true, nil, 0},
		{false, []int32{443}, 0},
		{false, nil, 0},
	}
	for _, c := range cases {
		lb := LoadBalancer{RedirectHTTPToHTTPS: c.redirect, HTTPSPorts: c.https}
		if got := lb.HTTPSRedirectPort(); got != c.want {
			t.Errorf("redirect %v, https %v: port %d, want %d", c.redirect, c.https, got, c.want)
		}
	}
	for _, c := range []struct {
		lb   LoadBalancer
		want bool
	}{
		{LoadBalancer{}, false},
		{LoadBalancer{TLSSecrets: []string{"a"}}, true},
		{LoadBalancer{CertificateIDs: []string{"cert-1"}}, true},
	} {
		if got := c.lb.Certificates(); got != c.want {
			t.Errorf("Certificates() of %+v = %v", c.lb, got)
		}
	}
}
