package e2e

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tftest"
)

var planIDRE = regexp.MustCompile(`plan-[0-9a-f]{12}`)

// events returns the events of Service default/name with reason.
func (e *env) events(name, reason string) []v1.Event { return e.eventsIn("default", name, reason) }

// eventsIn returns the events of object ns/name with reason.
func (e *env) eventsIn(ns, name, reason string) []v1.Event {
	l, err := e.kube.CoreV1().Events(ns).List(testkit.Context(e.t), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []v1.Event
	for _, ev := range l.Items {
		if ev.InvolvedObject.Name == name && ev.Reason == reason {
			out = append(out, ev)
		}
	}
	return out
}

// awaitingPlan waits for an AwaitingApproval event of Service
// default/name naming a plan other than the ones in seen, and returns its id.
func (e *env) awaitingPlan(name string, seen ...string) string {
	return e.awaitingPlanIn("default", name, seen...)
}

// awaitingPlanIn is awaitingPlan for Service ns/name.
func (e *env) awaitingPlanIn(ns, name string, seen ...string) string {
	var id string
	testkit.Eventually(e.t, 60*time.Second, "AwaitingApproval for "+ns+"/"+name, func() error {
		evs := e.eventsIn(ns, name, "AwaitingApproval")
		// Newest first: a plan may be superseded right after it was made.
		sort.Slice(evs, func(i, j int) bool { return evs[i].CreationTimestamp.After(evs[j].CreationTimestamp.Time) })
		for _, ev := range evs {
			got := planIDRE.FindString(ev.Message)
			if got != "" && !contains(seen, got) {
				id = got
				return nil
			}
		}
		return fmt.Errorf("no new AwaitingApproval event")
	})
	return id
}

// awaitedIn is every plan of ns/name that an AwaitingApproval event has
// named so far: awaitingPlanIn(ns, name, awaitedIn(ns, name)...) then
// waits for a plan the next change causes.
func (e *env) awaitedIn(ns, name string) []string {
	var ids []string
	for _, ev := range e.eventsIn(ns, name, "AwaitingApproval") {
		if id := planIDRE.FindString(ev.Message); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (e *env) annotate(name, key, value string) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	_, err := e.kube.CoreV1().Services("default").Patch(testkit.Context(e.t), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	testkit.Must(e.t, err)
}

func (e *env) lbCount() int {
	l, err := e.api.ListLoadBalancers(testkit.Context(e.t), exampleapi.LoadBalancerFilter{})
	testkit.Must(e.t, err)
	return len(l)
}

// waitLBCount waits until the cloud holds n load balancers (what: the
// step it waits for, for the failure).
func (e *env) waitLBCount(t testing.TB, n int, what string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, what, func() error {
		if got := e.lbCount(); got != n {
			return fmt.Errorf("%d LBs", got)
		}
		return nil
	})
}

// The manual policy: nothing changes in the cloud before approval; a
// wrong id does nothing; the right id applies exactly that plan; a later
// change needs a new approval; deletion waits for approval of its destroy.
// On both distributions (terraform and tofu).
func TestManualApproval(t *testing.T) {
	testsize.SkipShort(t, "a plan approved, changed and destroyed on both distributions (two controllers)")
	t.Parallel()
	tftest.OnDistributions(t, testManualApproval)
}

func testManualApproval(t *testing.T, tc tftest.Toolchain) {
	e := newEnv(t, options{policy: "manual", tc: tc})
	e.addNode("node-a", "ex-west-1a")
	e.waitNodesInitialised(1) // so the desired state holds still while we approve
	alice := e.reviewer(t, "alice")
	services := e.kube.CoreV1().Services("default")
	svc, err := services.Create(testkit.Context(t), lbService("gated", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	id := e.awaitingPlan("gated")
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if n := e.lbCount(); n != 0 {
			return fmt.Errorf("%d LBs before approval", n)
		}
		return nil
	})
	testkit.Eventually(t, 30*time.Second, "awaiting plan in the record", func() error {
		if rec, _ := e.findRecord(t, "gated"); !strings.Contains(rec, id) || !strings.Contains(rec, "awaiting-approval") {
			return fmt.Errorf("record lacks the awaiting plan:\n%s", rec)
		}
		return nil
	})

	testkit.Must(t, e.approveAs(t, alice, svc, "plan-000000000000", alice.name))
	testkit.Eventually(t, 30*time.Second, "ApprovalIgnored", func() error {
		if len(e.events("gated", "ApprovalIgnored")) == 0 {
			return fmt.Errorf("no ApprovalIgnored event")
		}
		return nil
	})
	if n := e.lbCount(); n != 0 {
		t.Fatalf("a wrong id created %d LBs", n)
	}

	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngress("gated", 60*time.Second)
	testkit.Eventually(t, 30*time.Second, "Applied "+id, func() error {
		for _, ev := range e.events("gated", "Applied") {
			if strings.Contains(ev.Message, id) {
				return nil
			}
		}
		return fmt.Errorf("no Applied event for %s", id)
	})

	// A change after approval is a new plan that waits again.
	svc, err = services.Get(testkit.Context(t), "gated", metav1.GetOptions{})
	testkit.Must(t, err)
	svc.Spec.Ports[0].Port = 8080
	_, err = services.Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
	id2 := e.awaitingPlan("gated", id)
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		l, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
		if err != nil || len(l) != 1 || l[0].Listeners[0].Port != 80 {
			return fmt.Errorf("unapproved change applied: %+v %v", l, err)
		}
		return nil
	})

	// Deleting waits for approval of the destroy plan.
	testkit.Must(t, services.Delete(testkit.Context(t), "gated", metav1.DeleteOptions{}))
	did := e.awaitingPlan("gated", id, id2)
	e.unchangedAfterALook(t, e.serviceSyncs(t), func() error {
		if _, err := services.Get(testkit.Context(t), "gated", metav1.GetOptions{}); err != nil || e.lbCount() != 1 {
			return fmt.Errorf("deletion did not wait: %v, %d LBs", err, e.lbCount())
		}
		return nil
	})
	testkit.Must(t, e.approveAs(t, alice, svc, did, alice.name))
	waitGone(t, 60*time.Second, "gated", services.Get)
	if e.lbCount() != 0 {
		t.Fatal("LB survived the approved destroy")
	}
	testkit.Eventually(t, 10*time.Second, "record removed", func() error {
		if r := e.recordObjects(t, "gated"); len(r) != 0 {
			return fmt.Errorf("record objects left: %v", r)
		}
		return nil
	})
	e.checkAudit(t, "plan", "approve", "apply", "destroy")
}

