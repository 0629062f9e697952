package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/ccm"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/reviewapi"
)

// warned is a tenant's client that keeps the API server's warnings.
func (e *env) warned(t testing.TB, ns, name string) (kubernetes.Interface, *preview.Collector) {
	t.Helper()
	e.tenant(t, ns, name)
	cfg, err := clientcmd.BuildConfigFromFlags("", e.cluster.ServiceAccountKubeconfig(t, ns, name))
	testkit.Must(t, err)
	w := &preview.Collector{}
	cfg.WarningHandler = w
	kube, err := kubernetes.NewForConfig(cfg)
	testkit.Must(t, err)
	return kube, w
}

// installWebhooks installs the shipped webhook configurations (with the
// Gateway API front-end on, the chart's for it), reaching
// the controller by URL, and waits until the controller injected its CA
// and answers. timeout (seconds) replaces the shipped timeouts unless 0:
// tests give the preview their budget (8 s, on a loaded machine) plus
// margin; benchmarks keep the shipped ones.
func (e *env) installWebhooks(t testing.TB, timeout int32) {
	t.Helper()
	url := "https://127.0.0.1:" + e.webhookPort
	objs, err := deploy.WebhooksAt(url, timeout)
	if e.gatewayAPI {
		// The chart's, which add the Gateway API objects' preview.
		var all []runtime.Object
		all, err = deploy.ChartObjects(testkit.Context(t), os.Getenv("EXAMPLE_HELM"), map[string]any{"gatewayAPI": map[string]any{"enabled": true}})
		testkit.Must(t, err)
		objs, err = deploy.WebhooksIn(all, url, timeout)
	}
	testkit.Must(t, err)
	testkit.Must(t, deploy.Apply(testkit.Context(t), e.kube, objs))
	e.waitWebhooks(t)
}

// waitWebhooks waits until the controller serving the webhooks has
// injected its CA and stamps the author on a dry-run create (also after
// that replica restarted: the mutating webhook fails open, so a write
// before then would reach the admission policy unstamped).
func (e *env) waitWebhooks(t testing.TB) {
	t.Helper()
	probe := lbService("webhook-probe", 80)
	testkit.Eventually(t, 90*time.Second, "the webhooks answer", func() error {
		out, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if out.Annotations[reviewapi.AuthorAnnotation] == "" {
			return fmt.Errorf("no author stamped yet")
		}
		return nil
	})
}

