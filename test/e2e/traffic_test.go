package e2e

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// startTraffic runs the pod runner and the node proxy for e's cluster.
func (e *env) startTraffic() {
	t := e.t
	logs := filepath.Join(e.dir, "pods")
	testkit.Must(t, os.MkdirAll(logs, 0o755))
	log, err := os.Create(filepath.Join(e.dir, "traffic.log"))
	testkit.Must(t, err)
	t.Cleanup(func() { _ = log.Close() })
	// The conformance suite's UDPRoute backend (make workloads builds it).
	coredns, err := testcluster.Tool(testkit.Context(t), "coredns", log)
	testkit.Must(t, err)
	// The pods run as long as the test (testkit.Context ends within
	// minutes: the conformance run takes longer).
	tr, err := clustertraffic.Start(t.Context(), clustertraffic.Options{
		Client: e.kube, EchoBinary: filepath.Join(os.Getenv("EXAMPLE_BIN"), "example-echo"), CoreDNS: coredns, LogDir: logs,
		Log: slog.New(slog.NewTextHandler(log, nil)),
	})
	testkit.Must(t, err)
	t.Cleanup(tr.Stop)
	// A failed test shows what the pod runner and the pods said.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		files, _ := filepath.Glob(filepath.Join(logs, "*.log"))
		for _, f := range append([]string{log.Name()}, files...) {
			b, _ := os.ReadFile(f)
			t.Logf("--- %s ---\n%s", filepath.Base(f), tail(string(b), 2000))
		}
	})
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// lastLine is the last non-empty line of s: a failure's first line then
// says why, where a summary keeps only that line.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// echoDeployment creates Deployment name of replicas example-echo pods in
// ns, labelled app=name, answering HTTP on 3000 (and as env says).
func (e *env) echoDeployment(t testing.TB, ns, name string, replicas int32, env ...v1.EnvVar) {
	e.echoDeploymentOf(t, ns, name, replicas, nil, env...)
}

// echoDeploymentOf is echoDeployment whose pod template edit changes.
func (e *env) echoDeploymentOf(t testing.TB, ns, name string, replicas int32, edit func(*v1.PodTemplateSpec), env ...v1.EnvVar) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "echo", Image: clustertraffic.EchoImage, Env: env,
					Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 3000}}}}},
			},
		},
	}
	if edit != nil {
		edit(&d.Spec.Template)
	}
	_, err := e.kube.AppsV1().Deployments(ns).Create(testkit.Context(t), d, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.deploymentReady(t, ns, name, replicas)
}

// deploymentReady waits until Deployment ns/name has replicas Ready.
func (e *env) deploymentReady(t testing.TB, ns, name string, replicas int32) {
	t.Helper()
	testkit.Eventually(t, time.Minute, "deployment "+name+" ready", func() error {
		d, err := e.kube.AppsV1().Deployments(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.ReadyReplicas != replicas {
			return fmt.Errorf("%d of %d ready", d.Status.ReadyReplicas, replicas)
		}
		return nil
	})
}

// podsAndPools says where the pods of selector in ns are and what the
// cloud's target pools hold: why a load balancer reaches fewer pods
// than there are.
func (e *env) podsAndPools(t testing.TB, ns, selector string) string {
	ctx := testkit.Context(t)
	var out []string
	pods, err := e.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod %s at %s", p.Name, p.Status.PodIP))
	}
	pools, err := e.api.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pools {
		out = append(out, fmt.Sprintf("pool %s targets %v", p.ID, p.Targets))
	}
	return strings.Join(out, "; ")
}

// ingressIP waits for Service ns/name's load balancer address.
func (e *env) ingressIP(t testing.TB, ns, name string) string {
	t.Helper()
	var ip string
	testkit.Eventually(t, 2*time.Minute, "ingress of "+name, func() error {
		svc, err := e.kube.CoreV1().Services(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			return fmt.Errorf("no ingress")
		}
		ip = svc.Status.LoadBalancer.Ingress[0].IP
		return nil
	})
	return ip
}

// ask sends GET url on a new connection and reads the echo answer.
func ask(c *http.Client, url string) (echo.Answer, error) {
	res, err := c.Get(url)
	if err != nil {
		return echo.Answer{}, err
	}
	defer res.Body.Close()
	return decodeAnswer(res)
}

