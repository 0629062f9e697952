package runner_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq" // holdPGLock's driver

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/zclconf/go-cty/cty"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

// env is a runner wired to a fresh simulator.
type env struct {
	sim *simtest.Sim
	api *exampleapi.Client
	r   *runner.Runner
	tc  tftest.Toolchain
}

// staleLockEnv is an env whose runner waits 100 ms for a state lock and
// forces one open once it is 2 s old on the returned fake clock.
func staleLockEnv(t *testing.T) (*env, *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	return newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout, c.StaleLockAge, c.Clock = 100*time.Millisecond, 2*time.Second, clk
	}), clk
}

// forcedOpen tells the ids of the locks e's runner forced open so far.
func (e *env) forcedOpen() func() []string {
	var ids []string
	e.r.OnForceUnlock = func(_, id, _ string, _ time.Time) { ids = append(ids, id) }
	return func() []string { return ids }
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
	res, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
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

func (e *env) lbs(t *testing.T, name string) []exampleapi.LoadBalancer {
	t.Helper()
	l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func total(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func traversal(root string, attrs ...string) hcl.Traversal {
	tr := hcl.Traversal{hcl.TraverseRoot{Name: root}}
	for _, a := range attrs {
		tr = append(tr, hcl.TraverseAttr{Name: a})
	}
	return tr
}

func sortedKeys(m map[string]cty.Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// s3Server starts an S3 server with a bucket "states", and gives this
// test the AWS_* environment the s3 backend reads (nothing else of AWS_*
// leaks in from the test's own environment).
func s3Server(t *testing.T, opts ...tests3.Option) *tests3.Server {
	srv := tests3.Start(t, opts...)
	srv.CreateBucket("states")
	for _, k := range []string{"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CA_BUNDLE", "AWS_SSE_CUSTOMER_KEY", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	return srv
}

// pgWorkspaces lists the pg backend's workspaces from a fresh directory.
func pgWorkspaces(t *testing.T, tg *state.Location) []string {
	t.Helper()
	tc := tftest.Get(t)
	dir := t.TempDir()
	f := "terraform {\n  backend \"pg\" {\n    schema_name = \"ccm_states\"\n  }\n}\n"
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(f), 0o644))
	tf, _ := tfexec.NewTerraform(dir, tc.Terraform)
	testkit.Must(t, tf.SetEnv(tc.Env(map[string]string{"PG_CONN_STR": tg.Env["PG_CONN_STR"]})))
	if err := tf.Init(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	ws, _, err := tf.WorkspaceList(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// httpLocation is where the http backend srv keeps the state of the
// Service default/name.
func httpLocation(t *testing.T, srv *testhttpbackend.Server, name string) *state.Location {
	t.Helper()
	return serviceLocation(t, state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL}}, name)
}

func toBlock(b state.Block) *backendBlock {
	bb := &backendBlock{typ: b.Type, attrs: map[string]cty.Value{}}
	for _, a := range b.Attrs {
		bb.attrs[a.Name] = a.Value
	}
	return bb
}

type file struct{ path, content string }

// walk reads every file of a workspace (plan files and .terraform included).
func walk(t *testing.T, r *runner.Runner, key string) []file {
	var out []file
	testkit.Must(t, filepath.Walk(filepath.Join(r.WorkDir(), key), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && info.Size() < 10<<20 {
			data, _ := os.ReadFile(p)
			out = append(out, file{p, string(data)})
		}
		return nil
	}))
	if len(out) == 0 {
		t.Fatal("workspace is empty: nothing checked")
	}
	return out
}

// s3Target is an object's state target on srv's bucket "states".
func s3Target(t *testing.T, srv *tests3.Server, name string) *state.Location {
	t.Helper()
	return serviceLocation(t, state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}}, name)
}

// s3Lock writes the lock file terraform's s3 backend writes
// (<key>.tflock, created with If-None-Match: *), as a holder would.
func s3Lock(t *testing.T, srv *tests3.Server, tg *state.Location, id, who, info string, created time.Time) {
	t.Helper()
	key := tg.Block.Attrs[1].Value.AsString() + ".tflock"
	body, _ := json.Marshal(map[string]any{"ID": id, "Operation": "OperationTypeApply", "Info": info, "Who": who, "Version": "1.11.4", "Created": created, "Path": "states/" + key})
	_, err := srv.Client().PutObject(testkit.Context(t), &s3.PutObjectInput{Bucket: aws.String("states"), Key: &key, Body: strings.NewReader(string(body)), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatal(err)
	}
}

// pgCase runs one job against a pg backend reached with conn and returns
// its error.
func (e *env) pgRun(t *testing.T, conn, name string, port int64) error {
	t.Helper()
	t.Setenv("CCM_SCRUB_PG", conn)
	tg := serviceLocation(t, state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_SCRUB_PG", SchemaName: "ccm"}}, name)
	j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
	j.Env, j.CLIWorkspace = tg.Env, tg.CLIWorkspace
	_, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{})
	return err
}

// holdPGLock takes the advisory lock in a session of its own, as another
// holder would; the session ends with the test, or the caller unlocks on
// the connection returned.
func holdPGLock(t *testing.T, connStr string, lock int64) *sql.Conn {
	t.Helper()
	db, err := sql.Open("postgres", connStr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.ExecContext(testkit.Context(t), "SELECT pg_advisory_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	return conn
}

// pgCreationLock is the advisory lock the pg backend takes for workspace
// creation, and with every state lock: terraform's is -1, one for the
// whole database; OpenTofu's is per schema (and table), minus the FNV-32
// hash of "<schema>\x00states".
func pgCreationLock(dist, schema string) int64 {
	if dist != tftest.Tofu {
		return -1
	}
	h := fnv.New32()
	h.Write([]byte(schema + "\x00states"))
	return -int64(h.Sum32())
}
