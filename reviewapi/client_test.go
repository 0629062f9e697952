package reviewapi_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

func fakeClient() *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		reviewapi.PlanApprovals:   reviewapi.KindPlanApproval + "List",
		reviewapi.StateUnlocks:    reviewapi.KindStateUnlock + "List",
		reviewapi.AddressReleases: reviewapi.KindAddressRelease + "List",
	})
}

// The objects created carry the spec as given, and read back the same.
func TestCreate(t *testing.T) {
	c := fakeClient()
	svc := objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: "web", UID: "0d3c6a1e"}
	spec := reviewapi.PlanApprovalSpec{Object: svc, PlanID: "plan-0c0c0c0c0c0c", Approver: "alice", ApproverGroups: []string{"sre", "system:authenticated"}, Comment: "LGTM"}
	a, err := reviewapi.CreatePlanApproval(t.Context(), c, "example-ccm", spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Spec, spec) || a.Namespace != "example-ccm" {
		t.Errorf("CreatePlanApproval = %+v; want spec %+v in example-ccm", a, spec)
	}
	list, err := reviewapi.ListPlanApprovals(t.Context(), c, "example-ccm")
	if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0].Spec, spec) {
		t.Errorf("ListPlanApprovals = %+v, %v", list, err)
	}

	unlock := reviewapi.StateUnlockSpec{Object: svc, LockID: "9d3e2c1a", Requester: "bob"}
	u, err := reviewapi.CreateStateUnlock(t.Context(), c, "example-ccm", unlock)
	if err != nil {
		t.Fatal(err)
	}
	if u.Spec != unlock {
		t.Errorf("CreateStateUnlock = %+v; want spec %+v", u, unlock)
	}
	unlocks, err := reviewapi.ListStateUnlocks(t.Context(), c, "example-ccm")
	if err != nil || len(unlocks) != 1 || unlocks[0].Spec != unlock {
		t.Errorf("ListStateUnlocks = %+v, %v", unlocks, err)
	}

	release := reviewapi.AddressReleaseSpec{Address: objectref.Address("shop", "k8s-a-0123456789abcdef0123456789"), Requester: "carol", Comment: "DNS moved"}
	r, err := reviewapi.CreateAddressRelease(t.Context(), c, "example-ccm", release)
	if err != nil {
		t.Fatal(err)
	}
	if r.Spec != release || r.Namespace != "example-ccm" {
		t.Errorf("CreateAddressRelease = %+v; want spec %+v in example-ccm", r, release)
	}
	releases, err := reviewapi.ListAddressReleases(t.Context(), c, "example-ccm")
	if err != nil || len(releases) != 1 || releases[0].Spec != release {
		t.Errorf("ListAddressReleases = %+v, %v", releases, err)
	}
}
