package tfprovider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tfgc"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// protoV6Factories serves the provider in-process to the terraform binary
// that terraform-plugin-testing runs.
var protoV6Factories = map[string]func() (tfprotov6.ProviderServer, error){
	"example": providerserver.NewProtocol6WithError(New(Version)()),
}

// TestMain gives terraform a real, empty CLI config unless one exists: the
// environment may point TF_CLI_CONFIG_FILE at a missing file, which makes
// terraform warn. Acceptance tests reattach to the in-process provider, so
// no provider installation settings are needed.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f == "" || !fileExists(f) {
		dir, err := os.MkdirTemp("", "tfprovider-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		rc := filepath.Join(dir, "terraform.rc")
		if err := os.WriteFile(rc, []byte("# empty: tests reattach to the provider\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		os.Setenv("TF_CLI_CONFIG_FILE", rc)
	}
	os.Setenv("CHECKPOINT_DISABLE", "1")
	// The terraform processes collect garbage as the runner's do
	// (internal/tfgc), unless the caller chose.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		for k, v := range tfgc.Env(0) {
			os.Setenv(k, v)
		}
	}
	return m.Run()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// testEnv is one simulator plus a client for setting up and checking
// objects behind Terraform's back.
type testEnv struct {
	sim    *simtest.Sim
	client *exampleapi.Client
}

func newTestEnv(t *testing.T, opts ...simtest.Option) *testEnv {
	t.Helper()
	sim := simtest.Start(t, opts...)
	c, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token, UserAgent: "tfprovider-test"})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{sim: sim, client: c}
}

// providerBlock configures the provider for this simulator.
func (e *testEnv) providerBlock() string {
	return fmt.Sprintf(`
provider "example" {
  endpoint = %q
  token    = %q
  region   = "ex-west-1"
}
`, e.sim.URL, e.sim.Token)
}

func (e *testEnv) config(body string) string { return e.providerBlock() + body }

// cliConfig is config for a plain terraform run (not the test framework):
// the provider pinned to the version its offline mirror holds.
func (e *testEnv) cliConfig(body string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    example = {
      source  = %q
      version = "= %s"
    }
  }
}
`, Address, Version) + e.config(body)
}

func (e *testEnv) createInstance(t *testing.T, name, zone string, tags map[string]string) *exampleapi.Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := e.client.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: zone, Tags: tags})
	if err != nil {
		t.Fatalf("creating instance %s: %v", name, err)
	}
	return in
}

func (e *testEnv) loadBalancers(t *testing.T) []exampleapi.LoadBalancer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lbs, err := e.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatalf("listing load balancers: %v", err)
	}
	return lbs
}

func bg() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// noneLeft is the check that the cloud has no objects of a kind (plural,
// e.g. "addresses") left: list lists them all.
func noneLeft[T any](plural string, list func(context.Context) ([]T, error)) error {
	ctx, cancel := bg()
	defer cancel()
	left, err := list(ctx)
	if err != nil {
		return fmt.Errorf("listing %s: %w", plural, err)
	}
	if len(left) != 0 {
		return fmt.Errorf("%d %s left in the cloud: %+v", len(left), plural, left)
	}
	return nil
}

// configError is a configuration and the error (a regexp) it fails with.
type configError struct{ cfg, want string }

// errorSteps is a step for each case, its configuration passed through
// config (e.g. testEnv.config, which adds the provider block).
func errorSteps(config func(string) string, cases []configError) []resource.TestStep {
	steps := make([]resource.TestStep, 0, len(cases))
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: config(c.cfg), ExpectError: regexp.MustCompile(c.want)})
	}
	return steps
}

// copyLockFile puts the toolchain's lock file (tftest.Toolchain.LockFile)
// in the working directory dir, for terraform init to use.
func copyLockFile(t *testing.T, dir, lockFile string) {
	t.Helper()
	lock, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".terraform.lock.hcl"), string(lock))
}

// warningRecorder serves the provider like protoV6Factories and keeps the
// warnings its applies return: terraform-plugin-testing has no check for
// warnings, and adoption must say what it did.
type warningRecorder struct {
	mu       sync.Mutex
	warnings []string
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *warningRecorder
}

func (s recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.ProviderServer.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.rec.mu.Lock()
		for _, d := range resp.Diagnostics {
			if d.Severity == tfprotov6.DiagnosticSeverityWarning {
				s.rec.warnings = append(s.rec.warnings, d.Summary+": "+d.Detail)
			}
		}
		s.rec.mu.Unlock()
	}
	return resp, err
}

func (r *warningRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"example": func() (tfprotov6.ProviderServer, error) {
			srv, err := providerserver.NewProtocol6WithError(New(Version)())()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: srv, rec: r}, nil
		},
	}
}

// expect checks that exactly one recorded warning matches re.
func (r *warningRecorder) expect(re *regexp.Regexp) resource.TestCheckFunc {
	return func(*terraform.State) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		n := 0
		for _, w := range r.warnings {
			if re.MatchString(w) {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("want one warning matching %s, have %d among %q", re, n, r.warnings)
		}
		return nil
	}
}

// diagRE matches the given texts in order, anything between them; spaces
// match any white space, as Terraform wraps diagnostics.
func diagRE(texts ...string) *regexp.Regexp {
	quoted := make([]string, len(texts))
	for i, t := range texts {
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(t), " ", `\s+`)
	}
	return regexp.MustCompile(strings.Join(quoted, `[\s\S]*`))
}

// driftStep changes the object outside Terraform (change) and expects the
// plan of cfg to show it.
func driftStep(cfg string, change func()) resource.TestStep {
	return resource.TestStep{PreConfig: change, Config: cfg, PlanOnly: true, ExpectNonEmptyPlan: true}
}

// updateStep applies cfg, planned as an update in place of addr with attr
// as want, then runs check.
func updateStep(cfg, addr, attr string, want any, check resource.TestCheckFunc) resource.TestStep {
	return resource.TestStep{
		Config:           cfg,
		ConfigPlanChecks: beforeApply(planUpdate(addr), planIs(addr, attr, want)),
		Check:            check,
	}
}

// importStep imports addr by its id and checks that the imported state
// matches the applied one, but for ignore: what the cloud does not hold
// (configuration-only or write-only arguments).
func importStep(addr string, ignore ...string) resource.TestStep {
	return resource.TestStep{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: ignore}
}

// recreateStep deletes the object at addr (id *id) outside Terraform
// (del): the apply of cfg creates it again, under another id; then check
// runs.
func recreateStep(cfg, addr string, id *string, del func(), check resource.TestCheckFunc) resource.TestStep {
	return resource.TestStep{
		PreConfig:        del,
		Config:           cfg,
		ConfigPlanChecks: beforeApply(planCreate(addr)),
		Check: func(s *terraform.State) error {
			if s.RootModule().Resources[addr].Primary.ID == *id {
				return fmt.Errorf("state still has the deleted id %s", *id)
			}
			return check(s)
		},
	}
}

// accTest runs steps against the provider served in process, in parallel
// with the other acceptance tests; checkDestroy runs after the final
// destroy.
func accTest(t *testing.T, checkDestroy resource.TestCheckFunc, steps []resource.TestStep) {
	t.Helper()
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Factories, CheckDestroy: checkDestroy, Steps: steps})
}
