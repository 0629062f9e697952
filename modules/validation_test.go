package modules_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A valid call of each module; every case overrides one argument with a
// value the module's validation must reject.
var validInputs = map[string]map[string]string{
	modules.LoadBalancer: {
		"name":                 `"web"`,
		"listeners":            `[{ protocol = "tcp", port = 80, target_port = 30080 }]`,
		"health_check":         `{ protocol = "http", port = 32000, path = "/healthz" }`,
		"allowed_source_cidrs": `["10.0.0.0/8", "2001:db8::/32"]`,
		"targets":              `["i-1"]`,
		"tags":                 `{ "k8s.example.com/cluster-id" = "prod", "k8s.example.com/service-uid" = "u-1" }`,
	},
	modules.Certificates: {
		"certificates": `{ web = { certificate_pem = "-----BEGIN CERTIFICATE-----" } }`,
		"private_keys": `{ web = "-----BEGIN PRIVATE KEY-----" }`,
	},
	modules.Routes: {
		"network_name": `"cluster-net"`,
		"routes":       `{ "10.244.1.0/24" = "i-1", "fd00:10:244:1::/64" = "i-1" }`,
	},
	modules.Address: {
		"name":             `"k8s-prod-web"`,
		"family":           `"ipv6"`,
		"load_balancer_id": `"lb-1"`,
		"tags":             `{ "k8s.example.com/cluster-id" = "prod" }`,
	},
	modules.TargetPools: {
		"name_prefix": `"k8s-prod-"`,
		"pools":       `{ workers = { targets = ["i-1"], tags = { "k8s.example.com/cluster-id" = "prod" } }, none = { targets = [] } }`,
	},
}

