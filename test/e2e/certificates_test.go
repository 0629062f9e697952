package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/servicelb"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func tlsSecretObject(ns, name string, c simtest.Cert) *v1.Secret {
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       v1.SecretTypeTLS,
		Data:       map[string][]byte{v1.TLSCertKey: []byte(c.CertPEM), v1.TLSPrivateKeyKey: []byte(c.KeyPEM)},
	}
}

// httpsLBService serves http on 80 (redirecting) and https on 443 with the
// certificate of TLS Secret secret.
func httpsLBService(ns, name, secret string) *v1.Service {
	svc := lbServiceIn(ns, name, 80, 443)
	svc.Annotations = map[string]string{
		string(annotations.LBHTTPPorts):           "80",
		string(annotations.LBHTTPSPorts):          "443",
		string(annotations.LBTLSSecrets):          secret,
		string(annotations.LBRedirectHTTPToHTTPS): "true",
		string(annotations.LBStickySessions):      "true",
	}
	return svc
}

// allowTLSSecrets binds the controller's TLS Secrets role in ns, as a
// platform team opting the namespace in (the chart's tlsSecrets.namespaces).
func (e *env) allowTLSSecrets(t testing.TB, ns string) {
	t.Helper()
	_, err := e.kube.RbacV1().RoleBindings(ns).Create(testkit.Context(t), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: servicelb.TLSSecretsRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: servicelb.TLSSecretsRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: ccmSA}},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// servedCertificate waits until the load balancer with IPv4 ip serves
// certificate c on its https listener (its http listener redirecting there)
// and returns the certificate's id.
func (e *env) servedCertificate(t testing.TB, ip string, c simtest.Cert) (lbID, certID string) {
	t.Helper()
	testkit.Eventually(t, 90*time.Second, "load balancer "+ip+" serves "+c.Fingerprint[:12], func() error {
		lb, err := e.cloudLB(ip)
		if err != nil {
			return err
		}
		lbID, certID = lb.ID, ""
		for _, l := range lb.Listeners {
			switch {
			case l.Protocol == "https" && len(l.CertificateIDs) == 1 && l.StickySessions != nil:
				certID = l.CertificateIDs[0]
			case l.Protocol == "http" && l.RedirectToHTTPSPort != 443:
				return fmt.Errorf("http listener does not redirect to 443: %+v", l)
			}
		}
		if certID == "" {
			return fmt.Errorf("no https listener with one certificate and sticky sessions: %+v", lb.Listeners)
		}
		cert, err := e.api.GetCertificate(testkit.Context(t), certID)
		if err != nil {
			return err
		}
		if cert.Fingerprint != c.Fingerprint {
			return fmt.Errorf("serves %s (%s)", certID, cert.NotAfter)
		}
		return nil
	})
	return lbID, certID
}

