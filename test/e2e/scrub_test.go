package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/redact"
)

// A PostgreSQL password with quotes, a backslash, '%', '@', ':', '/', a
// space and non-ASCII works end to end, and once the connection string
// breaks (the password pasted unescaped into the URL, which terraform's
// error then quotes back Go-escaped), no form of it reaches an Event in
// any namespace, the audit log, the CCM's log, a plan record or any other
// ConfigMap or Secret of the controller's namespace.
func TestScrubHostilePGPassword(t *testing.T) {
	t.Parallel()
	pw := `Hu"n\t3r %41@:/ ü'密`
	pg := testpg.Start(t, testpg.WithPassword(pw))
	connFile := filepath.Join(t.TempDir(), "pg-conn")
	testkit.Must(t, os.WriteFile(connFile, []byte(pg.ConnStr), 0o600))
	e := newEnv(t, options{state: "pg", pgConnStrFile: connFile})
	e.nodeA()
	svc, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("scrub", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitIngress("scrub", 90*time.Second)

	// The platform team pastes the password into the URL unescaped; the
	// Secret file is re-read by the next run.
	broken := "postgres://ccm:" + pw + "@" + pg.Host + ":" + strconv.Itoa(pg.Port) + "/postgres?sslmode=disable"
	testkit.Must(t, os.WriteFile(connFile, []byte(broken), 0o600))
	svc, err = e.kube.CoreV1().Services("default").Get(testkit.Context(t), svc.Name, metav1.GetOptions{})
	testkit.Must(t, err)
	svc.Spec.Ports[0].Port = 81
	_, err = e.kube.CoreV1().Services("default").Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
	var failure string
	testkit.Eventually(t, 90*time.Second, "a failure event for the broken connection string", func() error {
		for _, ev := range e.events("scrub", "SyncLoadBalancerFailed") {
			if strings.Contains(ev.Message, "net/url") {
				failure = ev.Message
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	t.Logf("failure event: %s", failure)

	forms := map[string]string{}
	for _, f := range redact.Forms(pw) {
		forms[fmt.Sprintf("%q, a form of the password", f)] = f
	}
	leaks := newLeakScan(t, forms)
	e.scanControllerOutputs(t, leaks.scan)
	if !strings.Contains(e.record(t, "scrub"), "scrub") {
		t.Fatal("the scan saw no record")
	}
	leaks.atLeast(6)
}
