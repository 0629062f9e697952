package records_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/providerid"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// bigService is a Service with ports listeners and its nodes.
func bigService(ports, nodes int) (*corev1.Service, []*corev1.Node) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "media", Name: "rtp-relay", UID: types.UID("9b2e4c1a-7d3f-4e5a-8c6b-0123456789ab")},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	for i := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: fmt.Sprintf("rtp-%d", i), Protocol: corev1.ProtocolTCP,
			Port: int32(10000 + i), NodePort: int32(30000 + i),
		})
	}
	var ns []*corev1.Node
	for i := range nodes {
		ns = append(ns, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("worker-%02d", i)},
			Spec:       corev1.NodeSpec{ProviderID: providerid.Format("ex-west-1", fmt.Sprintf("i-%016x", 0xa0000+i))},
		})
	}
	return svc, ns
}

// renderMain is the real main.tf of svc.
func renderMain(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) string {
	t.Helper()
	m, err := renderer.LoadBalancer(annotations.Read(svc), nodes, renderer.Config{
		ClusterID: "prod-eu", Region: "ex-west-1", Endpoint: "https://api.example.cloud", NetworkName: "cluster-net",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(m.Files[renderer.MainFile])
}

// planText imitates terraform show of a plan creating svc's load
// balancer, every listener and target listed; n varies the target ports
// so each plan's text differs.
func planText(svc *corev1.Service, nodes []*corev1.Node, n int) string {
	var b strings.Builder
	b.WriteString(`
Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

Terraform will perform the following actions:

  # module.load_balancer.example_load_balancer.this will be created
  + resource "example_load_balancer" "this" {
      + algorithm            = "round_robin"
      + allowed_source_cidrs = []
      + hostname             = (known after apply)
      + id                   = (known after apply)
      + internal             = false
      + ip_family            = "ipv4"
      + ipv4                 = (known after apply)
      + listeners            = [
`)
	for _, p := range svc.Spec.Ports {
		fmt.Fprintf(&b, "          + {\n              + port           = %d\n              + protocol       = \"tcp\"\n              + proxy_protocol = false\n              + target_port    = %d\n            },\n", p.Port, int(p.NodePort)+n)
	}
	b.WriteString("        ]\n      + name                 = \"k8s-3f2a9c8e1b7d4a6f0e5c2b9a8d7f\"\n      + region               = \"ex-west-1\"\n      + status               = (known after apply)\n      + tags                 = {\n")
	fmt.Fprintf(&b, "          + \"k8s.example.com/service-name\"      = %q\n          + \"k8s.example.com/service-namespace\" = %q\n        }\n      + targets              = [\n", svc.Name, svc.Namespace)
	for _, node := range nodes {
		id, _ := providerid.Parse(node.Spec.ProviderID)
		fmt.Fprintf(&b, "          + %q,\n", id.InstanceID)
	}
	b.WriteString("        ]\n      + type                 = \"lb-small\"\n    }\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n\nChanges to Outputs:\n  + hostname = (known after apply)\n  + id       = (known after apply)\n  + ipv4     = (known after apply)\n")
	return b.String()
}

func newPlan(id, text string, at time.Time) records.Plan {
	return records.Plan{
		ID: id, Kind: records.KindChange, HCLHash: "sha256:5f0c8e", InputsDigest: "in-" + id,
		Summary: runner.PlanSummary{Add: 1, Resources: []runner.ResourceChange{
			{Address: renderer.LoadBalancerAddress, Type: renderer.LoadBalancerType, Action: "create"},
		}},
		Policy: "auto", Outcome: records.Applied, PlannedAt: at, DecidedAt: &at, Text: text,
	}
}

// prepend adds p as the newest plan.
func prepend(p records.Plan) func(*records.Record) error {
	return func(r *records.Record) error {
		r.Object = objectref.Ref{Kind: "Service", Namespace: "media", Name: "rtp-relay", UID: "9b2e4c1a"}
		r.Policy = "auto"
		r.Plans = append([]records.Plan{p}, r.Plans...)
		return nil
	}
}
