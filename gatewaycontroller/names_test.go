package gatewaycontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// A Gateway's claims ConfigMap keeps its name byte for byte (f180f11's,
// before objectref.HashedName computed it): a controller upgraded reads
// the claims its predecessor wrote.
func TestClaimsNameUnchanged(t *testing.T) {
	if got, want := claimsName(types.NamespacedName{Namespace: "infra", Name: "gw"}), "gateway-claims-b7bd087b7827deaf03e3"; got != want {
		t.Errorf("claimsName = %s, was %s", got, want)
	}
}
