package tfprovider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// panicky panics in PlanResourceChange, as a provider bug would.
type panicky struct{ tfprotov6.ProviderServer }

func (panicky) PlanResourceChange(context.Context, *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	panic("boom in plan")
}

func realServer() tfprotov6.ProviderServer { return providerserver.NewProtocol6(New(Version)())() }

// providerFor serves the provider with getenv as its environment.
func providerFor(getenv func(string) string) func() tfprotov6.ProviderServer {
	return providerserver.NewProtocol6(newExampleProvider(Version, getenv))
}

// tokenEnv is an environment holding only the simulator's token.
func (e *testEnv) tokenEnv(k string) string {
	if k == EnvToken {
		return e.sim.Token
	}
	return ""
}

func TestGuardRecoversPanics(t *testing.T) {
	var rpcs []string
	g := &guarded{next: panicky{realServer()}, onPanic: func(rpc string, v any, stack []byte) {
		rpcs = append(rpcs, fmt.Sprintf("%s %v %t", rpc, v, strings.Contains(string(stack), "PlanResourceChange")))
	}}
	_, err := g.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{TypeName: "example_load_balancer"})
	if err == nil || !strings.Contains(err.Error(), "panicked in PlanResourceChange: boom in plan") {
		t.Fatalf("want the panic as the RPC's error, got %v", err)
	}
	if len(rpcs) != 1 || rpcs[0] != "PlanResourceChange boom in plan true" {
		t.Fatalf("OnPanic heard %q", rpcs)
	}
	// Other RPCs pass through untouched.
	resp, err := g.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || resp.ResourceSchemas["example_load_balancer"] == nil {
		t.Fatalf("schema through the guard: %v", err)
	}
}

// attachedTerraform runs terraform in dir attached to s.
type attachedTerraform struct {
	tf  *tfexec.Terraform
	opt *tfexec.ReattachOption
}

func attach(t *testing.T, dir string, s *InProcess) attachedTerraform {
	t.Helper()
	tc := tftest.Get(t)
	tf, err := tfexec.NewTerraform(dir, tc.Terraform)
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.SetEnv(tc.Env(nil)); err != nil {
		t.Fatal(err)
	}
	return attachedTerraform{tf: tf, opt: tfexec.Reattach(tfexec.ReattachInfo{Address: {
		Protocol: "grpc", ProtocolVersion: 6, Pid: s.Pid(), Test: true,
		Addr: tfexec.ReattachConfigAddr{Network: s.Addr().Network(), String: s.Addr().String()},
	}})}
}

// initAttached makes a workspace with one load balancer (name, port 80),
// attached to s, and initialises it.
func (e *testEnv) initAttached(t *testing.T, ctx context.Context, s *InProcess, name string) (string, attachedTerraform) {
	t.Helper()
	dir := t.TempDir()
	at := attach(t, dir, s)
	writeFile(t, filepath.Join(dir, "main.tf"), e.lbConfig(name, 80))
	if err := at.tf.Init(ctx, at.opt); err != nil {
		t.Fatal(err)
	}
	return dir, at
}

