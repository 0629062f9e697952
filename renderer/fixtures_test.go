package renderer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testConfig() Config {
	return Config{
		ClusterID:   "prod-eu",
		Region:      "ex-west-1",
		Endpoint:    "https://api.example.cloud",
		NetworkName: "cluster-net",
	}
}

type svcOpt func(*corev1.Service)

func testService(opts ...svcOpt) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: types.UID("6f1c1e2a-8d3b-4c5e-9f70-0123456789ab")},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func withPorts(ps ...corev1.ServicePort) svcOpt {
	return func(s *corev1.Service) { s.Spec.Ports = ps }
}

func withAnnotations(kv ...string) svcOpt {
	return func(s *corev1.Service) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func port(name string, proto corev1.Protocol, p, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: p, NodePort: nodePort}
}

func testNode(name, providerID string, labels ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if len(labels) > 0 {
		n.Labels = map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			n.Labels[labels[i]] = labels[i+1]
		}
	}
	return n
}

func testNodes() []*corev1.Node {
	return []*corev1.Node{
		testNode("worker-b", "example://ex-west-1/i-0b0b0b0b0b0b0b0b", "role", "worker"),
		testNode("worker-a", "example://ex-west-1/i-0a0a0a0a0a0a0a0a", "role", "worker"),
		testNode("ingress-1", "example://ex-west-1/i-1c1c1c1c1c1c1c1c", "role", "ingress"),
	}
}
