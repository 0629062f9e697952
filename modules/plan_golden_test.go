package modules_test

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// lbRoot is a root module calling the loadbalancer module the way the
// controller renders it: listeners sorted by port, the controller's owner
// tags.
func lbRoot(sim *simtest.Sim, listeners ...string) string {
	return providerHeader(sim) + fmt.Sprintf(`
module "load_balancer" {
  source    = "./modules/loadbalancer"
  name      = "k8s-shop-web"
  listeners = [%s]
  tags = {
    "k8s.example.com/cluster-id"  = "prod"
    "k8s.example.com/service-uid" = "6f1c1e2a-8d3b-4c5e-9f70-0123456789ab"
  }
}
`, strings.Join(listeners, ", "))
}

// providerHeader starts a root module: the provider, configured for sim
// and region ex-west-1.
func providerHeader(sim *simtest.Sim) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    example = { source = "example.com/example/example" }
  }
}

provider "example" {
  endpoint = %q
  token    = %q
  region   = "ex-west-1"
}
`, sim.URL, sim.Token)
}

// normalisePlan replaces what differs between runs (ids, addresses,
// times) by fixed placeholders.
func normalisePlan(s string) string {
	for _, r := range []struct{ re, with string }{
		{`lb-[0-9a-f]{16}`, "lb-0000000000000000"},
		{`\b\d{1,3}(\.\d{1,3}){3}\b`, "192.0.2.1"},
		{`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`, "2006-01-02T15:04:05Z"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return s
}

// TestListenerChangePlans: on a load balancer with ports 80 and 443, real
// terraform plans (provider from the mirror, simulator over HTTP) show
// changing port 80 to 8080 as exactly one listener removed and one added,
// 443 unchanged, and changing the target port of 443 as that one listener
// updated in place. The human-readable plans are compared with
// testdata/*.golden (go test ./modules -run TestListenerChangePlans
// -update rewrites them).
func TestListenerChangePlans(t *testing.T) {
	m := tftest.Get(t)
	sim := simtest.Start(t)
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := modules.WriteTo(filepath.Join(dir, "modules")); err != nil {
		t.Fatal(err)
	}
	const (
		http     = `{ protocol = "tcp", port = 80, target_port = 30080 }`
		https    = `{ protocol = "tcp", port = 443, target_port = 30443 }`
		alt      = `{ protocol = "tcp", port = 8080, target_port = 30080 }`
		httpsNew = `{ protocol = "tcp", port = 443, target_port = 30444 }`
	)
	main := filepath.Join(dir, "main.tf")
	if err := os.WriteFile(main, []byte(lbRoot(sim, http, https)), 0o644); err != nil {
		t.Fatal(err)
	}
	tf := m.Init(t, dir)
	if err := tf.Apply(ctx); err != nil {
		t.Fatalf("apply with ports 80 and 443: %v", err)
	}

	cases := []struct {
		golden         string
		listeners      []string
		before, after  []string // listener keys
		changed, equal string   // a listener that must differ / stay equal
	}{
		{"listener-port-change.golden", []string{https, alt}, []string{"tcp/443", "tcp/80"}, []string{"tcp/443", "tcp/8080"}, "", "tcp/443"},
		{"listener-target-port-change.golden", []string{http, httpsNew}, []string{"tcp/443", "tcp/80"}, []string{"tcp/443", "tcp/80"}, "tcp/443", "tcp/80"},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			if err := os.WriteFile(main, []byte(lbRoot(sim, c.listeners...)), 0o644); err != nil {
				t.Fatal(err)
			}
			planFile := filepath.Join(dir, "change.tfplan")
			changes, err := tf.Plan(ctx, tfexec.Out(planFile))
			if err != nil || !changes {
				t.Fatalf("plan: changes %t, %v", changes, err)
			}
			plan, err := tf.ShowPlanFile(ctx, planFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.ResourceChanges) != 1 || !plan.ResourceChanges[0].Change.Actions.Update() {
				t.Fatalf("want one in-place update, got %+v", plan.ResourceChanges)
			}
			listeners := func(v any) map[string]any {
				obj, _ := v.(map[string]any)
				ls, _ := obj["listeners"].(map[string]any)
				return ls
			}
			before, after := listeners(plan.ResourceChanges[0].Change.Before), listeners(plan.ResourceChanges[0].Change.After)
			if keys := slices.Sorted(maps.Keys(before)); !reflect.DeepEqual(keys, c.before) {
				t.Errorf("listeners before: %v, want %v", keys, c.before)
			}
			if keys := slices.Sorted(maps.Keys(after)); !reflect.DeepEqual(keys, c.after) {
				t.Errorf("listeners after: %v, want %v", keys, c.after)
			}
			if !reflect.DeepEqual(before[c.equal], after[c.equal]) {
				t.Errorf("listener %s changed: %v -> %v", c.equal, before[c.equal], after[c.equal])
			}
			if c.changed != "" && reflect.DeepEqual(before[c.changed], after[c.changed]) {
				t.Errorf("listener %s unchanged", c.changed)
			}

			text, err := tf.ShowPlanFileRaw(ctx, planFile)
			if err != nil {
				t.Fatal(err)
			}
			got := normalisePlan(text)
			golden := filepath.Join("testdata", c.golden)
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("plan differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}
