package preview

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/reviewapi"
)

func svcWith(ann map[string]string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: ann},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: port, NodePort: 30000 + port, Protocol: corev1.ProtocolTCP}}},
	}
}

func TestAuthor(t *testing.T) {
	author := reviewapi.AuthorAnnotation
	for _, tc := range []struct {
		name     string
		old, cur *corev1.Service
		value    string
		keep     bool
	}{
		{"create", nil, svcWith(nil, 80), "alice", true},
		{"create naming someone else", nil, svcWith(map[string]string{author: "bob"}, 80), "alice", true},
		{"spec change", svcWith(map[string]string{author: "bob"}, 80), svcWith(map[string]string{author: "bob"}, 81), "alice", true},
		{"rendered annotation change", svcWith(map[string]string{author: "bob"}, 80),
			svcWith(map[string]string{author: "bob", "loadbalancer.example.com/internal": "true"}, 80), "alice", true},
		{"legacy source ranges change", svcWith(nil, 80),
			svcWith(map[string]string{"service.beta.kubernetes.io/load-balancer-source-ranges": "10.0.0.0/8"}, 80), "alice", true},
		{"other annotation: kept", svcWith(map[string]string{author: "bob"}, 80), svcWith(map[string]string{author: "bob", "team": "x"}, 80), "bob", true},
		{"other annotation, author dropped: restored", svcWith(map[string]string{author: "bob"}, 80), svcWith(map[string]string{"team": "x"}, 80), "bob", true},
		{"other annotation, author changed to another: restored", svcWith(map[string]string{author: "bob"}, 80), svcWith(map[string]string{author: "carol"}, 80), "bob", true},
		{"no author yet, set to oneself", svcWith(nil, 80), svcWith(map[string]string{author: "alice"}, 80), "alice", true},
		{"no author yet, set to another", svcWith(nil, 80), svcWith(map[string]string{author: "carol"}, 80), "", false},
		{"no author, nothing rendered changes", svcWith(nil, 80), svcWith(map[string]string{"team": "x"}, 80), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, keep := Author(tc.old, tc.cur, "alice")
			if v != tc.value || keep != tc.keep {
				t.Errorf("Author = %q, %t; want %q, %t", v, keep, tc.value, tc.keep)
			}
		})
	}
}
