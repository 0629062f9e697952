package ccm

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The orphan finder takes only a load balancer whose tags name the
// Service (cluster id and uid), not another's of the same name.
func TestOrphanFinder(t *testing.T) {
	sim := simtest.Start(t)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	testkit.Must(t, err)
	cfg := reviewtest.Config(t, "")
	cfg.Region = "ex-west-1"
	find := orphanFinder(api, cfg)
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "uid-1",
		Annotations: map[string]string{string(annotations.LBName): "shop-web"}}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
	create := func(uid string) string {
		lb, err := api.CreateLoadBalancer(context.Background(), exampleapi.LoadBalancerSpec{
			Name: "shop-web", Region: "ex-west-1", IPFamily: "ipv4",
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{
				Type: "lb-small", Algorithm: "round_robin",
				Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
				Tags:      map[string]string{"k8s.example.com/cluster-id": "prod", "k8s.example.com/service-uid": uid},
			},
		})
		testkit.Must(t, err)
		return lb.ID
	}
	stranger := create("uid-stranger")
	name, owner := "shop-web", engine.OwnerTags(svc, cfg.ClusterID)
	if id, err := find(context.Background(), name, owner); err != nil || id != "" {
		t.Fatalf("took another Service's load balancer %s: %q %v", stranger, id, err)
	}
	testkit.Must(t, api.DeleteLoadBalancer(context.Background(), stranger))
	ours := create(string(svc.UID))
	if id, err := find(context.Background(), name, owner); err != nil || id != ours {
		t.Fatalf("found %q (%v), want %s", id, err, ours)
	}
}
