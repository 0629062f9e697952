package testhttpbackend_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
)

func do(t *testing.T, method, url, body string, auth ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(auth) == 2 {
		req.SetBasicAuth(auth[0], auth[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProtocol checks the status codes terraform's http client relies on.
func TestProtocol(t *testing.T) {
	t.Parallel()
	s := testhttpbackend.Start(t)
	a := s.Address("env/a")
	lock := func(id string) string {
		b, _ := json.Marshal(testhttpbackend.LockInfo{ID: id, Who: "me@host", Operation: "OperationTypeApply"})
		return string(b)
	}
	steps := []struct {
		method, url, body string
		code              int
		bodyHas           string
	}{
		{"GET", a, "", 404, ""},
		{"POST", a, `{"serial":1}`, 200, ""},
		{"GET", a, "", 200, `{"serial":1}`},
		{"LOCK", a, lock("L1"), 200, ""},
		{"LOCK", a, lock("L2"), 423, `"ID":"L1"`},
		{"POST", a, `{"serial":2}`, 423, `"Who":"me@host"`},
		{"POST", a + "?ID=L2", `{"serial":2}`, 423, ""},
		{"POST", a + "?ID=L1", `{"serial":2}`, 200, ""},
		{"POST", a + "?ID=L1", `not json`, 400, ""},
		{"UNLOCK", a, lock("L2"), 409, `"ID":"L1"`},
		{"UNLOCK", a, lock("L1"), 200, ""},
		{"UNLOCK", a, "", 200, ""}, // not locked: still fine
		{"LOCK", a, lock("L3"), 200, ""},
		{"UNLOCK", a, "", 200, ""}, // force-unlock
		{"GET", s.Address("env/b"), "", 404, ""},
		{"DELETE", a, "", 200, ""},
		{"GET", a, "", 404, ""},
		{"PUT", a, "{}", 405, ""},
	}
	for i, st := range steps {
		code, body := do(t, st.method, st.url, st.body)
		if code != st.code || !strings.Contains(body, st.bodyHas) {
			t.Fatalf("step %d %s %s: got %d %q, want %d containing %q", i, st.method, st.url, code, body, st.code, st.bodyHas)
		}
	}
	if got := len(s.Requests()); got != len(steps) {
		t.Errorf("Requests(): %d entries, want %d", got, len(steps))
	}
	if r := s.Requests()[6]; r != "POST /env/a" {
		t.Errorf("request 6 = %q, want method and path only", r)
	}

	s.InjectLock("/env/c", testhttpbackend.LockInfo{ID: "X"})
	if _, ok := s.Locks()["env/c"]; !ok {
		t.Errorf("InjectLock: Locks() = %v", s.Locks())
	}
}

func TestBasicAuth(t *testing.T) {
	t.Parallel()
	s := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("tf", "s3cret"))
	if code, _ := do(t, "GET", s.Address("x"), ""); code != 401 {
		t.Errorf("no credentials: %d, want 401", code)
	}
	if code, _ := do(t, "GET", s.Address("x"), "", "tf", "wrong"); code != 401 {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, _ := do(t, "POST", s.Address("x"), "{}", "tf", "s3cret"); code != 200 {
		t.Errorf("good credentials: %d, want 200", code)
	}
	if len(s.States()) != 1 {
		t.Errorf("States() = %v", s.States())
	}
}

// terraform returns a function running the terraform CLI in a fresh
// working directory whose root module uses the http backend at address,
// with credentials (if any) in the environment.
func terraform(t *testing.T, address string, extraEnv ...string) func(args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		need.Missing(t, "terraform is not on PATH: "+err.Error())
	}
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, "empty.tfrc") // $TF_CLI_CONFIG_FILE may point at a missing file
	const config = `
terraform {
  backend "http" {}
}

resource "terraform_data" "x" {
  input = "v1"
}
`
	for name, content := range map[string]string{cliConfig: "", filepath.Join(dir, "main.tf"): config} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"TF_HTTP_ADDRESS=" + address,
		"TF_HTTP_LOCK_ADDRESS=" + address,
		"TF_HTTP_UNLOCK_ADDRESS=" + address,
		"TF_HTTP_RETRY_WAIT_MIN=0",
	}, extraEnv...)
	return func(args ...string) (string, error) {
		t.Helper()
		began := time.Now()
		cmd := exec.Command(bin, append(args, "-no-color")...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		t.Logf("terraform %s: %s", strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
		if err != nil {
			err = fmt.Errorf("terraform: %w\n%s", err, out)
		}
		return string(out), err
	}
}

// succeeds is testkit.MustValue taking terraform's two results at once.
func succeeds(t *testing.T) func(string, error) string {
	return func(out string, err error) string { t.Helper(); return testkit.MustValue(t, out, err) }
}

// TestTerraformLifecycle: init, apply, apply again, destroy against a
// server with basic auth; wrong credentials are rejected.
func TestTerraformLifecycle(t *testing.T) {
	t.Parallel()
	s := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("tf", "s3cret-pw"))
	tf := terraform(t, s.Address("states/app"), "TF_HTTP_USERNAME=tf", "TF_HTTP_PASSWORD=s3cret-pw")
	ok := succeeds(t)

	ok(tf("init", "-input=false"))
	ok(tf("apply", "-auto-approve", "-input=false"))
	st := string(s.States()["states/app"])
	if !strings.Contains(st, `"terraform_data"`) {
		t.Fatalf("state after apply lacks the resource:\n%s", st)
	}
	if out := ok(tf("apply", "-auto-approve", "-input=false")); !strings.Contains(out, "No changes") {
		t.Errorf("second apply not a no-op:\n%s", out)
	}
	ok(tf("destroy", "-auto-approve", "-input=false"))
	if st := string(s.States()["states/app"]); strings.Contains(st, `"terraform_data"`) {
		t.Errorf("state after destroy still has the resource:\n%s", st)
	}
	if len(s.Locks()) != 0 {
		t.Errorf("locks left behind: %v", s.Locks())
	}
	reqs := s.Requests()
	for _, want := range []string{"GET /states/app", "LOCK /states/app", "POST /states/app", "UNLOCK /states/app"} {
		if !slices.Contains(reqs, want) {
			t.Errorf("no %q in requests %v", want, reqs)
		}
	}

	bad := terraform(t, s.Address("states/app"), "TF_HTTP_USERNAME=tf", "TF_HTTP_PASSWORD=wrong")
	out, err := bad("init", "-input=false")
	if err == nil {
		out, err = bad("plan", "-input=false")
	}
	if err == nil || !strings.Contains(out, "requires auth") {
		t.Errorf("wrong password: want an auth error, got %v:\n%s", err, out)
	}
}

// TestTerraformStaleLock: a lock left by a crashed run makes apply fail with
// terraform's lock error and Lock Info; force-unlock clears it (terraform
// sends an UNLOCK with an empty body).
func TestTerraformStaleLock(t *testing.T) {
	t.Parallel()
	s := testhttpbackend.Start(t)
	tf := terraform(t, s.Address("stale"))
	ok := succeeds(t)
	ok(tf("init", "-input=false"))

	stale := testhttpbackend.LockInfo{
		ID:        "2d3c1b6e-0000-4000-8000-deadbeef0001",
		Operation: "OperationTypeApply",
		Who:       "crashed@ci-runner-7",
		Version:   "1.11.4",
		Created:   time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
	}
	s.InjectLock("stale", stale)
	out, err := tf("apply", "-auto-approve", "-input=false")
	if err == nil {
		t.Fatalf("apply succeeded despite the lock:\n%s", out)
	}
	// terraform 1.11's http client names the holder only by ID (in the error
	// message); its "Lock Info" block shows the lock it tried to take.
	for _, want := range []string{"Error acquiring the state lock", "already locked", "ID=" + stale.ID, "Lock Info:", "Operation: OperationTypeApply"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	if _, ok := s.States()["stale"]; ok {
		t.Error("state written while locked")
	}

	ok(tf("force-unlock", "-force", stale.ID))
	if len(s.Locks()) != 0 {
		t.Fatalf("force-unlock left %v", s.Locks())
	}
	ok(tf("apply", "-auto-approve", "-input=false"))
	if !strings.Contains(string(s.States()["stale"]), `"terraform_data"`) {
		t.Error("no state after apply following force-unlock")
	}
}
