package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// proc is a running example-cloud binary.
type proc struct {
	cmd              *exec.Cmd
	url, metadataURL string
	stdout           chan string // lines after the listening lines
	exited           chan error
}

const testToken = "test-token"

// startBinary runs the real binary on free loopback ports and waits until
// it prints its addresses.
func startBinary(t *testing.T, dataDir string, args ...string) *proc {
	t.Helper()
	bin := simtest.BuildBinary(t)
	args = append([]string{"--listen", "127.0.0.1:0", "--metadata-listen", "127.0.0.1:0",
		"--data-dir", dataDir, "--token", testToken, "--readonly-token", "ro-token"}, args...)
	cmd := exec.Command(bin, args...)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdout: make(chan string, 16), exited: make(chan error, 1)}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // no-op once it has exited
		err := <-p.exited      // the test already reported an unexpected exit
		p.exited <- err
	})
	deadline := time.After(20 * time.Second)
	for p.url == "" || p.metadataURL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				log, _ := os.ReadFile(stderr.Name())
				t.Fatalf("example-cloud exited before listening: %s", log)
			}
			if u, ok := strings.CutPrefix(line, "example-cloud: control API listening on "); ok {
				p.url = u
			}
			if u, ok := strings.CutPrefix(line, "example-cloud: metadata API listening on "); ok {
				p.metadataURL = u
			}
		case <-deadline:
			t.Fatal("example-cloud did not print its addresses within 20s")
		}
	}
	go func() {
		for l := range lines {
			p.stdout <- l
		}
		close(p.stdout)
	}()
	return p
}

// waitExit waits for the process to end and returns its exit error.
func (p *proc) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("example-cloud did not exit within 20s")
		return nil
	}
}

func call(method, url, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// TestKill9KeepsAcknowledgedWrites kills the simulator with SIGKILL while
// writes are in flight: every write that was answered must survive.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	dataDir := t.TempDir()
	p := startBinary(t, dataDir, "--provision-delay", "0s")

	const workers, target = 4, 60
	var (
		mu        sync.Mutex
		instances = map[string]string{} // id -> name
		lbs       = map[string]string{}
		pools     = map[string]string{}
		wg        sync.WaitGroup
	)
	ctx, stop := context.WithCancel(context.Background())
	acked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(instances) + len(lbs) + len(pools)
	}
	reached := make(chan struct{}) // closed at the target-th acknowledged write
	ack := func(m map[string]string, id, name string) {
		mu.Lock()
		defer mu.Unlock()
		m[id] = name
		if len(instances)+len(lbs)+len(pools) == target {
			close(reached)
		}
	}
	// create POSTs req to path and records the acknowledged object's id in
	// m; false: the write failed (the process is gone).
	create := func(m map[string]string, path, name string, req any) bool {
		status, body, err := call("POST", p.url+path, testToken, req)
		if err != nil || status != http.StatusCreated {
			return false
		}
		var obj struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &obj); err != nil {
			t.Errorf("decoding %s: %v", body, err)
			return false
		}
		ack(m, obj.ID, name)
		return true
	}
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				var ok bool
				switch i % 3 {
				case 2:
					ok = create(pools, "/v1/target-pools", name,
						exampleapi.CreateTargetPoolRequest{Name: name, Region: "ex-east-1", Targets: []string{}})
				case 0:
					ok = create(instances, "/v1/instances", name,
						exampleapi.CreateInstanceRequest{Name: name, Type: "standard-1", Zone: "ex-west-1a"})
				default:
					ok = create(lbs, "/v1/load-balancers", name, exampleapi.LoadBalancerSpec{
						Name: name, Region: "ex-east-1",
						LoadBalancerSettings: exampleapi.LoadBalancerSettings{Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 80}}}})
				}
				if !ok {
					return
				}
			}
		})
	}
	select {
	case <-reached:
	case <-time.After(20 * time.Second):
	}
	// Kill while the workers are still writing.
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.waitExit(t)
	stop()
	wg.Wait()
	if acked() < target {
		t.Fatalf("only %d writes acknowledged before the deadline", acked())
	}

	p2 := startBinary(t, dataDir)
	for id, name := range instances {
		status, body, err := call("GET", p2.url+"/v1/instances/"+id, testToken, nil)
		if err != nil || status != http.StatusOK || !strings.Contains(string(body), name) {
			t.Errorf("acknowledged instance %s (%s) lost: %d %s %v", id, name, status, body, err)
		}
	}
	for id, name := range lbs {
		status, body, err := call("GET", p2.url+"/v1/load-balancers/"+id, testToken, nil)
		if err != nil || status != http.StatusOK || !strings.Contains(string(body), name) {
			t.Errorf("acknowledged load balancer %s (%s) lost: %d %s %v", id, name, status, body, err)
		}
	}
	for id, name := range pools {
		status, body, err := call("GET", p2.url+"/v1/target-pools/"+id, testToken, nil)
		if err != nil || status != http.StatusOK || !strings.Contains(string(body), name) {
			t.Errorf("acknowledged target pool %s (%s) lost: %d %s %v", id, name, status, body, err)
		}
	}
	t.Logf("%d instances, %d load balancers and %d target pools acknowledged before kill -9, all present after restart",
		len(instances), len(lbs), len(pools))
}