// HTTPS from a Kubernetes TLS Secret, end to end with the chart's RBAC:
// the Secret's certificate is uploaded and served; a renewed Secret is
// uploaded and the load balancer moved to it in place (same id, the old
// certificate deleted); a missing, deleted or unreadable Secret is an
// event naming it, and the load balancer keeps serving. The private keys
// are found nowhere: not in main.tf or any file of the controller's work
// directory, a plan record or saved plan, a state, an event, the audit log
// or the controller's log.
func TestHTTPSFromTLSSecret(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{state: "kubernetes", tlsResync: "1s"})
	e.nodeA()
	e.allowTLSSecrets(t, "default")
	c1 := simtest.NewCert(t, simtest.CertOptions{CommonName: "web.example.test", RSABits: 2048})
	c2 := simtest.NewCert(t, simtest.CertOptions{CommonName: "web.example.test"})
	secrets := e.kube.CoreV1().Secrets("default")
	_, err := secrets.Create(testkit.Context(t), tlsSecretObject("default", "web-tls", c1), metav1.CreateOptions{})
	testkit.Must(t, err)

	_, err = e.kube.CoreV1().Services("default").Create(testkit.Context(t), httpsLBService("default", "web", "web-tls"), metav1.CreateOptions{})
	testkit.Must(t, err)
	in := e.waitIngress("web", 90*time.Second).Status.LoadBalancer.Ingress[0]
	ip := in.IP
	// The https listener terminates TLS: kube-proxy must send in-cluster
	// clients through the load balancer, not short-cut to the pods.
	if in.IPMode == nil || *in.IPMode != v1.LoadBalancerIPModeProxy {
		t.Errorf("ingress ipMode %v, want Proxy for a Service with an https listener", in.IPMode)
	}
	lbID, cert1 := e.servedCertificate(t, ip, c1)

	// Renewal: the Secret gets a new certificate and key.
	renewTLSSecret(t, e.kube, "default", "web-tls", c2)
	lbID2, cert2 := e.servedCertificate(t, ip, c2)
	if lbID2 != lbID || cert2 == cert1 {
		t.Fatalf("rotation: load balancer %s → %s, certificate %s → %s; want the same load balancer, a new certificate", lbID, lbID2, cert1, cert2)
	}
	// examplectl renders what the controller applied, given the Secret's
	// certificate (never its key).
	crt := filepath.Join(t.TempDir(), "tls.crt")
	testkit.Must(t, os.WriteFile(crt, []byte(c2.CertPEM), 0o600))
	e.checkRenders("default", "web", "--tls-certificate", "web-tls="+crt)
	testkit.Eventually(t, 30*time.Second, "the old certificate deleted", func() error {
		if _, err := e.api.GetCertificate(testkit.Context(t), cert1); !exampleapi.IsNotFound(err) {
			return fmt.Errorf("certificate %s: %v", cert1, err)
		}
		return nil
	})

	// A Service naming a Secret that does not exist: an event, nothing
	// created.
	_, err = e.kube.CoreV1().Services("default").Create(testkit.Context(t), httpsLBService("default", "api", "api-tls"), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.eventWith(t, "default", "api", "CertificateSecretInvalid", "TLS Secret default/api-tls (annotation "+string(annotations.LBTLSSecrets)+") does not exist")

	// A tenant of a namespace the platform team did not opt in names a
	// Secret of its own: the controller cannot read it, and says how to
	// allow it. (Another namespace's Secret cannot even be named.)
	e.namespace(t, "team-b")
	tenant := e.tenant(t, "team-b", "dev")
	_, err = e.kube.CoreV1().Secrets("team-b").Create(testkit.Context(t), tlsSecretObject("team-b", "web-tls", c1), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.createService(t, tenant, httpsLBService("team-b", "shop", "web-tls"))
	e.eventWith(t, "team-b", "shop", "CertificateSecretInvalid", "cannot be read by the controller: bind the ClusterRole "+servicelb.TLSSecretsRole)
	if lbs := e.lbsNamed(t, ""); len(lbs) != 1 {
		t.Fatalf("%d load balancers, want web's only", len(lbs))
	}

	// The Secret goes: an event on web, whose load balancer keeps serving
	// the certificate it has.
	testkit.Must(t, secrets.Delete(testkit.Context(t), "web-tls", metav1.DeleteOptions{}))
	e.eventWith(t, "default", "web", "CertificateSecretInvalid", "TLS Secret default/web-tls (annotation "+string(annotations.LBTLSSecrets)+") does not exist")
	if _, served := e.servedCertificate(t, ip, c2); served != cert2 {
		t.Fatalf("after the Secret went: serves %s, want %s", served, cert2)
	}

	e.scanForKeys(t, keyBody(c1.KeyPEM), keyBody(c2.KeyPEM))
}

// renewTLSSecret gives TLS Secret ns/name certificate c and its key, as
// the client kube's user.
func renewTLSSecret(t testing.TB, kube kubernetes.Interface, ns, name string, c simtest.Cert) {
	t.Helper()
	secrets := kube.CoreV1().Secrets(ns)
	s, err := secrets.Get(testkit.Context(t), name, metav1.GetOptions{})
	testkit.Must(t, err)
	s.Data = tlsSecretObject(ns, name, c).Data
	_, err = secrets.Update(testkit.Context(t), s, metav1.UpdateOptions{})
	testkit.Must(t, err)
}

// keyBody is a line from the middle of a PEM key: what any copy of it,
// however quoted, holds.
func keyBody(pem string) string {
	lines := strings.Split(strings.TrimSpace(pem), "\n")
	return lines[len(lines)/2]
}

// scanForKeys looks for the keys everywhere the controller writes
// (scanControllerOutputs) and in every file of its work directory.
func (e *env) scanForKeys(t *testing.T, keys ...string) {
	t.Helper()
	control, err := e.kube.CoreV1().Secrets("team-b").Get(testkit.Context(t), "web-tls", metav1.GetOptions{})
	testkit.Must(t, err)
	if !strings.Contains(secretText(control), keys[0]) {
		t.Fatal("the scan does not find a key in a Secret that holds it: it proves nothing")
	}
	secrets := map[string]string{}
	for i, k := range keys {
		secrets[fmt.Sprintf("private key %d", i+1)] = k
	}
	leaks := newLeakScan(t, secrets)
	var states int
	scan := func(where, text string) {
		if strings.HasPrefix(where, "Secret tfstate-") {
			states++
		}
		leaks.scan(where, text)
	}
	e.scanControllerOutputs(t, scan)
	var mainTF int
	testkit.Must(t, filepath.WalkDir(e.workDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if filepath.Base(p) == "main.tf" && strings.Contains(string(data), `ephemeral "example_private_keys"`) {
			mainTF++
		}
		scan(p, string(data))
		return nil
	}))
	// What the scan must have seen, or it proves nothing.
	if states == 0 || mainTF == 0 || len(leaks.places) < 10 {
		t.Fatalf("scanned %d places: %d states, %d main.tf reading private keys", len(leaks.places), states, mainTF)
	}
	if !strings.Contains(e.record(t, "web"), "module.certificates") {
		t.Error("web's record shows no certificate plan: the scan would prove nothing")
	}
}

