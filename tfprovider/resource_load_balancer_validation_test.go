package tfprovider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
)

// httpsListener is an https listener on 443 with a certificate that does
// not exist.
const httpsListener = `"https/443" = { protocol = "https", port = 443, target_port = 80, certificate_ids = ["cert-0000000000000000"] }`

// manyListeners is n valid listeners, tcp ports 1..n.
func manyListeners(n int) string {
	var b strings.Builder
	for p := 1; p <= n; p++ {
		fmt.Fprintf(&b, "\n    \"tcp/%d\" = { protocol = \"tcp\", port = %d, target_port = %d },", p, p, p)
	}
	return b.String()
}

// manyStrings is an HCL list of n distinct strings prefix0.. .
func manyStrings(prefix string, n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("%q", fmt.Sprintf("%s%d", prefix, i))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// manyCIDRs is an HCL list of n distinct canonical /24s.
func manyCIDRs(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf(`"10.%d.%d.0/24"`, i/256, i%256)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func manyTags(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " k%d = \"v\",", i)
	}
	return b.String()
}

// TestAccLoadBalancer_validation: bad arguments fail at plan time with
// diagnostics on the offending attribute; what only the API can check
// (unknown target, unknown region) fails at apply time, mapped onto the
// attribute the API names.
func TestAccLoadBalancer_validation(t *testing.T) {
	tftest.RequireAcceptance(t)
	t.Parallel()
	e := newTestEnv(t)
	cases := []struct {
		name, extra, listeners, want string
	}{
		{"web", "", `"tcp/0" = { protocol = "tcp", port = 0, target_port = 80 }`, `listeners\["tcp/0"\]\.port[\s\S]*value must be between 1 and 65535`},
		{"web", "", `"tcp/80" = { protocol = "tcp", port = 80, target_port = 70000 }`, `listeners\["tcp/80"\]\.target_port`},
		{"web", "", `"sctp/80" = { protocol = "sctp", port = 80, target_port = 80 }`, `listeners\["sctp/80"\]\.protocol[\s\S]*"tcp"`},
		// The key is the listener's protocol and port, which also keeps
		// ports unique per protocol.
		{"web", "", listenerHTTP + ", " + `"tcp/81" = { protocol = "tcp", port = 80, target_port = 81 }`,
			`Listener key does not match the listener[\s\S]*The listener keyed "tcp/81" has protocol "tcp"\s+and\s+port\s+80,\s+so\s+its\s+key\s+must\s+be\s+"tcp/80"`},
		{"web", "", `"udp/53" = { protocol = "tcp", port = 53, target_port = 53 }`, `key\s+must\s+be\s+"tcp/53"`},
		{"web", "", `"tcp/080" = { protocol = "tcp", port = 80, target_port = 80 }`, `key\s+must\s+be\s+"tcp/80"`},
		{"web", "", "", `Attribute listeners map must contain at least 1 elements`},
		// Limits of the Example cloud, checked at plan time.
		{"web", "", manyListeners(exampleapi.MaxListeners + 1), `Too many listeners[\s\S]*listeners has 101 entries; the Example\s+cloud\s+allows\s+at\s+most\s+100\s+listeners`},
		{"web", `  targets = ` + manyStrings("i-", exampleapi.MaxTargets+1), listenerHTTP, `Attribute targets set must contain at most 5000 elements,\s+got:\s+5001`},
		{"web", `  allowed_source_cidrs = ` + manyCIDRs(exampleapi.MaxAllowedSourceCIDRs+1), listenerHTTP, `Attribute allowed_source_cidrs set must contain at most 1000 elements,\s+got:\s+1001`},
		{"web", `  tags = {` + manyTags(exampleapi.MaxTags+1) + `}`, listenerHTTP, `Attribute tags map must contain at most 50\s+elements`},
		{"-bad", "", listenerHTTP, `Attribute name must start with a letter or digit`},
		{"web", `  allowed_source_cidrs = ["10.0.0.1/8"]`, listenerHTTP, `"10\.0\.0\.1/8" has host bits set; did you mean\s+"10\.0\.0\.0/8"\?`},
		{"web", `  allowed_source_cidrs = ["2001:DB8::/32"]`, listenerHTTP, `not in canonical form; write it as\s+"2001:db8::/32"`},
		{"web", `  allowed_source_cidrs = ["banana"]`, listenerHTTP, `"banana" is not a valid CIDR`},
		{"web", `  ip_family = "ipv6"`, listenerHTTP, `ip_family value must be one of`},
		{"web", `  type = "lb-huge"`, listenerHTTP, `type value must be one of`},
		{"web", `  health_check = { protocol = "tcp", port = 80, path = "/" }`, listenerHTTP, `path is only allowed with protocol\s+"http"\s+or\s+"https", not "tcp"`},
		{"web", `  health_check = { protocol = "https", port = 80 }`, listenerHTTP, `An https health check needs a path`},
		{"web", `  health_check = { protocol = "http", port = 80 }`, listenerHTTP, `An http health check needs a path`},
		{"web", `  health_check = { protocol = "http", port = 80, path = "healthz" }`, listenerHTTP, `health_check\.path must start with /`},
		{"web", `  health_check = { protocol = "tcp", port = 80, interval_seconds = 5 }`, listenerHTTP, `timeout_seconds \(5\) must be less than interval_seconds \(5\)`},
		{"web", `  targets = ["web-1"]`, listenerHTTP, `must be an id starting with "i-"`},
		{"web", `  timeouts = { create = "soon" }`, listenerHTTP, `Invalid Attribute Value Time Duration[\s\S]*"soon"`},
		// What each listener protocol allows.
		{"web", "", `"https/443" = { protocol = "https", port = 443, target_port = 80 }`, `Missing certificates[\s\S]*The https listener "https/443" ends TLS`},
		{"web", "", `"tcp/443" = { protocol = "tcp", port = 443, target_port = 80, certificate_ids = ["cert-1"] }`, `Certificates on a listener that is not https[\s\S]*listener "tcp/443" is\s+tcp`},
		{"web", "", `"https/443" = { protocol = "https", port = 443, target_port = 80, certificate_ids = ["tp-1"] }`, `must be an id starting\s+with\s+"cert-", got: tp-1`},
		{"web", "", `"https/443" = { protocol = "https", port = 443, target_port = 80, certificate_ids = ["cert-1", "cert-1"] }`, `Duplicate List Value[\s\S]*duplicate values of: "cert-1"`},
		{"web", "", `"https/443" = { protocol = "https", port = 443, target_port = 80, certificate_ids = [] }`, `certificate_ids list must contain at least 1\s+elements and at most 25 elements, got: 0`},
		{"web", "", `"tcp/80" = { protocol = "tcp", port = 80, target_port = 80, redirect_to_https_port = 443 }`, `Redirect on a listener that is not http`},
		{"web", "", `"tls/443" = { protocol = "tls", port = 443, target_port = 443, certificate_ids = ["cert-1"] }`,
			`Certificates on a listener that is not https[\s\S]*listener "tls/443" is\s+tls\.\s+A\s+tls\s+listener\s+passes\s+TLS\s+through`},
		{"web", "", `"tls/443" = { protocol = "tls", port = 443, target_port = 443, sticky_sessions = { cookie_name = "a", ttl_seconds = 60 } }`,
			`Sticky sessions need HTTP[\s\S]*listener\s+"tls/443"\s+is\s+tls`},
		{"web", "", `"http/80" = { protocol = "http", port = 80, target_port = 80, redirect_to_https_port = 443 }`, `Redirect to a port without an https listener[\s\S]*\(it\s+has\s+none\)`},
		{"web", "", httpsListener + `, "http/80" = { protocol = "http", port = 80, target_port = 80, redirect_to_https_port = 8443 }`,
			`Listener "http/80" has redirect_to_https_port = 8443, which is not the\s+port\s+of\s+an\s+https\s+listener[\s\S]*https\s+ports:\s+443`},
		{"web", "", `"udp/53" = { protocol = "udp", port = 53, target_port = 53, sticky_sessions = { cookie_name = "a", ttl_seconds = 60 } }`, `Sticky sessions need HTTP[\s\S]*listener\s+"udp/53"\s+is\s+udp`},
		{"web", "", httpsListener + `, "http/80" = { protocol = "http", port = 80, target_port = 80, redirect_to_https_port = 443, sticky_sessions = { cookie_name = "a", ttl_seconds = 60 } }`,
			`Sticky sessions on a redirecting listener`},
		{"web", "", `"http/80" = { protocol = "http", port = 80, target_port = 80, sticky_sessions = { cookie_name = "a b", ttl_seconds = 60 } }`, `RFC\s+6265\s+cookie\s+name\), got: a b`},
		{"web", "", `"http/80" = { protocol = "http", port = 80, target_port = 80, sticky_sessions = { cookie_name = "a", ttl_seconds = 0 } }`, `ttl_seconds\s+value\s+must\s+be\s+between\s+1\s+and\s+604800`},
		{"web", "", httpsListener + `, "tcp/443" = { protocol = "tcp", port = 443, target_port = 80 }`, `Listener port already in use[\s\S]*"https/443"\s+and\s+"tcp/443"\s+both\s+use\s+TCP\s+port\s+443`},
		{"web", "", httpsListener + `, "tls/443" = { protocol = "tls", port = 443, target_port = 80 }`, `Listener port already in use[\s\S]*"https/443"\s+and\s+"tls/443"\s+both\s+use\s+TCP\s+port\s+443[\s\S]*tcp,\s+tls,\s+http\s+and\s+https`},
		// Found by the API at apply time, reported on the attribute.
		{"web", "", httpsListener, `Cannot create load balancer[\s\S]*certificate_ids[\s\S]*certificate\s+"cert-0000000000000000"\s+does\s+not\s+exist`},
		{"web", `  targets = ["i-0000000000000000"]`, listenerHTTP, `Cannot create load balancer[\s\S]*targets = \["i-0000000000000000"\][\s\S]*targets\[0\]: instance\s+"i-0000000000000000" does not exist`},
		{"web", `  region = "ex-nowhere-1"`, listenerHTTP, `Cannot create load balancer[\s\S]*region = "ex-nowhere-1"[\s\S]*unknown region\s+"ex-nowhere-1"`},
	}
	errs := make([]configError, len(cases))
	for i, c := range cases {
		errs[i] = configError{lbConfig(c.name, c.extra, c.listeners), c.want}
	}
	e.expectErrorsLeaving(t, e.checkLBsDestroyed, errs)
}