// Drift made through the cloud's API is detected, recorded and (auto)
// corrected.
func TestDriftDetectedAndCorrected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{driftInterval: "2s"})
	e.addNode("node-a", "ex-west-1a")
	e.waitNodesInitialised(1) // no target update may race the out-of-band change
	_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("drifty", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	svc := e.waitIngress("drifty", 60*time.Second)
	lb, err := e.cloudLB(svc.Status.LoadBalancer.Ingress[0].IP)
	testkit.Must(t, err)
	_, err = e.api.UpdateLoadBalancer(testkit.Context(t), lb.ID, exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: lb.Algorithm, Listeners: lb.Listeners, Targets: lb.Targets, TargetPoolID: lb.TargetPoolID, Tags: lb.Tags, HealthCheck: lb.HealthCheck,
	}, 0)
	testkit.Must(t, err)
	testkit.Eventually(t, 60*time.Second, "DriftDetected", func() error {
		if len(e.events("drifty", "DriftDetected")) == 0 {
			return fmt.Errorf("no DriftDetected event")
		}
		return nil
	})
	testkit.Eventually(t, 60*time.Second, "drift corrected", func() error {
		got, err := e.api.GetLoadBalancer(testkit.Context(t), lb.ID)
		if err != nil {
			return err
		}
		if got.Type != "lb-small" {
			return fmt.Errorf("type still %s", got.Type)
		}
		return nil
	})
	testkit.Eventually(t, 30*time.Second, "drift in the record", func() error {
		if rec, _ := e.findRecord(t, "drifty"); !strings.Contains(rec, `"lastDetectedAt"`) {
			return fmt.Errorf("record lacks the drift:\n%s", rec)
		}
		return nil
	})
	e.checkAudit(t, "drift")
	metrics := e.metrics(t)
	for _, m := range []string{"example_ccm_drift_detected_total", `example_ccm_terraform_runs_total{operation="apply",result="success"}`, "example_ccm_workspaces{phase=\"applied\"}"} {
		if !regexp.MustCompile(regexp.QuoteMeta(m) + ` [1-9]`).MatchString(metrics) {
			t.Errorf("metric %s missing or zero in /metrics", m)
		}
	}
}