var invalidCases = []struct {
	module, arg, value, message string
}{
	{modules.LoadBalancer, "name", `"-web"`, "The name must be"},
	{modules.LoadBalancer, "name", `"we b"`, "The name must be"},
	{modules.LoadBalancer, "type", `"lb-huge"`, "lb-small, lb-medium, lb-large"},
	{modules.LoadBalancer, "ip_family", `"ipv6"`, "ipv4, dualstack"},
	{modules.LoadBalancer, "algorithm", `"random"`, "round_robin, least_connections, source_ip"},
	{modules.LoadBalancer, "listeners", `[]`, "At least one listener"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "sctp", port = 80, target_port = 1 }]`, "tcp, udp"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 0, target_port = 1 }]`, "whole number in 1-65535"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 80, target_port = 1.5 }]`, "whole number in 1-65535"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 80, target_port = 1 }, { protocol = "udp", port = 80, target_port = 1 }, { protocol = "tcp", port = 80, target_port = 2 }]`, "unique per protocol; repeated: tcp/80."},
	{modules.LoadBalancer, "listeners", hclList(101, func(i int) string { return fmt.Sprintf(`{ protocol = "tcp", port = %d, target_port = 1 }`, i+1) }),
		"At most 100 listeners are allowed (the Example cloud's limit); got 101."},
	{modules.LoadBalancer, "targets", hclList(5001, func(i int) string { return fmt.Sprintf(`"i-%d"`, i) }), "At most 5000 targets are allowed"},
	{modules.LoadBalancer, "allowed_source_cidrs", hclList(1001, func(i int) string { return fmt.Sprintf(`"10.%d.%d.0/24"`, i/256, i%256) }),
		"At most 1000 allowed_source_cidrs entries are allowed"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "https", port = 443, target_port = 1 }]`, "An https listener needs certificate_ids"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 443, target_port = 1, certificate_ids = ["cert-1"] }]`, "other protocols take none"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "https", port = 443, target_port = 1, certificate_ids = ["tp-1"] }]`, "An https listener needs certificate_ids"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "https", port = 443, target_port = 1, certificate_ids = ["cert-1", "cert-1"] }]`, "1-25 distinct certificate ids"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "https", port = 443, target_port = 1, certificate_ids = [] }]`, "1-25 distinct certificate ids"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "http", port = 80, target_port = 1, redirect_to_https_port = 8443 }, ` + httpsListener + `]`,
		"must be the port of an https listener of this load balancer"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 80, target_port = 1, redirect_to_https_port = 443 }, ` + httpsListener + `]`,
		"redirect_to_https_port is only allowed on http listeners"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "udp", port = 53, target_port = 1, sticky_sessions = { cookie_name = "a", ttl_seconds = 1 } }]`,
		"sticky_sessions are only allowed on http and https listeners"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "http", port = 80, target_port = 1, redirect_to_https_port = 443, sticky_sessions = { cookie_name = "a", ttl_seconds = 1 } }, ` + httpsListener + `]`,
		"without redirect_to_https_port"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "http", port = 80, target_port = 1, sticky_sessions = { cookie_name = "a b", ttl_seconds = 1 } }]`, "a cookie_name of 1-64"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "http", port = 80, target_port = 1, sticky_sessions = { cookie_name = "a", ttl_seconds = 0 } }]`, "ttl_seconds in 1-604800"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tcp", port = 443, target_port = 1 }, ` + httpsListener + `]`,
		"tcp, tls, http and https listeners share the TCP ports; used twice: tcp/443 and https/443."},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tls", port = 443, target_port = 1 }, ` + httpsListener + `]`,
		"tcp, tls, http and https listeners share the TCP ports; used twice: tls/443 and https/443."},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tls", port = 443, target_port = 1, certificate_ids = ["cert-1"] }]`, "other protocols take none"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "tls", port = 443, target_port = 1, sticky_sessions = { cookie_name = "a", ttl_seconds = 1 } }]`,
		"sticky_sessions are only allowed on http and https listeners"},
	{modules.LoadBalancer, "health_check", `{ protocol = "https", port = 1 }`, "An http or https health_check needs a path"},
	{modules.LoadBalancer, "health_check", `{ protocol = "udp", port = 1 }`, "tcp, http, https"},
	{modules.LoadBalancer, "health_check", `{ protocol = "tcp", port = 70000 }`, "port must be"},
	{modules.LoadBalancer, "health_check", `{ protocol = "http", port = 1 }`, "needs a path"},
	{modules.LoadBalancer, "health_check", `{ protocol = "tcp", port = 1, path = "/x" }`, "takes no path"},
	{modules.LoadBalancer, "health_check", `{ port = 1, interval_seconds = 5, timeout_seconds = 5 }`, "less than interval_seconds"},
	{modules.LoadBalancer, "health_check", `{ port = 1, healthy_threshold = 0 }`, "1-10"},
	{modules.LoadBalancer, "allowed_source_cidrs", `["10.0.0.1/8"]`, "canonical form"},
	{modules.LoadBalancer, "allowed_source_cidrs", `["everyone"]`, "canonical form"},
	{modules.LoadBalancer, "targets", `["node-1"]`, "instance id"},
	{modules.LoadBalancer, "tags", `{ "a=b" = "x" }`, "without '='"},
	{modules.LoadBalancer, "target_pool_id", `"lb-1"`, "must be a target pool id (tp-...)"},
	{modules.TargetPools, "pools", `{ w = { targets = ["node-1"] } }`, "instance id"},
	{modules.TargetPools, "pools", `{ w = { targets = null } }`, "Every pool needs targets"},
	{modules.TargetPools, "pools", `{ pods = { target_type = "pod", targets = [] } }`, "target_type must be one of: instance, ip"},
	{modules.TargetPools, "pools", `{ pods = { target_type = "ip", targets = ["i-1"] } }`, "IP:port pair"},
	{modules.TargetPools, "pools", `{ w = { targets = ["10.244.1.10:8080"] } }`, "instance id"},
	{modules.TargetPools, "pools", `{ pods = { target_type = "ip", targets = ["10.244.1.10"] } }`, "IP:port pair"},
	{modules.TargetPools, "pools", `{ pods = { target_type = "ip", targets = ["10.244.1.10:65536"] } }`, "IP:port pair"},
	{modules.TargetPools, "pools", `{ pods = { target_type = "ip", targets = ["fd00::5:8080"] } }`, "IP:port pair"},
	{modules.TargetPools, "pools", `{ big = { targets = ` + hclList(5001, func(i int) string { return fmt.Sprintf(`"i-%d"`, i) }) + ` } }`,
		"At most 5000 targets per pool are allowed (the Example cloud's limit); too many in: big."},
	{modules.TargetPools, "pools", `{ w = { targets = [], tags = { "a=b" = "x" } } }`, "without '='"},
	{modules.Routes, "routes", `{ "10.244.1.1/24" = "i-1" }`, "canonical form"},
	{modules.Address, "name", `"-web"`, "The name must be"},
	{modules.Address, "family", `"dualstack"`, "The family must be one of: ipv4, ipv6."},
	{modules.Address, "load_balancer_id", `"tp-1"`, "load_balancer_id must be a load balancer id (lb-...) or null."},
	{modules.Address, "load_balancer_id", `"lb-"`, "load_balancer_id must be a load balancer id (lb-...) or null."},
	{modules.Address, "tags", `{ "a=b" = "x" }`, "without '='"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "https", port = 443, target_port = 1, certificates = ["web", "web"] }]`, "1-25 distinct certificate ids"},
	{modules.LoadBalancer, "listeners", `[{ protocol = "http", port = 80, target_port = 1, certificates = ["web"] }]`, "other protocols take none"},
	{modules.Certificates, "certificates", hclMap(26, func(i int) string { return fmt.Sprintf(`c%d = { certificate_pem = "x" }`, i) }), "At most 25 certificates"},
	{modules.Certificates, "certificates", `{ web = { certificate_pem = "x", private_key_version = -1 } }`, "private_key_version of at least 0"},
	{modules.Routes, "routes", `{ "FD00::/64" = "i-1" }`, "canonical form"},
	{modules.Routes, "routes", `{ "10.244.1.0/24" = "node-1" }`, "instance id"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 302 } }]`,
		"its status_code must be a whole number in 200-299 or 400-599 (a 3xx is a redirect's)."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 600 } }]`,
		"its status_code must be a whole number in 200-299 or 400-599"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 404 }, backends = [{ target_pool_id = "tp-a", port = 30001 }] }]`,
		"A rule's fixed_response excludes backends, redirect, request_headers and rewrite"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 404 }, request_headers = {} }]`,
		"A rule's fixed_response excludes backends, redirect, request_headers and rewrite"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 404 }, redirect = { status_code = 301 } }]`,
		"A rule's fixed_response excludes backends, redirect, request_headers and rewrite"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, redirect = { status_code = 301 }, backends = [{ target_pool_id = "tp-a", port = 30001 }] }]`,
		"A rule's redirect excludes backends"},
	{modules.LoadBalancer, "rules", `[{ name = "ok", listener_port = 80, priority = 1 }, { name = "a b", listener_port = 80, priority = 2 }]`,
		"Every rule name must be 1-128 letters"},
	{modules.LoadBalancer, "rules", `[{ name = "` + strings.Repeat("a", 129) + `", listener_port = 80, priority = 1 }]`,
		"Every rule name must be 1-128 letters"},
	{modules.LoadBalancer, "rules", `[{ name = "a\nb", listener_port = 80, priority = 1 }]`,
		"Every rule name must be 1-128 letters"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1 }, { name = "r", listener_port = 80, priority = 2 }]`,
		"Rule names must be unique; repeated: r."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, query_params = { "a b" = "1" } }]`,
		"A rule's query_params take at most 16 parameters, each name letters, digits"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, query_params = { a = "" } }]`,
		"each value 1-1024 characters without control characters."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, query_params = ` +
		hclMap(17, func(i int) string { return fmt.Sprintf(`q%d = "v"`, i) }) + ` }]`, "A rule's query_params take at most 16 parameters"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, response_headers = { remove = ` +
		hclList(17, func(i int) string { return fmt.Sprintf(`"h%d"`, i) }) + ` } }]`,
		"A rule's request_headers and response_headers each set, add and remove at most 16 headers."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, path_type = "exact", path = "/a", redirect = { status_code = 302, path_prefix = "/b" } }]`,
		"a path_prefix (which replaces what the rule's path prefix matched) needs the rule's path_type \"prefix\"."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, rewrite = { path = "/a", path_prefix = "/b" } }]`,
		"each takes a path or a path_prefix (not both), starting with /"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, rewrite = { path = "a" } }]`,
		"each takes a path or a path_prefix (not both), starting with /"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, redirect = { status_code = 302 }, rewrite = { hostname = "b.example" } }]`,
		"A rule's redirect and rewrite exclude each other"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 404 }, rewrite = { path = "/" } }]`,
		"A rule's fixed_response excludes backends, redirect, request_headers and rewrite"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001, protocol = "h2" }] }]`,
		"a protocol http, h2c or null (http)."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001, protocol = "h2c", tls = { ca_bundle = "-----BEGIN CERTIFICATE-----", server_name = "a.example" } }] }]`,
		"and no protocol h2c (a backend over TLS is spoken to in HTTP/1.1)."},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001, tls = { ca_bundle = "not PEM", server_name = "a.example" } }] }]`,
		"A rule backend's tls needs a ca_bundle of PEM CERTIFICATE blocks"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }], cors = { allow_origins = [] } }]`,
		"A rule's cors needs 1-64 allow_origins"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }], session_persistence = { lifetime = "permanent" } }]`,
		"A rule's session_persistence (not with a redirect or fixed_response) takes a type cookie or header"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }], session_persistence = { name = "a b" } }]`,
		"A rule's session_persistence (not with a redirect or fixed_response) takes a type cookie or header"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }], timeouts = { request_ms = 3600001 } }]`,
		"A rule's timeouts (not with a redirect or fixed_response) take request_ms and backend_request_ms"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, redirect = { status_code = 302 }, retry = { attempts = 1 } }]`,
		"A rule's retry (not with a redirect or fixed_response) takes attempts in 1-10"},
	{modules.LoadBalancer, "rules", `[{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }], retry = { attempts = 11 } }]`,
		"A rule's retry (not with a redirect or fixed_response) takes attempts in 1-10"},
}

// httpsListener is a valid https listener on 443.
const httpsListener = `{ protocol = "https", port = 443, target_port = 30443, certificate_ids = ["cert-1", "cert-2"] }`

// hclList is an HCL list of n elements.
func hclList(n int, elem func(i int) string) string {
	elems := make([]string, n)
	for i := range elems {
		elems[i] = elem(i)
	}
	return "[" + strings.Join(elems, ", ") + "]"
}

// hclMap is an HCL object of n entries.
func hclMap(n int, entry func(i int) string) string {
	entries := make([]string, n)
	for i := range entries {
		entries[i] = entry(i)
	}
	return "{ " + strings.Join(entries, ", ") + " }"
}

// Cross-variable rules (network_id xor network_name, targets xor
// target_pool_id, pool names from name_prefix and key) are only evaluated
// by plan: tests/*.tftest.hcl cover them (TestModuleTests).

// TestValidationRules calls the modules once validly and once per invalid
// case, all in one root module, and checks terraform validate rejects
// exactly the invalid calls, each with the expected message.
func TestValidationRules(t *testing.T) {
	m := tftest.Get(t)
	dir := t.TempDir()
	if _, err := modules.WriteTo(filepath.Join(dir, "modules")); err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	type span struct{ from, to int }
	spans := map[string]span{}
	call := func(name, module string, override map[string]string) {
		from := strings.Count(src.String(), "\n") + 1
		fmt.Fprintf(&src, "module %q {\n  source = \"./modules/%s\"\n", name, module)
		for arg, v := range validInputs[module] {
			if _, ok := override[arg]; !ok {
				fmt.Fprintf(&src, "  %s = %s\n", arg, v)
			}
		}
		for arg, v := range override {
			fmt.Fprintf(&src, "  %s = %s\n", arg, v)
		}
		src.WriteString("}\n\n")
		spans[name] = span{from, strings.Count(src.String(), "\n")}
	}
	src.WriteString(`terraform {
  required_providers {
    example = { source = "example.com/example/example" }
  }
}