// TestAccProvider_configValidation: bad provider settings are reported on
// the provider attribute.
func TestAccProvider_configValidation(t *testing.T) {
	e := newTestEnv(t)
	body := lbConfig("web", "", listenerHTTP)
	prov := func(args string) string { return "provider \"example\" {\n" + args + "\n}\n" + body }
	ep, tok := fmt.Sprintf("endpoint = %q\n", e.sim.URL), fmt.Sprintf("token = %q\n", e.sim.Token)
	cases := []configError{
		{prov(`endpoint = "ftp://example.com"` + "\n" + tok), `Invalid Example API endpoint[\s\S]*must be an http:// or\s+https:// URL`},
		{prov(`endpoint = "127.0.0.1:8440"` + "\n" + tok), `Invalid Example API endpoint`},
		{prov(ep + tok + `request_timeout = "fast"`), `Invalid duration[\s\S]*"fast" is not a duration`},
		{prov(ep + tok + `request_timeout = "-1s"`), `must be greater than zero`},
		{prov(ep + tok + `max_retries = -1`), `max_retries value must be between 0 and 100`},
		{prov(ep + `token = "wrong"`), `Missing region[\s\S]*Set region on the resource, or region in the provider block`},
		{prov(ep + `token = "wrong"` + "\nregion = \"ex-west-1\""), `Cannot create load balancer[\s\S]*rejected the token`},
	}
	// Missing settings (block and environment) are covered by
	// TestResolveSettings: the in-process provider shares the test's env.
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps:                    errorSteps(func(cfg string) string { return cfg }, cases),
	})
}