// decodeAnswer reads the echo answer of a 200.
func decodeAnswer(res *http.Response) (echo.Answer, error) {
	var a echo.Answer
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return a, err
	}
	if res.StatusCode != http.StatusOK {
		return a, fmt.Errorf("status %d: %s", res.StatusCode, body)
	}
	return a, json.Unmarshal(body, &a)
}

// lbService creates LoadBalancer Service ns/name over the pods app=name
// with ports and annotations, and waits for its address.
func (e *env) lbService(t testing.TB, ns, name string, ann map[string]string, local bool, ports ...v1.ServicePort) string {
	t.Helper()
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name}, Ports: ports}}
	if local {
		svc.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	}
	_, err := e.kube.CoreV1().Services(ns).Create(testkit.Context(t), svc, metav1.CreateOptions{})
	testkit.Must(t, err)
	return e.ingressIP(t, ns, name)
}

// askedFrom sends n requests to url from address from (a client of the
// tests' network namespace), each on a new connection, once the first
// answers, and fails unless every one answers and the pod saw the
// request from that address; it returns the requests each pod answered.
func askedFrom(t *testing.T, from netip.Addr, url string, n int) map[string]int {
	t.Helper()
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DialContext: d.DialContext}}
	testkit.Eventually(t, time.Minute, "an answer at "+url, func() error { _, err := ask(c, url); return err })
	pods := map[string]int{}
	for i := range n {
		a, err := ask(c, url)
		if err != nil {
			t.Fatalf("request %d of %d: %v", i+1, n, err)
		}
		if host, _, _ := net.SplitHostPort(a.RemoteAddr); host != from.String() {
			t.Fatalf("the pod saw the request from %s, not the client's %s", a.RemoteAddr, from)
		}
		pods[a.Pod]++
	}
	return pods
}

// keptConn is one HTTP/1.1 connection kept open across requests.
type keptConn struct {
	c    net.Conn
	r    *bufio.Reader
	viaA bool
}

// keep opens a connection to addr, closed with the test.
func keep(t testing.TB, addr string) *keptConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	testkit.Must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &keptConn{c: c, r: bufio.NewReader(c)}
}

// ask sends GET / on the connection and reads the echo answer.
func (k *keptConn) ask() (echo.Answer, error) {
	var a echo.Answer
	_ = k.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(k.c, "GET / HTTP/1.1\r\nHost: kept\r\n\r\n"); err != nil {
		return a, err
	}
	res, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return a, err
	}
	defer res.Body.Close()
	return a, json.NewDecoder(res.Body).Decode(&a)
}

// load sends GET url at rate a second, each on a new connection, until
// the returned stop; stop reports the answers and the failures.
func load(url string, rate int) (stop func() (ok int, failed []error)) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var mu sync.Mutex
	var answered int
	var failures []error
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			wg.Go(func() {
				_, err := ask(c, url)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures = append(failures, err)
				} else {
					answered++
				}
			})
		}
	})
	return func() (int, []error) {
		close(done)
		wg.Wait()
		return answered, failures
	}
}

