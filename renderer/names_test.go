package renderer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// The names the controller computes are stored in the cloud: they stay
// byte for byte what they were before objectref.HashedName computed them
// all (the values below were printed by the code of f180f11).
func TestComputedNamesUnchanged(t *testing.T) {
	withUID := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "0b7e3f4a-51f2-4c55-9d0e-8a4f1c2b3d4e"}}
	noUID := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	gw := lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "6c1d2e3f-0000-4000-8000-000000000001"}
	for _, c := range []struct{ what, got, want string }{
		{"LoadBalancerName", LoadBalancerName(withUID, "prod-eu"), "k8s-6870234d5888c9c31017d4638360"},
		{"LoadBalancerName without uid", LoadBalancerName(noUID, "prod-eu"), "k8s-21095414cf89f5769eecf411c6d5"},
		{"GroupLoadBalancerName", GroupLoadBalancerName("prod-eu", "shop", "front"), "k8s-cf0970049ad4d9a8c58d0a127852"},
		{"GatewayName", lbmodel.GatewayName(gw, "prod-eu"), "k8s-2fe208b8e7c9906a94e7bc2acfbe"},
		{"GatewayName without uid", lbmodel.GatewayName(lbmodel.LoadBalancer{Namespace: "infra", Name: "gw"}, "prod-eu"), "k8s-84180e40bd96fb81e32a10df7892"},
		{"ReservedAddressName", ReservedAddressName(withUID, "prod-eu"), "k8s-a-d2533572757ea97d811c28d90c"},
		{"ReservedAddressName without uid", ReservedAddressName(noUID, "prod-eu"), "k8s-a-9a7beffb3148b3da2e73338e1f"},
		{"PoolKey of every node", PoolKey(""), "all"},
		{"PoolKey", PoolKey("pool=blue"), "sel-00c952ca984f272c"},
		{"poolNamePrefix", poolNamePrefix("prod-eu"), "k8s-3312b6955a3a-"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, was %s", c.what, c.got, c.want)
		}
	}
}