// TestValidateConfigOwnerTagsNotSet: an owner tag the configuration does
// not set is a warning (every tagged load balancer would count as
// another owner's), named in the message; set ones are not.
func TestValidateConfigOwnerTagsNotSet(t *testing.T) {
	ctx := context.Background()
	var sr fwresource.SchemaResponse
	r := &loadBalancerResource{}
	r.Schema(ctx, fwresource.SchemaRequest{}, &sr)
	validate := func(owner []string, tags map[string]string) diag.Diagnostics {
		m := nullLoadBalancer("lb-1")
		m.OwnerTags, _ = types.SetValueFrom(ctx, types.StringType, owner)
		m.Tags, _ = types.MapValueFrom(ctx, types.StringType, tags)
		st := tfsdk.State{Schema: sr.Schema}
		if d := st.Set(ctx, m); d.HasError() {
			t.Fatal(d)
		}
		var resp fwresource.ValidateConfigResponse
		r.ValidateConfig(ctx, fwresource.ValidateConfigRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: st.Raw}}, &resp)
		return resp.Diagnostics
	}
	d := validate([]string{"cluster", "uid", "zone"}, map[string]string{"cluster": "c1"})
	if d.HasError() || d.WarningsCount() != 1 || !strings.Contains(d[0].Detail(), `owner_tags names "uid", "zone", which tags does not set`) {
		t.Errorf("missing owner tags: %v", d)
	}
	if d := validate([]string{"cluster"}, map[string]string{"cluster": "c1"}); len(d) != 0 {
		t.Errorf("owner tags all set: %v", d)
	}
	if d := validate(nil, nil); len(d) != 0 {
		t.Errorf("no owner tags: %v", d)
	}
}
