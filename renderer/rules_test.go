package renderer

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/example/cloud-provider-example/lbmodel"
)

// Rules render as the loadbalancer module's rules input: what a rule does
// not set is left out (null in the module), so a rule reads as what it
// does; values are cty, so a hostile header or query value stays a
// string.
func TestHTTPRulesValue(t *testing.T) {
	rules := []lbmodel.Rule{
		{Name: "team-a/shop/0.0:80@a.example", ListenerPort: 80, Priority: 1, Hostname: "a.example", PathType: "prefix", Path: "/api",
			Headers:     map[string]string{"X-Env": "${file(\"/etc/passwd\")}"},
			QueryParams: map[string]string{"q": "%{ if true }x%{ endif }"},
			Backends:    []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30001, Weight: 80}, {TargetPoolID: "tp-1", Port: 30002, Weight: 20, Protocol: "h2c"}},
			ResponseHeaders: &lbmodel.HeaderChanges{Set: map[string]string{"Cache-Control": "no-store"}, Add: map[string]string{"X-Via": "gw"},
				Remove: []string{"Server"}},
			Rewrite: &lbmodel.URLRewrite{Hostname: "backend.internal", Path: "/v2"}},
		{Name: "team-a/shop/1.0:80@any", ListenerPort: 80, Priority: 2, PathType: "exact", Path: "/old",
			Redirect:       &lbmodel.HTTPRedirect{Scheme: "https", PathPrefix: "/new", StatusCode: 301},
			RequestHeaders: &lbmodel.HeaderChanges{Remove: []string{"X-Drop"}}},
		{Name: "listener/a:80@a.example", ListenerPort: 80, Priority: 3, Hostname: "a.example", FixedResponse: &lbmodel.FixedResponse{StatusCode: 404}},
	}
	f := hclwrite.NewEmptyFile()
	f.Body().SetAttributeValue("rules", rulesValue(rules))
	got := string(hclwrite.Format(f.Bytes()))
	want := `rules = [{
  backends = [{
    port           = 30001
    target_pool_id = "tp-1"
    weight         = 80
    }, {
    port           = 30002
    protocol       = "h2c"
    target_pool_id = "tp-1"
    weight         = 20
  }]
  headers = {
    X-Env = "$${file(\"/etc/passwd\")}"
  }
  hostnames     = ["a.example"]
  listener_port = 80
  name          = "team-a/shop/0.0:80@a.example"
  path          = "/api"
  path_type     = "prefix"
  priority      = 1
  query_params = {
    q = "%%{ if true }x%%{ endif }"
  }
  response_headers = {
    add = {
      X-Via = "gw"
    }
    remove = ["Server"]
    set = {
      Cache-Control = "no-store"
    }
  }
  rewrite = {
    hostname = "backend.internal"
    path     = "/v2"
  }
  }, {
  listener_port = 80
  name          = "team-a/shop/1.0:80@any"
  path          = "/old"
  path_type     = "exact"
  priority      = 2
  redirect = {
    path_prefix = "/new"
    scheme      = "https"
    status_code = 301
  }
  request_headers = {
    remove = ["X-Drop"]
  }
  }, {
  fixed_response = {
    status_code = 404
  }
  hostnames     = ["a.example"]
  listener_port = 80
  name          = "listener/a:80@a.example"
  priority      = 3
}]
`
	if got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "null") {
		t.Error("an unset attribute rendered as null")
	}
}