// Traffic is the proof: Services carry requests, connections and
// datagrams to their pods through the address in their status, through
// the cloud's load balancer and the nodes' node ports, and keep carrying
// them while nodes drain and listeners are added.
func TestServiceTraffic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{traffic: true, targetPools: map[string]any{"deregistrationDelay": "3s"}})
	e.startCCM()
	for _, n := range []struct{ name, zone string }{{"node-a", "ex-west-1a"}, {"node-b", "ex-west-1b"}, {"node-c", "ex-west-1c"}} {
		e.addNode(n.name, n.zone)
	}
	e.waitNodesInitialised(3)
	e.echoDeployment(t, "default", "echo", 3)
	http80 := v1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}
	ip := e.lbService(t, "default", "echo", nil, false, http80)
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := "http://" + ip + "/"
	testkit.Eventually(t, time.Minute, "an answer at "+url, func() error { _, err := ask(plain, url); return err })

	t.Run("http over three pods", func(t *testing.T) {
		pods := map[string]int{}
		for i := range 300 {
			a, err := ask(plain, url)
			if err != nil {
				t.Fatalf("request %d of 300: %v", i+1, err)
			}
			pods[a.Pod]++
		}
		t.Logf("300 requests through %s: %v", url, pods)
		if len(pods) != 3 {
			t.Fatalf("300 requests reached %d pods: %v", len(pods), pods)
		}
		for pod, n := range pods {
			if n < 60 {
				t.Errorf("pod %s answered %d of 300 (under 20%%): %v", pod, n, pods)
			}
		}
	})

	t.Run("tcp and udp", func(t *testing.T) {
		e.echoDeployment(t, "default", "streams", 2, v1.EnvVar{Name: "TCP_ECHO_PORT", Value: "7000"}, v1.EnvVar{Name: "UDP_ECHO_PORT", Value: "7001"})
		ip := e.lbService(t, "default", "streams", nil, false,
			v1.ServicePort{Name: "tcp", Port: 7000, TargetPort: intstr.FromInt32(7000)},
			v1.ServicePort{Name: "udp", Port: 7001, Protocol: v1.ProtocolUDP, TargetPort: intstr.FromInt32(7001)})
		testkit.Eventually(t, time.Minute, "a tcp echo at "+ip, func() error {
			c, err := net.DialTimeout("tcp", ip+":7000", 2*time.Second)
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := io.WriteString(c, "ping\n"); err != nil {
				return err
			}
			if line, err := bufio.NewReader(c).ReadString('\n'); line != "ping\n" {
				return fmt.Errorf("echo %q: %v", line, err)
			}
			return nil
		})
		testkit.Eventually(t, time.Minute, "a udp echo at "+ip, func() error {
			c, err := net.Dial("udp", ip+":7001")
			if err != nil {
				return err
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Second))
			if _, err := io.WriteString(c, "hello"); err != nil {
				return err
			}
			buf := make([]byte, 64)
			n, err := c.Read(buf)
			if string(buf[:n]) != "hello" {
				return fmt.Errorf("echo %q: %v", buf[:n], err)
			}
			return nil
		})
	})

	t.Run("https by SNI", func(t *testing.T) {
		ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "test CA", IsCA: true})
		cert := simtest.NewCert(t, simtest.CertOptions{CommonName: "web.example.test", Issuer: &ca})
		e.allowTLSSecrets(t, "default")
		_, err := e.kube.CoreV1().Secrets("default").Create(testkit.Context(t), tlsSecretObject("default", "web-tls", cert), metav1.CreateOptions{})
		testkit.Must(t, err)
		e.echoDeployment(t, "default", "web", 1)
		ip := e.lbService(t, "default", "web", map[string]string{
			string(annotations.LBHTTPSPorts): "443", string(annotations.LBTLSSecrets): "web-tls",
		}, false, v1.ServicePort{Name: "https", Port: 443, TargetPort: intstr.FromString("http")})
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM([]byte(ca.CertPEM))
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{ServerName: "web.example.test", RootCAs: roots}}}
		testkit.Eventually(t, 2*time.Minute, "https at "+ip, func() error {
			a, err := ask(c, "https://"+ip+"/")
			if err != nil {
				return err
			}
			if a.Host != ip || !strings.HasPrefix(a.Pod, "web-") {
				return fmt.Errorf("answer %+v", a)
			}
			return nil
		})
	})

	t.Run("a pod's Secret and ConfigMap volumes, its certificate served", func(t *testing.T) {
		// As the conformance suite's TLS backends do, echo-basic reads its
		// certificate and key from volumes: here the key from a Secret at
		// /etc/secret-volume, the certificate from a ConfigMap beside it.
		ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "test CA", IsCA: true})
		cert := simtest.NewCert(t, simtest.CertOptions{CommonName: "backend.example.test", Issuer: &ca})
		_, err := e.kube.CoreV1().Secrets("default").Create(testkit.Context(t), tlsSecretObject("default", "backend-tls", cert), metav1.CreateOptions{})
		testkit.Must(t, err)
		_, err = e.kube.CoreV1().ConfigMaps("default").Create(testkit.Context(t), &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "backend-cert"},
			Data: map[string]string{"chain": cert.CertPEM}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		e.echoDeploymentOf(t, "default", "tlsecho", 1, func(tpl *v1.PodTemplateSpec) {
			p := &tpl.Spec
			p.Volumes = []v1.Volume{
				{Name: "key", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "backend-tls"}}},
				{Name: "cert", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
					LocalObjectReference: v1.LocalObjectReference{Name: "backend-cert"}, Items: []v1.KeyToPath{{Key: "chain", Path: "pem/tls.crt"}}}}},
			}
			p.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "key", MountPath: "/etc/secret-volume"}, {Name: "cert", MountPath: "/etc/cert-config"}}
		}, v1.EnvVar{Name: "HTTPS_PORT", Value: "8443"},
			v1.EnvVar{Name: "TLS_SERVER_CERT", Value: "/etc/cert-config/pem/tls.crt"}, v1.EnvVar{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/secret-volume/tls.key"})
		ip := e.lbService(t, "default", "tlsecho", nil, false, v1.ServicePort{Name: "tls", Port: 8443, TargetPort: intstr.FromInt32(8443)})
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM([]byte(ca.CertPEM))
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{ServerName: "backend.example.test", RootCAs: roots}}}
		testkit.Eventually(t, time.Minute, "the pod's own certificate at "+ip+":8443", func() error {
			a, err := ask(c, "https://"+ip+":8443/")
			if err != nil {
				return err
			}
			if a.TLS == nil || a.TLS.ServerName != "backend.example.test" || !strings.HasPrefix(a.Pod, "tlsecho-") {
				return fmt.Errorf("answer %+v", a)
			}
			return nil
		})
		for _, p := range []string{"/etc/secret-volume", "/etc/cert-config"} {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("the pod's volume shows on the host at %s", p)
			}
		}
	})

	t.Run("Local keeps the client's address", func(t *testing.T) {
		e.echoDeployment(t, "default", "local", 1)
		ip := e.lbService(t, "default", "local", nil, true, http80)
		// The nodes without the pod must fail the health check, not
		// the request.
		askedFrom(t, netip.MustParseAddr("198.51.100.200"), "http://"+ip+"/", 30)
	})

	t.Run("target type ip: to the pods directly", func(t *testing.T) {
		e.echoDeployment(t, "default", "direct", 2)
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "direct",
			Annotations: map[string]string{string(annotations.LBTargetType): annotations.TargetTypeIP}},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "direct"}, Ports: []v1.ServicePort{http80},
				AllocateLoadBalancerNodePorts: ptr.To(false)}}
		_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), svc, metav1.CreateOptions{})
		testkit.Must(t, err)
		ip := e.ingressIP(t, "default", "direct")
		// With externalTrafficPolicy Cluster: behind a node, the pod
		// would see the node's address.
		if pods := askedFrom(t, netip.MustParseAddr("198.51.100.201"), "http://"+ip+"/", 40); len(pods) != 2 {
			t.Fatalf("40 requests reached %v, want both pods", pods)
		}
		// In the cloud: no node is a target; the one rule forwards to a
		// pool of target type ip holding the two pods.
		lbs, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
		testkit.Must(t, err)
		i := slices.IndexFunc(lbs, func(lb exampleapi.LoadBalancer) bool { return lb.IPv4 == ip })
		if i < 0 {
			t.Fatalf("no load balancer holds %s", ip)
		}
		lb := lbs[i]
		if len(lb.Targets) != 0 || lb.TargetPoolID != "" || len(lb.Rules) != 1 || len(lb.Rules[0].Backends) != 1 {
			t.Fatalf("load balancer %s: targets %v, pool %q, rules %+v", lb.ID, lb.Targets, lb.TargetPoolID, lb.Rules)
		}
		pool, err := e.api.GetTargetPool(testkit.Context(t), lb.Rules[0].Backends[0].TargetPoolID)
		testkit.Must(t, err)
		running, err := e.kube.CoreV1().Pods("default").List(testkit.Context(t), metav1.ListOptions{LabelSelector: "app=direct"})
		testkit.Must(t, err)
		var want []string
		for _, p := range running.Items {
			want = append(want, p.Status.PodIP+":3000") // the echo pods' http port
		}
		slices.Sort(want)
		if pool.TargetType != exampleapi.TargetTypeIP || !slices.Equal(pool.Targets, want) {
			t.Fatalf("pool %s: type %s, targets %v; want ip, %v", pool.ID, pool.TargetType, pool.Targets, want)
		}
		// The Service gone, its load balancer goes, then its pool.
		testkit.Must(t, e.kube.CoreV1().Services("default").Delete(testkit.Context(t), "direct", metav1.DeleteOptions{}))
		testkit.Eventually(t, time.Minute, "the pod pool destroyed after the load balancer", func() error {
			if _, err := e.api.GetTargetPool(testkit.Context(t), pool.ID); !exampleapi.IsNotFound(err) {
				return fmt.Errorf("pool %s: %v", pool.ID, err)
			}
			return nil
		})
	})

	t.Run("a node drained under load", func(t *testing.T) {
		// Connections opened before the drain: about a third go through
		// node-a (the load balancer deals them round robin), which the
		// pods see as their source (kube-proxy masquerades).
		nodeA := e.instance("node-a").PrivateIPv4
		var kept []*keptConn
		var from []string
		throughA := 0
		for range 6 {
			k := keep(t, ip+":80")
			a, err := k.ask()
			testkit.Must(t, err)
			if k.viaA = strings.HasPrefix(a.RemoteAddr, nodeA+":"); k.viaA {
				throughA++
			}
			kept, from = append(kept, k), append(from, a.RemoteAddr)
		}
		if throughA == 0 || throughA == len(kept) {
			t.Fatalf("%d of %d connections went through node-a (%s): want some through it and some not; the pods saw them from %v",
				throughA, len(kept), nodeA, from)
		}
		stop := load(url, 50)
		time.Sleep(time.Second)
		e.drainNode("node-a", true)
		id := e.instance("node-a").ID
		var until time.Time
		testkit.Eventually(t, time.Minute, "node-a draining", func() error {
			for _, p := range e.pools() {
				for _, d := range p.Draining {
					if d.ID == id {
						until = d.Until
						return nil
					}
				}
			}
			return fmt.Errorf("not draining yet")
		})
		for i, k := range kept {
			if _, err := k.ask(); err != nil {
				t.Fatalf("connection %d (through node-a: %v) failed while node-a drains: %v", i, k.viaA, err)
			}
		}
		// Once the delay has passed, the connections through node-a end
		// (the load balancer closes them); the others go on.
		time.Sleep(time.Until(until))
		testkit.Eventually(t, 10*time.Second, "node-a's connections closed after its delay", func() error {
			for i, k := range kept {
				if _, err := k.ask(); k.viaA && err == nil {
					return fmt.Errorf("connection %d through node-a is still open", i)
				}
			}
			return nil
		})
		for i, k := range kept {
			if _, err := k.ask(); !k.viaA && err != nil {
				t.Errorf("connection %d through another node failed: %v", i, err)
			}
		}
		ok, failed := stop()
		t.Logf("drain under 50 requests/s: %d answered, %d failed", ok, len(failed))
		if len(failed) > 0 || ok < 100 {
			t.Fatalf("%d requests failed while node-a drained (%v), %d answered", len(failed), firstOf(failed), ok)
		}
		e.drainNode("node-a", false)
	})

	t.Run("a listener added under load", func(t *testing.T) {
		stop := load(url, 50)
		time.Sleep(time.Second)
		svc, err := e.kube.CoreV1().Services("default").Get(testkit.Context(t), "echo", metav1.GetOptions{})
		testkit.Must(t, err)
		svc.Spec.Ports = append(svc.Spec.Ports, v1.ServicePort{Name: "alt", Port: 8080, TargetPort: intstr.FromString("http")})
		_, err = e.kube.CoreV1().Services("default").Update(testkit.Context(t), svc, metav1.UpdateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, time.Minute, "the added listener answers", func() error { _, err := ask(plain, "http://"+ip+":8080/"); return err })
		ok, failed := stop()
		t.Logf("listener added under 50 requests/s: %d answered, %d failed", ok, len(failed))
		if len(failed) > 0 || ok < 50 {
			t.Fatalf("%d requests to the existing listener failed (%v), %d answered", len(failed), firstOf(failed), ok)
		}
	})
}

// firstOf is errs' first, or "none".
func firstOf(errs []error) string {
	if len(errs) == 0 {
		return "none failed"
	}
	return "first: " + errs[0].Error()
}
