package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// bindTaken is how a CCM's log says a port it listens on was taken: the
// secure port's words (k8s.io/apiserver) and the webhook server's both
// end in net's.
var bindTaken = regexp.MustCompile(`listen tcp [^ ]*:(\d+): bind: address already in use`)

// takenPort is the port log says was taken, "" when it says none.
func takenPort(log []byte) string {
	if m := bindTaken.FindSubmatch(log); m != nil {
		return string(m[1])
	}
	return ""
}

// movePort gives the port taken, which a CCM started with args has in its
// cloud config (the webhook's), a free one instead, there and in e; false
// when the config does not have it.
func (e *env) movePort(args []string, taken string) bool {
	for _, a := range args {
		path, ok := strings.CutPrefix(a, "--cloud-config=")
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		testkit.Must(e.t, err)
		old := "127.0.0.1:" + taken
		if !strings.Contains(string(data), old) {
			return false
		}
		port := freePort(e.t)
		testkit.Must(e.t, os.WriteFile(path, []byte(strings.ReplaceAll(string(data), old, "127.0.0.1:"+port)), 0o600))
		if e.webhookPort == taken {
			e.webhookPort = port
		}
		e.t.Logf("port %s of the cloud config was taken before the CCM bound it: %s instead", taken, port)
		return true
	}
	return false
}

// The port a CCM could not bind is read from its log, whichever listener
// it was; a taken webhook port moves to a free one in the cloud config.
// No processes: the retry itself runs only when a parallel test takes a
// port, which no test can make happen on time.
func TestTakenPorts(t *testing.T) {
	for log, want := range map[string]string{
		`E1205 run.go:72] "command failed" err="failed to create listener: failed to listen on 127.0.0.1:40123: listen tcp 127.0.0.1:40123: bind: address already in use"`: "40123",
		`F1205 main.go:90] webhook server: listen on 127.0.0.1:40999: listen tcp 127.0.0.1:40999: bind: address already in use`:                                            "40999",
		`I1205 secure_serving.go:213] Serving securely on 127.0.0.1:40123`:                                                                                                 "",
	} {
		if got := takenPort([]byte(log)); got != want {
			t.Errorf("takenPort(%q) = %q, want %q", log, got, want)
		}
	}

	dir := t.TempDir()
	cfg := dir + "/cloud-config.yaml"
	testkit.Must(t, os.WriteFile(cfg, []byte("webhook:\n  address: 127.0.0.1:40999\n"), 0o600))
	e := &env{t: t, webhookPort: "40999"}
	args := []string{"--v=2", "--cloud-config=" + cfg}
	if e.movePort(args, "40123") {
		t.Error("moved a port the cloud config does not have")
	}
	if !e.movePort(args, "40999") || e.webhookPort == "40999" {
		t.Fatalf("the taken webhook port was not moved (now %s)", e.webhookPort)
	}
	if data, _ := os.ReadFile(cfg); string(data) != "webhook:\n  address: 127.0.0.1:"+e.webhookPort+"\n" {
		t.Errorf("cloud config after the move:\n%s", data)
	}
}