provider "example" {
  region = "ex-west-1"
}

`)
	call("valid_lb", modules.LoadBalancer, nil)
	call("valid_https", modules.LoadBalancer, map[string]string{
		"listeners": `[{ protocol = "http", port = 80, target_port = 30080, redirect_to_https_port = 443 }, ` +
			`{ protocol = "https", port = 443, target_port = 30080, certificate_ids = ["cert-1"], sticky_sessions = { cookie_name = "EXLB", ttl_seconds = 3600 } }, ` +
			`{ protocol = "udp", port = 443, target_port = 30443 }]`,
		"health_check": `{ protocol = "https", port = 30080, path = "/healthz" }`,
	})
	call("valid_https_keys", modules.LoadBalancer, map[string]string{
		"listeners":    `[{ protocol = "https", port = 443, target_port = 30443, certificates = ["web"], certificate_ids = ["cert-1"] }]`,
		"certificates": `{ web = "cert-2" }`,
	})
	call("valid_l4", modules.LoadBalancer, map[string]string{
		"listeners": `[{ protocol = "tls", port = 443, target_port = 30443, proxy_protocol = true }, ` +
			`{ protocol = "udp", port = 443, target_port = 30443 }, { protocol = "tcp", port = 53, target_port = 30053 }]`,
		"rules": `[{ name = "db", listener_port = 443, priority = 1, hostnames = ["db.example"], backends = [{ target_pool_id = "tp-a", port = 30443 }] }, ` +
			`{ name = "quic", listener_port = 443, listener_protocol = "udp", priority = 1, backends = [{ target_pool_id = "tp-a", port = 30443 }] }, ` +
			`{ name = "dns", listener_port = 53, priority = 1, backends = [] }]`,
	})
	call("valid_fixed_response", modules.LoadBalancer, map[string]string{
		"listeners": `[{ protocol = "http", port = 80, target_port = 30080 }]`,
		"rules": `[{ name = "cart", listener_port = 80, priority = 1, hostnames = ["shop.example"], backends = [{ target_pool_id = "tp-a", port = 30001 }] }, ` +
			`{ name = "catch-all", listener_port = 80, priority = 2, hostnames = ["shop.example"], backends = [], fixed_response = { status_code = 404 } }, ` +
			`{ name = "ok", listener_port = 80, priority = 3, fixed_response = { status_code = 200 } }, ` +
			`{ name = "down", listener_port = 80, priority = 4, fixed_response = { status_code = 599 } }]`,
	})
	call("valid_query_params_paths", modules.LoadBalancer, map[string]string{
		"listeners": `[{ protocol = "http", port = 80, target_port = 30080 }]`,
		"rules": `[{ name = "whale", listener_port = 80, priority = 1, query_params = { animal = "whale", ANIMAL = "Whale" }, ` +
			`response_headers = { set = { "X-A" = "1" }, add = { "X-B" = "2" }, remove = ["Server"] }, backends = [{ target_pool_id = "tp-a", port = 30001 }] }, ` +
			`{ name = "v1", listener_port = 80, priority = 2, path_type = "prefix", path = "/v1", rewrite = { hostname = "b.example", path_prefix = "/v2" }, backends = [] }, ` +
			`{ name = "moved", listener_port = 80, priority = 3, path_type = "prefix", path = "/old", redirect = { status_code = 302, path_prefix = "/new" } }, ` +
			`{ name = "gone", listener_port = 80, priority = 4, redirect = { status_code = 301, path = "/" } }, ` +
			`{ name = "h2c", listener_port = 80, priority = 5, backends = [{ target_pool_id = "tp-a", port = 30002, protocol = "h2c" }, ` +
			`{ target_pool_id = "tp-a", port = 30003, protocol = "http" }] }, ` +
			`{ name = "patient", listener_port = 80, priority = 6, backends = [{ target_pool_id = "tp-a", port = 30004 }], ` +
			`timeouts = { request_ms = 10000, backend_request_ms = 0 }, retry = { attempts = 2, status_codes = [502, 503], backoff_ms = 100 } }]`,
	})
	call("valid_certificates", modules.Certificates, nil)
	call("valid_routes", modules.Routes, nil)
	call("valid_pools", modules.TargetPools, nil)
	call("valid_address", modules.Address, nil)
	call("valid_address_detached", modules.Address, map[string]string{"load_balancer_id": "null", "family": `"ipv4"`})
	for i, c := range invalidCases {
		call(fmt.Sprintf("case_%d", i), c.module, map[string]string{c.arg: c.value})
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	tf := m.Init(t, dir)
	out, err := tf.Validate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, d := range out.Diagnostics {
		if d.Range == nil {
			t.Errorf("diagnostic without range: %s: %s", d.Summary, d.Detail)
			continue
		}
		for name, s := range spans {
			if d.Range.Start.Line >= s.from && d.Range.Start.Line <= s.to {
				if strings.HasPrefix(name, "valid_") {
					t.Errorf("valid call %s rejected: %s", name, d.Detail)
				}
				found[name+"\x00"+d.Detail] = true
			}
		}
	}
	for i, c := range invalidCases {
		name := fmt.Sprintf("case_%d", i)
		ok := false
		for k := range found {
			if strings.HasPrefix(k, name+"\x00") && strings.Contains(strings.Join(strings.Fields(k), " "), c.message) {
				ok = true
			}
		}
		if !ok {
			value := c.value
			if len(value) > 120 {
				value = value[:120] + "…"
			}
			t.Errorf("%s = %s: no error containing %q", c.arg, value, c.message)
		}
	}
}

// TestModuleTests runs each module's own terraform test suite
// (tests/*.tftest.hcl, provider mocked), attached to the provider served
// in this process (the mock takes its schema from it).
func TestModuleTests(t *testing.T) {
	m := tftest.Get(t)
	reattach := attachedProvider(t)
	paths := writeModules(t)
	for _, dir := range paths.All() {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if dir == paths.Certificates {
				writeCertificateVars(t, dir)
			}
			if _, err := terraformAttached(t, m, dir, reattach, "init", "-input=false", "-backend=false"); err != nil {
				t.Fatal(err)
			}
			out, err := terraformAttached(t, m, dir, reattach, "test", "-json")
			if err != nil {
				t.Fatalf("terraform test: %v\n%s", err, messages(out))
			}
			if !strings.Contains(out, `"type":"test_summary"`) || !strings.Contains(out, `"status":"pass"`) {
				t.Fatalf("terraform test reported no passing summary:\n%s", messages(out))
			}
		})
	}
}

// messages extracts the human lines from terraform test -json output.
func messages(jsonLines string) string {
	var b strings.Builder
	for _, l := range strings.Split(jsonLines, "\n") {
		var m struct {
			Message    string `json:"@message"`
			Diagnostic struct {
				Detail string `json:"detail"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Message != "" {
			fmt.Fprintln(&b, m.Message, m.Diagnostic.Detail)
		}
	}
	return b.String()
}

// writeCertificateVars gives the certificates module's test suite real
// certificates and keys: the (mocked) provider still checks them.
func writeCertificateVars(t *testing.T, dir string) {
	web := simtest.NewCert(t, simtest.CertOptions{CommonName: "web.example.test"})
	api := simtest.NewCert(t, simtest.CertOptions{CommonName: "api.example.test"})
	vars := fmt.Sprintf("certificates = {\n  web = { certificate_pem = %q }\n  api = { certificate_pem = %q, private_key_version = 3 }\n}\n"+
		"private_keys = {\n  web = %q\n  api = %q\n}\n", web.CertPEM, api.CertPEM, web.KeyPEM, api.KeyPEM)
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars"), []byte(vars), 0o600); err != nil {
		t.Fatal(err)
	}
}