// The preview: a server-side dry run shows what the edit would do to the
// cloud, and changes nothing; a real update's warnings list its
// listeners; the controller's refusal of an unknown annotation comes back
// as a warning; the author is stamped by the API server; the controller
// killed, edits still work.
func TestPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{webhook: true, shippedRules: true})
	e.nodeA()
	e.installWebhooks(t, 15)
	e.namespace(t, "team-a")
	kube, warned := e.warned(t, "team-a", "alice")
	alice := "system:serviceaccount:team-a:alice"
	services := kube.CoreV1().Services("team-a")

	svc := lbServiceIn("team-a", "web", 80)
	created, err := services.Create(testkit.Context(t), svc, metav1.CreateOptions{})
	testkit.Must(t, err)
	if got := created.Annotations[reviewapi.AuthorAnnotation]; got != alice {
		t.Errorf("author %q, want %q stamped by the API server", got, alice)
	}
	mustWarn(t, warned.Take(), "a new load balancer", "listener tcp/80 added")
	e.waitIngressIn("team-a", "web", 90*time.Second)
	lbs := e.lbsByUID(t)[string(created.UID)]
	if len(lbs) != 1 {
		t.Fatalf("%d load balancers", len(lbs))
	}
	statesBefore, recordBefore := e.stateFiles(t), e.recordVersion(t)

	t.Run("a dry run that turns the load balancer internal names the replacement and the rule", func(t *testing.T) {
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Annotations[string(annotations.LBInternal)] = "true"
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		testkit.Must(t, err)
		got := warned.Take()
		t.Logf("warnings:\n%s", strings.Join(got, "\n"))
		mustWarn(t, got, "cloud change (terraform plan)", "REPLACES module.load_balancer.example_load_balancer.this (because internal changes)",
			"rule load-balancer-replace holds this change for approval (1 needed)")
		lb, err := e.api.GetLoadBalancer(testkit.Context(t), lbs[0].ID)
		testkit.Must(t, err)
		if lb.Internal {
			t.Error("the dry run changed the load balancer")
		}
		if e.stateFiles(t) != statesBefore {
			t.Error("the dry run wrote a state")
		}
		if v := e.recordVersion(t); v != recordBefore {
			t.Errorf("the dry run changed the plan record (%s -> %s)", recordBefore, v)
		}
	})

	t.Run("an update's warnings list the listener added", func(t *testing.T) {
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Spec.Ports = append(cur.Spec.Ports, v1.ServicePort{Name: "p8080", Port: 8080, Protocol: v1.ProtocolTCP})
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		testkit.Must(t, err)
		got := warned.Take()
		t.Logf("warnings:\n%s", strings.Join(got, "\n"))
		mustWarn(t, got, "listener tcp/8080 added")
		testkit.Eventually(t, 60*time.Second, "the listener applied", func() error {
			lb, err := e.api.GetLoadBalancer(testkit.Context(t), lbs[0].ID)
			if err != nil {
				return err
			}
			if !slices.ContainsFunc(lb.Listeners, func(l exampleapi.Listener) bool { return l.Port == 8080 }) {
				return fmt.Errorf("listeners %+v", lb.Listeners)
			}
			return nil
		})
	})

	t.Run("an unknown annotation gets the controller's refusal", func(t *testing.T) {
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Annotations["loadbalancer.example.com/internl"] = "true"
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		testkit.Must(t, err)
		_, perr := annotations.Parse(cur.Annotations)
		if perr == nil {
			t.Fatal("the annotation parses")
		}
		mustWarn(t, warned.Take(), "the controller would refuse this Service: "+perr.Error())
	})

	t.Run("examplectl preview exits as terraform plan -detailed-exitcode", func(t *testing.T) {
		kubeconfig := e.cluster.ServiceAccountKubeconfig(t, "team-a", "alice")
		manifest := func(edit func(*v1.Service)) string {
			m := lbServiceIn("team-a", "web", 80, 8080)
			m.Spec.Ports[1].Name = "p8080"
			if edit != nil {
				edit(m)
			}
			data, err := yaml.Marshal(m)
			testkit.Must(t, err)
			path := filepath.Join(t.TempDir(), "service.yaml")
			testkit.Must(t, os.WriteFile(path, data, 0o600))
			return path
		}
		for _, tc := range []struct {
			name   string
			file   string
			extra  []string
			status int
			says   string
		}{
			{"no change", manifest(nil), nil, 0, "no cloud change"},
			{"a listener added", manifest(func(s *v1.Service) {
				s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "p9090", Port: 9090, Protocol: v1.ProtocolTCP})
			}), nil, 2, "listener tcp/9090 added"},
			{"a replacement held for approval", manifest(func(s *v1.Service) {
				s.Annotations = map[string]string{string(annotations.LBInternal): "true"}
			}), []string{"--hcl", "--config", filepath.Join(e.dir, "cloud-config.yaml")}, 3, "+  internal  = true"},
			{"refused", manifest(func(s *v1.Service) {
				s.Annotations = map[string]string{"loadbalancer.example.com/internl": "true"}
			}), nil, 1, "the controller would refuse this Service"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				args := append([]string{"preview", "-f", tc.file, "--kubeconfig", kubeconfig}, tc.extra...)
				cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), args...)
				out, err := cmd.CombinedOutput()
				status := 0
				var exit *exec.ExitError
				if errors.As(err, &exit) {
					status = exit.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if status != tc.status || !strings.Contains(string(out), tc.says) {
					t.Errorf("exit status %d, want %d, and output saying %q:\n%s", status, tc.status, tc.says, out)
				}
			})
		}
	})

	t.Run("a replica that does not lead serves the webhooks too", func(t *testing.T) {
		// Its own webhook port; everything else as the leader's.
		port := freePort(t)
		cfgPath := filepath.Join(e.dir, "cloud-config.yaml")
		data, err := os.ReadFile(cfgPath)
		testkit.Must(t, err)
		replicaCfg := filepath.Join(t.TempDir(), "cloud-config.yaml")
		testkit.Must(t, os.WriteFile(replicaCfg, []byte(strings.ReplaceAll(string(data), "127.0.0.1:"+e.webhookPort, "127.0.0.1:"+port)), 0o600))
		// No secure port: it is not read, and one taken by a parallel
		// test between freePort's look and the bind would stop the replica.
		args := []string{"--secure-port=0"}
		for _, a := range e.args {
			if strings.HasPrefix(a, "--cloud-config=") {
				a = "--cloud-config=" + replicaCfg
			}
			args = append(args, a)
		}
		replica, replicaLog := e.startReplica(args)
		defer e.killCCM(replica)
		// The CA the replicas share, from the Secret they keep it in.
		var bundle []byte
		testkit.Eventually(t, 30*time.Second, "the webhook CA", func() error {
			sec, err := e.kube.CoreV1().Secrets(namespace).Get(testkit.Context(t), "example-ccm-webhook-tls", metav1.GetOptions{})
			if err != nil {
				return err
			}
			bundle = sec.Data["ca.crt"]
			return nil
		})
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(bundle)
		client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		svc := lbService("replica", 80)
		svc.Spec.Ports[0].NodePort = 30999
		raw, err := json.Marshal(svc)
		testkit.Must(t, err)
		body, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "replica-1", Operation: admissionv1.Create, Namespace: "default", Name: "replica",
				Object: runtime.RawExtension{Raw: raw}, DryRun: ptr.To(true)},
		})
		testkit.Must(t, err)
		var review admissionv1.AdmissionReview
		testkit.Eventually(t, 60*time.Second, "the replica answers", func() error {
			resp, err := client.Post("https://127.0.0.1:"+port+ccm.PreviewPath, "application/json", bytes.NewReader(body))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return json.NewDecoder(resp.Body).Decode(&review)
		})
		if review.Response == nil || !review.Response.Allowed || !slices.ContainsFunc(review.Response.Warnings, func(w string) bool {
			return strings.HasPrefix(w, preview.OutcomeLine)
		}) {
			t.Fatalf("the replica's answer: %+v", review.Response)
		}
		const leads = "Successfully acquired lease"
		if countIn(t, e.ccmLog, leads) == 0 || countIn(t, replicaLog, leads) != 0 {
			t.Fatalf("the leader's log should say %q and the replica's not", leads)
		}
	})

	t.Run("the controller killed, edits still work", func(t *testing.T) {
		e.killCCM(e.ccm)
		defer func() { e.startCCM(); e.waitLeader() }()
		cur, err := services.Get(testkit.Context(t), "web", metav1.GetOptions{})
		testkit.Must(t, err)
		cur.Labels = map[string]string{"edited": "while-down"}
		start := time.Now()
		_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{})
		testkit.Must(t, err)
		t.Logf("an update with the webhook down took %s", time.Since(start).Round(time.Millisecond))
	})
}

// mustWarn fails unless every want is in one of got.
func mustWarn(t testing.TB, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no warning says %q; warnings:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// stateFiles is every local state file, joined: what a preview must not
// change.
func (e *env) stateFiles(t testing.TB) string {
	t.Helper()
	var all strings.Builder
	err := filepath.WalkDir(e.stateDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all.WriteString(path + "\n" + string(data))
		return err
	})
	testkit.Must(t, err)
	return all.String()
}

// recordVersion are the plan records' resourceVersions: what a preview
// must not change (nothing else changes meanwhile).
func (e *env) recordVersion(t testing.TB) string {
	t.Helper()
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	var out []string
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, "ccm-plans-") {
			out = append(out, cm.Name+"@"+cm.ResourceVersion)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// countIn counts the lines of file holding s.
func countIn(t testing.TB, file, s string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	testkit.Must(t, err)
	return strings.Count(string(data), s)
}
