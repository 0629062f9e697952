package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/reviewapi"
)

var demoNodes = []struct{ name, podCIDR string }{
	{"demo-control-plane", "10.244.0.0/24"},
	{"demo-worker", "10.244.1.0/24"},
	{"demo-worker2", "10.244.2.0/24"},
}

const uninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// show registers the nodes and a LoadBalancer Service and prints, as they
// happen, what the CCM does with them.
func (d *demo) show(ctx context.Context) error {
	kube := d.cluster.Client
	step("registering 3 nodes the way kubelet --cloud-provider=external does (tainted, no addresses)")
	for _, n := range demoNodes {
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n.name},
			Spec: v1.NodeSpec{PodCIDR: n.podCIDR, PodCIDRs: []string{n.podCIDR},
				Taints: []v1.Taint{{Key: uninitialized, Value: "true", Effect: v1.TaintEffectNoSchedule}}},
		}
		if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create node %s: %w", n.name, err)
		}
	}
	for _, n := range demoNodes {
		var node *v1.Node
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			var err error
			node, err = kube.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
			// Initialised: untainted, with the cloud's addresses (kwok,
			// the kubelet here, may have given it an InternalIP of its own
			// first; only the cloud gives an ExternalIP).
			return err == nil && !slices.ContainsFunc(node.Spec.Taints, func(t v1.Taint) bool { return t.Key == uninitialized }) &&
				slices.ContainsFunc(node.Status.Addresses, func(a v1.NodeAddress) bool { return a.Type == v1.NodeExternalIP }), nil
		})
		if err != nil {
			return fmt.Errorf("node %s was not initialised (see %s): %w", n.name, filepath.Join(d.dir, "ccm.log"), err)
		}
		var addrs []string
		for _, a := range node.Status.Addresses {
			addrs = append(addrs, fmt.Sprintf("%s=%s", a.Type, a.Address))
		}
		fmt.Printf("    node %-20s initialised: providerID %s, zone %s, type %s, %s\n", n.name, node.Spec.ProviderID,
			node.Labels[v1.LabelTopologyZone], node.Labels[v1.LabelInstanceTypeStable], strings.Join(addrs, " "))
	}

	step("creating Deployment default/echo: 3 pods of example-echo (what echo-basic answers), Ready once they listen")
	if err := echoDeployment(ctx, kube); err != nil {
		return err
	}
	step("creating Service default/echo (type LoadBalancer, port 80 to the pods' 3000)")
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: "default"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "echo"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, TargetPort: intstr.FromString("http")}}},
	}
	warned, _, err := d.warnedClient()
	if err != nil {
		return err
	}
	if _, err := warned.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	seen := map[string]bool{}
	var ingress []v1.LoadBalancerIngress
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		evs, err := kube.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "echo").String()})
		if err == nil {
			slices.SortFunc(evs.Items, func(a, b v1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
			for _, ev := range evs.Items {
				if !seen[string(ev.UID)] {
					seen[string(ev.UID)] = true
					fmt.Printf("    event %-8s %-22s %s\n", ev.Type, ev.Reason, ev.Message)
				}
			}
		}
		s, err := kube.CoreV1().Services("default").Get(ctx, "echo", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ingress = s.Status.LoadBalancer.Ingress
		return len(ingress) > 0, nil
	})
	if err != nil {
		return fmt.Errorf("the Service got no external IP (see %s): %w", filepath.Join(d.dir, "ccm.log"), err)
	}
	for _, in := range ingress {
		fmt.Printf("    Service default/echo external IP: %s\n", in.IP)
	}
	step("curl http://" + ingress[0].IP + "/ (the cloud's load balancer, a node's node port, a pod)")
	if err := curl(ctx, "http://"+ingress[0].IP+"/", ""); err != nil {
		return err
	}

	if err := d.preview(ctx); err != nil {
		return err
	}

	ws, err := workspaceOf(filepath.Join(d.dir, "work"), "service-default-echo")
	if err != nil {
		return err
	}
	step("the generated Terraform root module (" + filepath.Join(ws, "main.tf") + ")")
	if err := printFile(filepath.Join(ws, "main.tf")); err != nil {
		return err
	}
	step("the plan that was applied (" + filepath.Join(ws, ".ccm", "last-plan.txt") + ")")
	if err := printFile(filepath.Join(ws, ".ccm", "last-plan.txt")); err != nil {
		return err
	}
	gwIP, err := d.gateway(ctx)
	if err != nil {
		return err
	}
	step("where things live")
	fmt.Printf("    workspace:   %s\n", ws)
	fmt.Printf("    state:       %s\n", filepath.Join(d.dir, "state"))
	fmt.Printf("    kubeconfig:  %s\n", d.cluster.AdminKubeconfig)
	fmt.Printf("    logs:        %s/{ccm,example-cloud}.log, %s/control-plane/*.log\n", d.dir, d.dir)
	fmt.Printf("    cloud API:   http://%s (token in %s)\n", d.api, filepath.Join(d.dir, "token"))
	fmt.Printf("    the network: the demo runs in a network namespace of its own, where its addresses are local;\n")
	fmt.Printf("                 bin/example-demo exec -- CMD runs CMD there, KUBECONFIG set (%s)\n", d.cluster.AdminKubeconfig)
	fmt.Printf("    try:         bin/example-demo exec -- kubectl get nodes,pods,svc,gateways -o wide\n")
	fmt.Printf("    traffic:     bin/example-demo exec -- curl -s http://%s/\n", ingress[0].IP)
	fmt.Printf("                 bin/example-demo exec -- curl -s -H 'Host: echo.example.test' http://%s/\n", gwIP)
	fmt.Printf("    records:     bin/example-demo exec -- bin/examplectl status   (then: plan default/echo, history default/echo)\n")
	fmt.Printf("    preview:     bin/example-demo exec -- bin/examplectl preview -f <svc.yaml>   (what applying it would do to the cloud; exit 0 none, 2 a change, 3 waits for approval)\n")
	fmt.Printf("    review:      bin/examplectl render --config %s --service <svc.yaml> --target-pool <id>   (offline, byte for byte what the CCM applies; the id is target_pool_id above)\n", filepath.Join(d.dir, "cloud-config.yaml"))
	fmt.Printf("    stop:        make demo-down\n")
	return nil
}

