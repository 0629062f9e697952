package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// trafficEnvs lets one env with traffic run at a time: every env's cloud
// hands out the same addresses, and those envs bind them.
var trafficEnvs sync.Mutex

// startTraffic runs the pod runner and the node proxy for e's cluster.
func (e *env) startTraffic() {
	t := e.t
	logs := filepath.Join(e.dir, "pods")
	testkit.Must(t, os.MkdirAll(logs, 0o755))
	log, err := os.Create(filepath.Join(e.dir, "traffic.log"))
	testkit.Must(t, err)
	t.Cleanup(func() { _ = log.Close() })
	tr, err := clustertraffic.Start(testkit.Context(t), clustertraffic.Options{
		Client: e.kube, EchoBinary: filepath.Join(os.Getenv("EXAMPLE_BIN"), "example-echo"), LogDir: logs,
		Log: slog.New(slog.NewTextHandler(log, nil)),
	})
	testkit.Must(t, err)
	t.Cleanup(tr.Stop)
}

// echoDeployment creates Deployment name of replicas example-echo pods in
// ns, labelled app=name, answering HTTP on 3000.
func (e *env) echoDeployment(t testing.TB, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	_, err := e.kube.AppsV1().Deployments(ns).Create(testkit.Context(t), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "echo", Image: clustertraffic.EchoImage,
					Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 3000}}}}},
			},
		},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
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
	var a echo.Answer
	res, err := c.Get(url)
	if err != nil {
		return a, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return a, err
	}
	if res.StatusCode != http.StatusOK {
		return a, fmt.Errorf("status %d: %s", res.StatusCode, body)
	}
	return a, json.Unmarshal(body, &a)
}

// A LoadBalancer Service carries traffic: requests to its EXTERNAL-IP
// reach every one of its pods through the cloud's load balancer and the
// nodes' node ports.
func TestServiceTraffic(t *testing.T) {
	e := newEnv(t, options{traffic: true})
	e.startCCM()
	for _, n := range []struct{ name, zone string }{{"node-a", "ex-west-1a"}, {"node-b", "ex-west-1b"}, {"node-c", "ex-west-1c"}} {
		e.addNode(n.name, n.zone)
	}
	e.waitNodesInitialised(3)
	e.echoDeployment(t, "default", "echo", 3)
	_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "echo"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.ingressIP(t, "default", "echo")

	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	url := "http://" + ip + "/"
	testkit.Eventually(t, time.Minute, "an answer at "+url, func() error { _, err := ask(c, url); return err })
	pods := map[string]int{}
	for i := range 300 {
		a, err := ask(c, url)
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
}