// lbConfig is a root module with one load balancer and no token: the
// provider must get it from its environment.
func (e *testEnv) lbConfig(name string, port int) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    example = { source = %q, version = "= %s" }
  }
}
provider "example" {
  endpoint = %q
  region   = "ex-west-1"
}
resource "example_load_balancer" "web" {
  name      = %q
  listeners = { "tcp/%[5]d" = { protocol = "tcp", port = %[5]d, target_port = 8080 } }
}
output "id" { value = example_load_balancer.web.id }
`, Address, Version, e.sim.URL, name, port)
}

func serveTest(t *testing.T, factory func() tfprotov6.ProviderServer, o InProcessOptions) *InProcess {
	t.Helper()
	s, err := serveInProcess(factory, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Terraform attaches to the provider served in this process: init installs
// nothing (no lock file, no .terraform/providers), the provider reads its
// environment from Getenv (not the process's), and the server outlives
// each terraform process (nothing of the binary's "exit when terraform is
// gone" applies).
func TestAccInProcessServesTerraform(t *testing.T) {
	tftest.RequireAcceptance(t)
	e := newTestEnv(t)
	t.Setenv(EnvToken, "the-process-token-is-not-the-providers")
	s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: "t"})
	ctx, cancel := bg()
	defer cancel()
	dir, at := e.initAttached(t, ctx, s, "in-process")
	for _, f := range []string{".terraform.lock.hcl", ".terraform/providers"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("attached init wrote %s", f)
		}
	}
	for _, port := range []int{80, 81} { // two terraform processes, one server
		writeFile(t, filepath.Join(dir, "main.tf"), e.lbConfig("in-process", port))
		if err := at.tf.Apply(ctx, at.opt); err != nil {
			t.Fatalf("apply (port %d): %v", port, err)
		}
		lbs := e.loadBalancers(t)
		if len(lbs) != 1 || lbs[0].Listeners[0].Port != port {
			t.Fatalf("after apply of port %d: %+v", port, lbs)
		}
	}
	if !s.Usable() {
		t.Fatal("server unusable after terraform exited")
	}
}

// A provider panic fails the terraform command, not this process; the
// server is then no longer Usable, so its owner replaces it.
func TestAccInProcessPanicIsContained(t *testing.T) {
	tftest.RequireAcceptance(t)
	e := newTestEnv(t)
	var mu sync.Mutex
	var heard []string
	s := serveTest(t, func() tfprotov6.ProviderServer { return panicky{providerFor(e.tokenEnv)()} }, InProcessOptions{Name: "p",
		OnPanic: func(rpc string, v any, _ []byte) { mu.Lock(); heard = append(heard, rpc); mu.Unlock() }})
	dir := t.TempDir()
	at := attach(t, dir, s)
	ctx, cancel := bg()
	defer cancel()
	writeFile(t, filepath.Join(dir, "main.tf"), e.lbConfig("in-process", 80))
	if err := at.tf.Init(ctx, at.opt); err != nil {
		t.Fatal(err)
	}
	_, err := at.tf.Plan(ctx, at.opt)
	if err == nil || !strings.Contains(err.Error(), "panicked in PlanResourceChange: boom in plan") {
		t.Fatalf("want terraform to report the provider's panic, got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 1 || heard[0] != "PlanResourceChange" {
		t.Fatalf("OnPanic heard %q", heard)
	}
	if s.Usable() {
		t.Fatal("a server whose provider panicked is still Usable")
	}
	if n := len(e.loadBalancers(t)); n != 0 {
		t.Fatalf("%d load balancers after a failed plan", n)
	}
}

// Close stops the server: it is no longer Usable and its socket is gone.
func TestInProcessClose(t *testing.T) {
	s, err := ServeInProcess(InProcessOptions{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr().Network() != "unix" || !s.Usable() {
		t.Fatalf("serving at %v, usable %v", s.Addr(), s.Usable())
	}
	if fi, err := os.Stat(s.Addr().String()); err != nil || fi.Mode().Perm()&0o022 != 0 {
		t.Fatalf("socket %s: %v, mode %v: want writable by its owner only", s.Addr(), err, fi.Mode())
	}
	s.Close()
	if s.Usable() {
		t.Fatal("usable after Close")
	}
	if _, err := os.Stat(s.Addr().String()); !os.IsNotExist(err) {
		t.Fatalf("socket left after Close: %v", err)
	}
}

// One server outlives many terraform processes and keeps nothing of them
// once Idle: the framework keeps every request's context (and through it
// the connection's gRPC transport and buffers) until StopProvider, about
// 0.4 MiB per plan here before Idle existed.
func TestAccInProcessIdleKeepsMemoryFlat(t *testing.T) {
	tftest.RequireAcceptance(t)
	e := newTestEnv(t)
	s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: "flat"})
	ctx, cancel := bg()
	defer cancel()
	_, at := e.initAttached(t, ctx, s, "flat")
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapInuse) / (1 << 20)
	}
	// 15 measured plans: a retained request would grow the heap by
	// 6 MiB, above the 4 allowed.
	const warm, plans = 5, 20
	var start float64
	for i := range plans {
		if _, err := at.tf.Plan(ctx, at.opt); err != nil {
			t.Fatal(err)
		}
		s.Idle()
		if i == warm-1 {
			start = heap()
		}
	}
	if grown := heap() - start; grown > 4 {
		t.Fatalf("heap in use grew %.1f MiB over %d terraform plans after warm-up (want < 4; a retained request is ~0.4 MiB a plan)", grown, plans-warm)
	}
	if !s.Usable() {
		t.Fatal("Idle made the server unusable")
	}
}

// The framework's trace logs are off unless TF_LOG asks for logs or
// TF_LOG_SDK_FRAMEWORK names a level.
func TestFrameworkLevel(t *testing.T) {
	for env, want := range map[string]bool{"": true, "TF_LOG=DEBUG": false, "TF_LOG_SDK_FRAMEWORK=TRACE": false} {
		name, value, _ := strings.Cut(env, "=")
		level, set := frameworkLevel(func(k string) string {
			if k == name {
				return value
			}
			return ""
		})
		if set != want || level != "off" {
			t.Errorf("%q: %q, %v; want set %v", env, level, set, want)
		}
	}
}