// leakScan looks for secrets in the texts it is handed: one holding a
// secret fails t, naming the place and what the secret is. It keeps the
// places, so that a test can tell it saw enough to prove something.
type leakScan struct {
	t *testing.T
	// secrets are the values to look for, by what each is (in messages).
	secrets map[string]string
	places  []string
}

func newLeakScan(t *testing.T, secrets map[string]string) *leakScan {
	return &leakScan{t: t, secrets: secrets}
}

func (s *leakScan) scan(where, text string) {
	s.places = append(s.places, where)
	for what, v := range s.secrets {
		if strings.Contains(text, v) {
			s.t.Errorf("%s holds %s", where, what)
		}
	}
}

// atLeast fails t unless n places or more were scanned: fewer prove
// nothing.
func (s *leakScan) atLeast(n int) {
	s.t.Helper()
	if len(s.places) < n {
		s.t.Fatalf("scanned only %d places: %v", len(s.places), s.places)
	}
}

// scanControllerOutputs hands scan every text the controller writes into
// the cluster and beside it: the events of every namespace, its log and
// the audit log, and the ConfigMaps and Secrets of its namespace (plan
// records, saved plans, states).
func (e *env) scanControllerOutputs(t *testing.T, scan func(where, text string)) {
	t.Helper()
	evs, err := e.kube.CoreV1().Events("").List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, ev := range evs.Items {
		scan("Event "+ev.Namespace+"/"+ev.Name, ev.Message)
	}
	for _, f := range []string{e.ccmLog, e.auditLog} {
		data, err := os.ReadFile(f)
		testkit.Must(t, err)
		scan(filepath.Base(f), string(data))
	}
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, cm := range cms.Items {
		b, _ := json.Marshal(cm)
		scan("ConfigMap "+cm.Name, string(b))
	}
	ss, err := e.kube.CoreV1().Secrets(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	for _, s := range ss.Items {
		scan("Secret "+s.Name, secretText(&s))
	}
}

// secretText is what a scan of a Secret reads: the object, its values as
// they are (JSON has them in base64) and inflated when gzipped.
func secretText(s *v1.Secret) string {
	b, _ := json.Marshal(s)
	text := string(b) + decodeGzipValues(s.Data)
	for _, v := range s.Data {
		text += string(v)
	}
	return text
}
