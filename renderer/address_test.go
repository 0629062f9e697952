package renderer

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// Bad inputs are refused naming the field; nothing is rendered.
func TestAddressRootRefusesBadInput(t *testing.T) {
	ok := lbmodel.Address{Namespace: "shop", Name: "www"}
	for field, a := range map[string]lbmodel.Address{
		"namespace":        {Name: "www"},
		"name":             {Namespace: "shop", Name: "-www"},
		"family":           {Namespace: "shop", Name: "www", Family: "ipv5"},
		"load_balancer_id": {Namespace: "shop", Name: "www", LoadBalancerID: "i-123"},
		"import id":        {Namespace: "shop", Name: "www", ImportID: "lb-123"},
	} {
		_, err := AddressRoot(a, testConfig())
		var ie *lbmodel.InputError
		if !errors.As(err, &ie) || ie.Field != field {
			t.Errorf("%s: err %v, want an lbmodel.InputError on it", field, err)
		}
	}
	if _, err := AddressRoot(ok, testConfig()); err != nil {
		t.Fatal(err)
	}
}

// A move is one input: the module of the same address held by another
// load balancer differs in load_balancer_id (and the heading) only.
func TestAddressMoveIsOneInput(t *testing.T) {
	blue, err := AddressRoot(lbmodel.Address{Namespace: "shop", Name: "www", LoadBalancerID: "lb-blue1"}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	green, err := AddressRoot(lbmodel.Address{Namespace: "shop", Name: "www", LoadBalancerID: "lb-green1"}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	a, b := strings.Split(string(blue.Files[MainFile]), "\n"), strings.Split(string(green.Files[MainFile]), "\n")
	if len(a) != len(b) {
		t.Fatalf("line counts differ: %d, %d", len(a), len(b))
	}
	var changed []string
	for i := range a {
		if a[i] != b[i] {
			changed = append(changed, strings.TrimSpace(b[i]))
		}
	}
	if len(changed) != 2 || !strings.HasPrefix(changed[0], "# It is held by load balancer lb-green1") || changed[1] != `load_balancer_id = "lb-green1"` {
		t.Errorf("lines changed by a move: %q", changed)
	}
}

// The reserved name is stable per Service, distinct from its load
// balancer's and across clusters, and a valid cloud name.
func TestReservedAddressName(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "3f9a"}}
	n := ReservedAddressName(svc, "prod")
	if n != ReservedAddressName(svc, "prod") || n == ReservedAddressName(svc, "stage") || n == LoadBalancerName(svc, "prod") {
		t.Errorf("name %s is not stable and distinct", n)
	}
	if len(n) != 32 || (lbmodel.Address{Namespace: "shop", Name: n}).Validate() != nil {
		t.Errorf("name %s: not 32 characters of a valid name", n)
	}
}
