package gateway

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestCertificateOverreach: a ListenerSet's certificate serves only host
// names of its own namespace: one naming a host name another namespace
// holds, or (of another namespace) one of the Gateway's listeners, is
// refused, naming no holder.
func TestCertificateOverreach(t *testing.T) {
	shop := gatewayv1.Hostname("shop.example")
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "https", Hostname: &shop}}}}
	tr := Translation{Claims: Claims{Hosts: map[string]HostClaim{"alice.example": {Namespace: "team-alice"}, "m.example": {Namespace: "team-m"}}}}
	mallory := types.NamespacedName{Namespace: "team-m", Name: "m"}
	for _, c := range []struct {
		name  string
		set   types.NamespacedName
		names []string
		want  string
	}{
		{"its own host name", mallory, []string{"m.example"}, ""},
		{"another namespace's host name", mallory, []string{"m.example", "alice.example"}, "names alice.example, which is or covers a host name another namespace holds"},
		{"a wildcard over another namespace's", mallory, []string{"*.example"}, "names *.example, which is or covers a host name another namespace holds"},
		{"the Gateway's listener's", mallory, []string{"shop.example"}, "the Gateway's listener https"},
		{"the Gateway's listener's, from the Gateway's namespace", types.NamespacedName{Namespace: "infra", Name: "platform"}, []string{"shop.example"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CertificateOverreach(gw, tr, c.set, c.names)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Fatalf("CertificateOverreach = %q, want %q", got, c.want)
			}
			if strings.Contains(got, "team-alice") {
				t.Errorf("the refusal names the holder: %q", got)
			}
			if !slices.Contains(c.names, "alice.example") && strings.Contains(got, "alice.example") {
				t.Errorf("the refusal names a held host name the certificate does not: %q", got)
			}
		})
	}
}