// metrics scrapes the CCM's /metrics as the admin (delegated authz).
func (e *env) metrics(t testing.TB) string {
	page, err := e.scrape(t)
	testkit.Must(t, err)
	return page
}

// scrape is metrics that returns its error (a CCM still starting).
func (e *env) scrape(t testing.TB) (string, error) { return e.adminGet(t, "/metrics") }

// adminClient talks to the CCM's secure port (its self-signed serving
// cert). One client for the whole test process: a client per request
// would leave a connection open in the controller each time, which the
// soak counts as the controller's own open files and goroutines.
var adminClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// adminGet reads a path of the CCM's secure port as the cluster admin.
func (e *env) adminGet(t testing.TB, path string) (string, error) {
	return e.adminGetAt(t, e.securePort, path)
}

// adminGetAt is adminGet of the secure port port (a replica's).
func (e *env) adminGetAt(t testing.TB, port, path string) (string, error) {
	req, err := http.NewRequestWithContext(testkit.Context(t), http.MethodGet, "https://127.0.0.1:"+port+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+e.cluster.Admin.BearerToken)
	resp, err := adminClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s %s", path, resp.Status, body)
	}
	return string(body), nil
}

// The API token and the backend's credentials appear in no ConfigMap,
// Secret other than the state, Event, log line, record, audit entry or
// rendered file.
func TestNoSecretLeaks(t *testing.T) {
	t.Parallel()
	pg := testpg.Start(t)
	connFile := filepath.Join(t.TempDir(), "pg-conn")
	testkit.Must(t, os.WriteFile(connFile, []byte(pg.ConnStr), 0o600))
	e := newEnv(t, options{state: "pg", pgConnStrFile: connFile, policy: "manual"})
	e.nodeA()
	svc, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("secret-scan", 80, 443), metav1.CreateOptions{})
	testkit.Must(t, err)
	id := e.awaitingPlan("secret-scan")
	alice := e.reviewer(t, "alice")
	testkit.Must(t, e.approveAs(t, alice, svc, id, alice.name))
	e.waitIngress("secret-scan", 60*time.Second)

	leaks := newLeakScan(t, map[string]string{"the API token": e.sim.Token, "the read-only token": e.sim.ReadOnlyToken, "the PostgreSQL password": pg.Password})
	cms, err := e.kube.CoreV1().ConfigMaps("").List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, cm := range cms.Items {
		b, _ := json.Marshal(cm)
		leaks.scan("ConfigMap "+cm.Namespace+"/"+cm.Name, string(b)+decodeGzipValues(cm.BinaryData))
	}
	ss, err := e.kube.CoreV1().Secrets(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, s := range ss.Items {
		if strings.HasPrefix(s.Name, "ccm-plans-") {
			b, _ := json.Marshal(s)
			leaks.scan("record Secret "+s.Name, string(b)+decodeGzipValues(s.Data))
		}
	}
	evs, err := e.kube.CoreV1().Events("").List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, ev := range evs.Items {
		leaks.scan("Event "+ev.Name, ev.Message)
	}
	for _, f := range []string{e.ccmLog, e.auditLog} {
		data, err := os.ReadFile(f)
		testkit.Must(t, err)
		leaks.scan(filepath.Base(f), string(data))
	}
	testkit.Must(t, filepath.Walk(e.workDir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && !strings.Contains(p, "/.terraform/providers/") {
			data, _ := os.ReadFile(p)
			leaks.scan(strings.TrimPrefix(p, e.workDir), string(data))
		}
		return nil
	}))
	leaks.atLeast(10)
	if !strings.Contains(e.record(t, "secret-scan"), id) {
		t.Fatal("the scan saw no record")
	}
}