// preview shows the author the API server stamped and what an edit would
// do to the cloud before it is made: a server-side dry run the
// controller's webhook answers with a speculative plan.
func (d *demo) preview(ctx context.Context) error {
	svc, err := d.cluster.Client.CoreV1().Services("default").Get(ctx, "echo", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("    author, stamped by the API server: %s = %s\n", reviewapi.AuthorAnnotation, svc.Annotations[reviewapi.AuthorAnnotation])
	step("previewing an edit before it is made: turning the load balancer internal, as a server-side dry run (nothing changes)")
	kube, w, err := d.warnedClient()
	if err != nil {
		return err
	}
	svc.Annotations[string(annotations.LBInternal)] = "true"
	// The webhook answers within seconds; a controller still starting may
	// not answer yet: the dry run then shows nothing, so try again.
	return wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := kube.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return false, err
		}
		return w.n > 0, nil
	})
}

// warnedClient is the admin's client, printing the API server's warnings
// (the webhook's preview).
func (d *demo) warnedClient() (kubernetes.Interface, *printWarnings, error) {
	cfg := rest.CopyConfig(d.cluster.Admin)
	w := &printWarnings{}
	cfg.WarningHandler = w
	kube, err := kubernetes.NewForConfig(cfg)
	return kube, w, err
}

// printWarnings prints the API server's warnings as they come.
type printWarnings struct{ n int }

func (w *printWarnings) HandleWarningHeader(_ int, _ string, text string) {
	w.n++
	fmt.Printf("    Warning: %s\n", text)
}

// workspaceOf finds the workspace directory whose key contains part.
func workspaceOf(workDir, part string) (string, error) {
	entries, err := os.ReadDir(workDir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if e.IsDir() && strings.Contains(e.Name(), part) {
			return filepath.Join(workDir, e.Name()), nil
		}
	}
	return "", fmt.Errorf("no workspace for %s in %s", part, workDir)
}

func printFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		fmt.Println("    " + line)
	}
	return nil
}

func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not healthy within %s", url, timeout)
}
