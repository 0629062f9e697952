package gatewaycontroller

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// The Gateway front-end's grants refuse while they cannot be read, as the
// Services' do: before the first list, and from a failed list or watch
// until a list is stored or a watch opens again, never answering from the
// grants read before; each flip, and each grant change, looks at every
// Gateway again. The store is driven here as its reflector drives it.
func TestGrantsRefuseWhileUnreadable(t *testing.T) {
	client := gwfake.NewSimpleClientset()
	_, err := client.GatewayV1beta1().ReferenceGrants("team-a").Create(t.Context(), &gatewayv1beta1.ReferenceGrant{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "routes-of-b"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "team-b"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Kind: "Service", Name: ptr.To(gatewayv1beta1.ObjectName("api"))}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	told := 0
	s := newGrants(func() { told++ })
	lw := s.ListWatch(referencegrants.FromClientset(client))
	refs := &tenancy.Authorizer{Sources: tenancy.Sources{Grants: s.Read}}
	backend := func() error {
		from := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: "team-b", Name: "cross"}
		return refs.Authorize(t.Context(), from, []tenancy.Reference{{Kind: tenancy.RouteBackend, Namespace: "team-a", Name: "api"}})
	}
	refusedUnread := func(what string) {
		t.Helper()
		var refused *tenancy.RefusedError
		if err := backend(); !errors.As(err, &refused) || !refused.Unread {
			t.Fatalf("%s: %v, want a refusal for grants not read", what, err)
		}
	}
	list := func() error {
		obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		items, err := meta.ExtractList(obj)
		testkit.Must(t, err)
		stored := make([]any, len(items))
		for i := range items {
			stored[i] = items[i]
		}
		return s.Replace(stored, "")
	}
	failing := func(verb string) (restore func()) {
		boom := errors.New("connection refused")
		if verb == "watch" {
			client.PrependWatchReactor("referencegrants", func(k8stesting.Action) (bool, watch.Interface, error) { return true, nil, boom })
			return func() { client.WatchReactionChain = client.WatchReactionChain[1:] }
		}
		client.PrependReactor(verb, "referencegrants", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, boom })
		return func() { client.ReactionChain = client.ReactionChain[1:] }
	}

	if s.HasSynced() {
		t.Fatal("synced before any list")
	}
	refusedUnread("before the first list")
	restore := failing("list")
	if list() == nil {
		t.Fatal("the failing list succeeded")
	}
	restore()
	if !s.HasSynced() {
		t.Fatal("not synced after the first list failed: the controller would never start")
	}
	refusedUnread("the first list failed")
	testkit.Must(t, list())
	if err := backend(); err != nil {
		t.Fatalf("listed: %v, want the grant to let the route in", err)
	}
	if told == 0 {
		t.Error("Gateways not looked at again once the grants were read")
	}

	told = 0
	restore = failing("watch")
	if _, err := lw.WatchFuncWithContext(t.Context(), metav1.ListOptions{}); err == nil {
		t.Fatal("the failing watch opened")
	}
	restore()
	refusedUnread("a watch failed: the grant read before is not trusted")
	if told == 0 {
		t.Error("Gateways not looked at again when the grants became unreadable")
	}
	w, err := lw.WatchFuncWithContext(t.Context(), metav1.ListOptions{})
	testkit.Must(t, err)
	w.Stop()
	if err := backend(); err != nil {
		t.Fatalf("the watch open again: %v, want the grant to count", err)
	}

	// A list that fails, then one without the grant (deleted meanwhile).
	restore = failing("list")
	_ = list()
	restore()
	refusedUnread("a relist failed")
	testkit.Must(t, client.GatewayV1beta1().ReferenceGrants("team-a").Delete(t.Context(), "routes-of-b", metav1.DeleteOptions{}))
	testkit.Must(t, list())
	var refused *tenancy.RefusedError
	if err := backend(); !errors.As(err, &refused) || refused.Unread {
		t.Fatalf("relisted without the grant: %v, want the plain refusal", err)
	}
}
