package tfprovider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// TestAccLoadBalancerRules_stateWithoutOrderKey: real terraform, attached
// to this provider, plans no change, with or without refresh, for a state
// whose rules were written before order_key existed (as the previous
// provider wrote them: no order_key in their JSON) and the configuration
// that made it. The schema version stayed 1: the framework reads the
// missing attribute as null, which is what the configuration plans.
func TestAccLoadBalancerRules_stateWithoutOrderKey(t *testing.T) {
	tftest.RequireAcceptance(t)
	t.Parallel()
	e := newTestEnv(t)
	s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: "order-key"})
	dir := t.TempDir()
	at := attach(t, dir, s)
	writeFile(t, filepath.Join(dir, "main.tf"), e.cliConfig(`
resource "example_load_balancer" "web" {
  name      = "web"
  listeners = { "http/80" = { protocol = "http", port = 80, target_port = 8080 } }
  rules = {
    moved = { listener_port = 80, priority = 1, hostnames = ["old.example"], redirect = { hostname = "new.example", status_code = 301 } }
    gone  = { listener_port = 80, priority = 2, fixed_response = { status_code = 404 } }
  }
}
`))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := at.tf.Init(ctx, at.opt); err != nil {
		t.Fatalf("terraform init: %v", err)
	}
	if err := at.tf.Apply(ctx, at.opt); err != nil {
		t.Fatalf("terraform apply: %v", err)
	}
	t.Cleanup(func() {
		if err := at.tf.Destroy(context.Background(), at.opt); err != nil {
			t.Errorf("terraform destroy: %v", err)
		}
	})
	if n := dropRuleAttribute(t, filepath.Join(dir, "terraform.tfstate"), "order_key"); n != 2 {
		t.Fatalf("order_key dropped from %d rules, want 2", n)
	}
	at.expectNoChanges(t, ctx, "a state whose rules have no order_key")
}

// dropRuleAttribute removes attribute attr from every rule of every load
// balancer in the state file at path, and says from how many.
func dropRuleAttribute(t *testing.T, path, attr string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range st["resources"].([]any) {
		if r := r.(map[string]any); r["type"] == "example_load_balancer" {
			for _, inst := range r["instances"].([]any) {
				rules, _ := inst.(map[string]any)["attributes"].(map[string]any)["rules"].(map[string]any)
				for _, rule := range rules {
					if _, ok := rule.(map[string]any)[attr]; ok {
						delete(rule.(map[string]any), attr)
						n++
					}
				}
			}
		}
	}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(out))
	return n
}