// TestSIGTERMShutsDownGracefully sends SIGTERM during a slow request: the
// request is answered, the process exits 0 and releases the database.
func TestSIGTERMShutsDownGracefully(t *testing.T) {
	dataDir := t.TempDir()
	p := startBinary(t, dataDir, "--latency", "300ms")
	done := make(chan error, 1)
	go func() {
		status, body, err := call("POST", p.url+"/v1/instances", testToken,
			exampleapi.CreateInstanceRequest{Name: "slow", Type: "standard-1", Zone: "ex-west-1a"})
		if err == nil && status != http.StatusCreated {
			err = fmt.Errorf("status %d: %s", status, body)
		}
		done <- err
	}()
	// The simulator counts an API request before its latency starts: once
	// the count shows it, the request is in flight.
	api, err := exampleapi.New(exampleapi.Options{Endpoint: p.url, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	// The count is only read over HTTP: poll.
	testkit.EventuallyEvery(t, 20*time.Second, 5*time.Millisecond, "the request reaching the simulator", func() error {
		st, err := api.FaultStats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.Requests == 0 {
			return errors.New("no request counted")
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("the request was over (%v) before SIGTERM: nothing was in flight", err)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("in-flight request during shutdown: %v", err)
	}
	if err := p.waitExit(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	var last string
	for l := range p.stdout {
		last = l
	}
	if last != "example-cloud: shut down" {
		t.Errorf("last output line %q", last)
	}
	// The database was closed cleanly and the write is there.
	p2 := startBinary(t, dataDir)
	status, body, err := call("GET", p2.url+"/v1/instances?name=slow", testToken, nil)
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), `"slow"`) {
		t.Errorf("after restart: %d %s %v", status, body, err)
	}
}

func TestSeedAndSelfInstanceFlags(t *testing.T) {
	p := startBinary(t, t.TempDir(), "--seed", filepath.Join("..", "..", "hack", "seed-demo.yaml"), "--self-instance", "demo-worker")
	status, body, err := call("GET", p.metadataURL+"/v1/self", "ro-token", nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("self: %d %s %v", status, body, err)
	}
	var md exampleapi.InstanceMetadata
	if err := json.Unmarshal(body, &md); err != nil || md.Name != "demo-worker" || md.Zone != "ex-west-1b" {
		t.Errorf("self %+v %v", md, err)
	}
	if status, _, _ := call("GET", p.url+"/healthz", "", nil); status != http.StatusOK {
		t.Errorf("healthz %d", status)
	}
	if status, _, _ := call("GET", p.url+"/v1/regions", "ro-token", nil); status != http.StatusForbidden {
		t.Errorf("read-only token on the control API: %d", status)
	}
}

func TestFlags(t *testing.T) {
	t.Setenv("EXAMPLE_TOKEN", "")
	t.Setenv("EXAMPLE_READONLY_TOKEN", "")
	var stderr bytes.Buffer
	if _, err := parseFlags(nil, &stderr); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Errorf("without a token: %v", err)
	}
	t.Setenv("EXAMPLE_TOKEN", "from-env")
	t.Setenv("EXAMPLE_READONLY_TOKEN", "ro-env")
	o, err := parseFlags([]string{"--rate-limit", "5", "--error-rate", "0.1"}, &stderr)
	if err != nil || o.token != "from-env" || o.readOnlyToken != "ro-env" || o.rateLimit != 5 || o.errorRate != 0.1 ||
		o.listen != "127.0.0.1:8440" || o.metadataListen != "127.0.0.1:8441" || o.provisionDelay != 2*time.Second {
		t.Errorf("options %+v, %v", o, err)
	}
	if o, _ := parseFlags([]string{"--token", "flag", "--readonly-token", "ro-flag"}, &stderr); o.token != "flag" || o.readOnlyToken != "ro-flag" {
		t.Errorf("--token and --readonly-token do not win over the environment: %q %q", o.token, o.readOnlyToken)
	}
	if _, err := parseFlags([]string{"extra"}, &stderr); err == nil {
		t.Error("stray argument accepted")
	}
	// Bad values are reported before anything listens.
	err = run(context.Background(), []string{"--data-dir", t.TempDir(), "--error-rate", "2"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "error_rate") {
		t.Errorf("error rate 2: %v", err)
	}
	err = run(context.Background(), []string{"--data-dir", t.TempDir(), "--seed", "/nonexistent.yaml"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("missing seed: %v", err)
	}
}

// TestUsageDoesNotPrintTokens: --help and usage errors print the flags'
// defaults; the tokens' come from the environment and must not be shown.
func TestUsageDoesNotPrintTokens(t *testing.T) {
	const token, readOnly = "s3cret-rw-token", "s3cret-ro-token"
	t.Setenv("EXAMPLE_TOKEN", token)
	t.Setenv("EXAMPLE_READONLY_TOKEN", readOnly)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--no-such-flag"}, {"--rate-limit", "fast"}, {"--token"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if err == nil || !strings.Contains(out, "-readonly-token") {
			t.Errorf("%q: want a usage error and the usage text, got %v:\n%s", args, err, out)
		}
		if strings.Contains(out, token) || strings.Contains(out, readOnly) {
			t.Errorf("%q printed a token from the environment:\n%s", args, out)
		}
	}

	// The real binary, as a user runs it.
	cmd := exec.Command(simtest.BuildBinary(t), "--help")
	cmd.Env = append(os.Environ(), "EXAMPLE_TOKEN="+token, "EXAMPLE_READONLY_TOKEN="+readOnly)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "$EXAMPLE_TOKEN") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	if strings.Contains(string(out), token) || strings.Contains(string(out), readOnly) {
		t.Fatalf("--help printed a token from the environment:\n%s", out)
	}
}

func TestBinaryRefusesToStartWithoutToken(t *testing.T) {
	cmd := exec.Command(simtest.BuildBinary(t), "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "EXAMPLE_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no API token") {
		t.Fatalf("started without a token: %v %s", err, out)
	}
}
