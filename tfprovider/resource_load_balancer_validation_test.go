package tfprovider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccLoadBalancer_validation: bad arguments fail at plan time with
// diagnostics on the offending attribute; what only the API can check
// (unknown target, unknown region) fails at apply time, mapped onto the
// attribute the API names.
func TestAccLoadBalancer_validation(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		name, extra, listeners, want string
	}{
		{"web", "", `{ protocol = "tcp", port = 0, target_port = 80 }`, `listeners\[0\]\.port[\s\S]*value must be between 1 and 65535`},
		{"web", "", `{ protocol = "tcp", port = 80, target_port = 70000 }`, `listeners\[0\]\.target_port`},
		{"web", "", `{ protocol = "sctp", port = 80, target_port = 80 }`, `listeners\[0\]\.protocol[\s\S]*"tcp"`},
		{"web", "", listenerHTTP + ", " + `{ protocol = "tcp", port = 80, target_port = 81 }`, `Duplicate listener port[\s\S]*listeners\[1\] repeats listener tcp/80 of listeners\[0\]`},
		{"web", "", "", `Attribute listeners list must contain at least 1 elements`},
		{"-bad", "", listenerHTTP, `Attribute name must start with a letter or digit`},
		{"web", `  allowed_source_cidrs = ["10.0.0.1/8"]`, listenerHTTP, `"10\.0\.0\.1/8" has host bits set; did you mean\s+"10\.0\.0\.0/8"\?`},
		{"web", `  allowed_source_cidrs = ["2001:DB8::/32"]`, listenerHTTP, `not in canonical form; write it as\s+"2001:db8::/32"`},
		{"web", `  allowed_source_cidrs = ["banana"]`, listenerHTTP, `"banana" is not a valid CIDR`},
		{"web", `  ip_family = "ipv6"`, listenerHTTP, `ip_family value must be one of`},
		{"web", `  type = "lb-huge"`, listenerHTTP, `type value must be one of`},
		{"web", `  health_check = { protocol = "tcp", port = 80, path = "/" }`, listenerHTTP, `path is only allowed with protocol = "http"`},
		{"web", `  health_check = { protocol = "http", port = 80 }`, listenerHTTP, `An http health check needs a path`},
		{"web", `  health_check = { protocol = "http", port = 80, path = "healthz" }`, listenerHTTP, `health_check\.path must start with /`},
		{"web", `  health_check = { protocol = "tcp", port = 80, interval_seconds = 5 }`, listenerHTTP, `timeout_seconds \(5\) must be less than interval_seconds \(5\)`},
		{"web", `  targets = ["web-1"]`, listenerHTTP, `must be an id starting with "i-"`},
		{"web", `  timeouts = { create = "soon" }`, listenerHTTP, `Invalid Attribute Value Time Duration[\s\S]*"soon"`},
		// Found by the API at apply time, reported on the attribute.
		{"web", `  targets = ["i-0000000000000000"]`, listenerHTTP, `Cannot create load balancer[\s\S]*targets = \["i-0000000000000000"\][\s\S]*targets\[0\]: instance\s+"i-0000000000000000" does not exist`},
		{"web", `  region = "ex-nowhere-1"`, listenerHTTP, `Cannot create load balancer[\s\S]*region = "ex-nowhere-1"[\s\S]*unknown region\s+"ex-nowhere-1"`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config:      e.config(lbConfig(c.name, c.extra, c.listeners)),
			ExpectError: regexp.MustCompile(c.want),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed,
		Steps:                    steps,
	})
}

// TestAccProvider_configValidation: bad provider settings are reported on
// the provider attribute.
func TestAccProvider_configValidation(t *testing.T) {
	e := newTestEnv(t)
	body := lbConfig("web", "", listenerHTTP)
	prov := func(args string) string { return "provider \"example\" {\n" + args + "\n}\n" + body }
	ep, tok := fmt.Sprintf("endpoint = %q\n", e.sim.URL), fmt.Sprintf("token = %q\n", e.sim.Token)
	cases := []struct{ cfg, want string }{
		{prov(`endpoint = "ftp://example.com"` + "\n" + tok), `Invalid Example API endpoint[\s\S]*must be an http:// or\s+https:// URL`},
		{prov(`endpoint = "127.0.0.1:8440"` + "\n" + tok), `Invalid Example API endpoint`},
		{prov(ep + tok + `request_timeout = "fast"`), `Invalid duration[\s\S]*"fast" is not a duration`},
		{prov(ep + tok + `request_timeout = "-1s"`), `must be greater than zero`},
		{prov(ep + tok + `max_retries = -1`), `max_retries value must be between 0 and 100`},
		{prov(ep + `token = "wrong"`), `Missing region[\s\S]*Set region on the resource, or region in the provider block`},
		{prov(ep + `token = "wrong"` + "\nregion = \"ex-west-1\""), `Cannot create load balancer[\s\S]*rejected the token`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: c.cfg, ExpectError: regexp.MustCompile(c.want)})
	}
	// Missing settings (block and environment) are covered by
	// TestResolveSettings: the in-process provider shares the test's env.
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps:                    steps,
	})
}
