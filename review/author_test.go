package review

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// TestConnectWhoAmI: once connected, the controller's own lines name it
// as the API server knows it; when the API server cannot tell, by its
// component name.
func TestConnectWhoAmI(t *testing.T) {
	for _, c := range []struct{ name, user, want string }{
		{name: "the API server tells", user: "system:serviceaccount:example-ccm:controller", want: "system:serviceaccount:example-ccm:controller"},
		{name: "it cannot tell", want: self},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
				r := &authenticationv1.SelfSubjectReview{}
				r.Status.UserInfo.Username = c.user
				return true, r, nil
			})
			b := New(testConfig(t, ""), nil)
			b.Connect(t.Context(), client, record.NewFakeRecorder(1))
			if b.self != c.want || b.store == nil || b.client != client {
				t.Errorf("self %q, store %v; want %q and a store", b.self, b.store, c.want)
			}
		})
	}
}
