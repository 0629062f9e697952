package tfprovider

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// TestAccCancelledApply interrupts a real `terraform apply` (the provider
// installed from the offline mirror) while the load balancer provisions.
// The created object must stay tracked in state, terraform must stop
// promptly and release its lock, and the next apply must converge on one
// load balancer.
func TestAccCancelledApply(t *testing.T) {
	tftest.RequireAcceptance(t)
	bin := tftest.Get(t)
	t.Parallel()
	const provisionDelay = 2 * time.Minute
	reqs := simtest.NewRequests()
	e := newTestEnv(t, simtest.WithProvisionDelay(provisionDelay), simtest.WithRequests(reqs))

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), e.cliConfig(`
resource "example_load_balancer" "web" {
  name      = "slow"
  listeners = { "tcp/80" = { protocol = "tcp", port = 80, target_port = 8080 } }
  timeouts  = { create = "10m" }
}
`))
	lock, err := os.ReadFile(bin.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".terraform.lock.hcl"), string(lock))

	tf := newTerraform(t, dir, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := tf.Init(ctx); err != nil {
		t.Fatalf("terraform init: %v", err)
	}

	// Interrupt once the provider's wait polls the load balancer: it
	// exists, its id is the provider's, and it is provisioning.
	applyCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	created := make(chan string, 1)
	go func() {
		defer interrupt()
		const lbPath = "/v1/load-balancers/"
		r, err := reqs.Wait(applyCtx, func(r simtest.Request) bool {
			return r.Method == http.MethodGet && strings.HasPrefix(r.Path, lbPath)
		})
		if err == nil {
			created <- strings.TrimPrefix(r.Path, lbPath)
		}
	}()
	start := time.Now()
	err = tf.Apply(applyCtx)
	stopped := time.Since(start)
	if err == nil {
		t.Fatal("apply succeeded; it should have been interrupted")
	}
	if !errors.Is(err, context.Canceled) {
		t.Logf("apply error: %v", err)
	}
	if stopped > provisionDelay/2 {
		t.Errorf("apply took %v after the interrupt: the provider did not stop waiting", stopped)
	}
	var lbID string
	select {
	case lbID = <-created:
	default:
		t.Fatal("the provider did not poll a load balancer before the interrupt")
	}

	// State keeps the load balancer; the cloud has exactly it; no lock.
	st := readState(t, dir)
	if got := st.lbID(); got != lbID {
		t.Fatalf("state holds load balancer %q, want %q (state: %+v)", got, lbID, st)
	}
	t.Logf("after interrupt: state has %s (status %q)", lbID, st.status())
	if lbs := e.loadBalancers(t); len(lbs) != 1 || lbs[0].ID != lbID {
		t.Fatalf("cloud has %+v after the interrupt, want load balancer %s alone", lbs, lbID)
	}
	if _, err := os.Stat(filepath.Join(dir, ".terraform.tfstate.lock.info")); err == nil {
		t.Fatal("state lock left behind after the interrupt")
	}

	// The next apply converges: one active load balancer, then no changes.
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 100})
	if err := tf.Apply(ctx); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	lbs := e.loadBalancers(t)
	if len(lbs) != 1 || lbs[0].Status != exampleapi.LBStatusActive {
		t.Fatalf("after the second apply the cloud has %+v, want one active load balancer", lbs)
	}
	if got := readState(t, dir).lbID(); got != lbs[0].ID {
		t.Fatalf("state has %q, cloud has %q", got, lbs[0].ID)
	}
	changes, err := tf.Plan(ctx)
	if err != nil || changes {
		t.Fatalf("plan after convergence: changes=%v err=%v", changes, err)
	}
	if err := tf.Destroy(ctx); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if n := len(e.loadBalancers(t)); n != 0 {
		t.Fatalf("%d load balancers left after destroy", n)
	}
	assertNotInLog(t, filepath.Join(dir, "terraform.log"), e.sim.Token)
}

func newTerraform(t *testing.T, dir string, bin tftest.Toolchain) *tfexec.Terraform {
	t.Helper()
	tf := bin.Exec(t, dir)
	// A trace log, to check that the token never appears in it.
	if err := tf.SetLog("TRACE"); err != nil {
		t.Fatal(err)
	}
	if err := tf.SetLogPath(filepath.Join(dir, "terraform.log")); err != nil {
		t.Fatal(err)
	}
	if err := tf.SetWaitDelay(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return tf
}

// tfState is the part of a state file this test reads.
type tfState struct {
	Resources []struct {
		Type      string `json:"type"`
		Instances []struct {
			Status     string         `json:"status"`
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

func readState(t *testing.T, dir string) tfState {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		t.Fatalf("reading state: %v", err)
	}
	var st tfState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("decoding state: %v", err)
	}
	return st
}

func (s tfState) lbID() string {
	for _, r := range s.Resources {
		if r.Type == "example_load_balancer" && len(r.Instances) == 1 {
			id, _ := r.Instances[0].Attributes["id"].(string)
			return id
		}
	}
	return ""
}

func (s tfState) status() string {
	for _, r := range s.Resources {
		if r.Type == "example_load_balancer" && len(r.Instances) == 1 {
			return r.Instances[0].Status
		}
	}
	return ""
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func assertNotInLog(t *testing.T, path, secret string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading terraform log: %v", err)
	}
	if !strings.Contains(string(raw), "Example API request") {
		t.Fatal("terraform log has no provider request logs; the token check would prove nothing")
	}
	if strings.Contains(string(raw), secret) {
		t.Fatal("the API token appears in terraform's trace log")
	}
}
