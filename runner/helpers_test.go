package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// env is a runner wired to a fresh simulator.
type env struct {
	sim *simtest.Sim
	api *exampleapi.Client
	r   *runner.Runner
	tc  tftest.Toolchain
}

func newEnv(t *testing.T, sim *simtest.Sim, mod ...func(*runner.Config)) *env {
	t.Helper()
	tc := tftest.Get(t)
	if sim == nil {
		sim = simtest.Start(t)
	}
	cfg := runner.Config{
		Terraform:     runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: tc.Terraform},
		WorkDir:       filepath.Join(t.TempDir(), "work"),
		CLIConfigFile: tc.CLIConfig,
		LockFile:      tc.LockFile,
		Concurrency:   4,
		LockTimeout:   2 * time.Second,
		Env:           map[string]string{"EXAMPLE_TOKEN": sim.Token},
	}
	for _, m := range mod {
		m(&cfg)
	}
	r, err := runner.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	return &env{sim: sim, api: api, r: r, tc: tc}
}

// lbModule is a root module with one load balancer, built with hclwrite
// like the real renderer (which has its own tests).
type lbModule struct {
	name    string
	port    int64
	backend string // local path (file) or "" for terraform's default
	block   *backendBlock
}

type backendBlock struct {
	typ   string
	attrs map[string]cty.Value
}

// serviceLocation is where the backends of cfg keep the state of the
// Service default/name.
func serviceLocation(t *testing.T, cfg state.Config, name string) *state.Location {
	t.Helper()
	b, err := state.New(cfg, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := b.Location(state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// localJob is the job of key with its state in a file of its own, and
// that file's path.
func (e *env) localJob(t *testing.T, key string) (runner.Job, string) {
	t.Helper()
	statePath := filepath.Join(t.TempDir(), key+".tfstate")
	return e.job(t, key, lbModule{name: key, backend: statePath}), statePath
}

// ensure runs job, failing the test on an error.
func (e *env) ensure(t *testing.T, job runner.Job) *runner.Result {
	t.Helper()
	res, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (e *env) job(t *testing.T, key string, m lbModule) runner.Job {
	t.Helper()
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	tfb := body.AppendNewBlock("terraform", nil).Body()
	rp := tfb.AppendNewBlock("required_providers", nil).Body()
	rp.SetAttributeValue("example", cty.ObjectVal(map[string]cty.Value{
		"source": cty.StringVal("example.com/example/example"), "version": cty.StringVal("0.1.0"),
	}))
	if m.block != nil {
		bb := tfb.AppendNewBlock("backend", []string{m.block.typ}).Body()
		for _, k := range sortedKeys(m.block.attrs) {
			bb.SetAttributeValue(k, m.block.attrs[k])
		}
	} else if m.backend != "" {
		tfb.AppendNewBlock("backend", []string{"local"}).Body().SetAttributeValue("path", cty.StringVal(m.backend))
	}
	p := body.AppendNewBlock("provider", []string{"example"}).Body()
	p.SetAttributeValue("endpoint", cty.StringVal(e.sim.URL))
	p.SetAttributeValue("region", cty.StringVal("ex-west-1"))
	lb := body.AppendNewBlock("resource", []string{"example_load_balancer", "this"}).Body()
	lb.SetAttributeValue("name", cty.StringVal(m.name))
	port := m.port
	if port == 0 {
		port = 80
	}
	lb.SetAttributeValue("listeners", cty.MapVal(map[string]cty.Value{fmt.Sprintf("tcp/%d", port): cty.ObjectVal(map[string]cty.Value{
		"protocol": cty.StringVal("tcp"), "port": cty.NumberIntVal(port), "target_port": cty.NumberIntVal(30080),
	})}))
	for _, out := range []string{"id", "ipv4", "status"} {
		body.AppendNewBlock("output", []string{out}).Body().SetAttributeRaw("value", hclwrite.TokensForTraversal(traversal("example_load_balancer", "this", out)))
	}
	src := hclwrite.Format(f.Bytes())
	sum := sha256.Sum256(src)
	return runner.Job{Key: key, Files: map[string][]byte{"main.tf": src}, Hash: hex.EncodeToString(sum[:])}
}

func ctxT(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

func (e *env) lbs(t *testing.T, name string) []exampleapi.LoadBalancer {
	t.Helper()
	l, err := e.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
