package reviewapi

import (
	"context"
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// PlanIDPattern is the form of a plan id.
var PlanIDPattern = regexp.MustCompile(`^plan-[0-9a-f]{12}$`)

// specOf reads an object's metadata and spec into m and spec.
func specOf(u *unstructured.Unstructured, m *Meta, spec any) error {
	*m = Meta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: string(u.GetUID()), Created: u.GetCreationTimestamp().Time}
	raw, ok := u.Object["spec"].(map[string]any)
	if !ok {
		return fmt.Errorf("%s %s/%s has no spec", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, spec); err != nil {
		return fmt.Errorf("%s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// PlanApprovalFrom converts an object read with the dynamic client.
func PlanApprovalFrom(u *unstructured.Unstructured) (*PlanApproval, error) {
	a := &PlanApproval{}
	return a, specOf(u, &a.Meta, &a.Spec)
}

// StateUnlockFrom converts an object read with the dynamic client.
func StateUnlockFrom(u *unstructured.Unstructured) (*StateUnlock, error) {
	s := &StateUnlock{}
	return s, specOf(u, &s.Meta, &s.Spec)
}

// AddressReleaseFrom converts an object read with the dynamic client.
func AddressReleaseFrom(u *unstructured.Unstructured) (*AddressRelease, error) {
	r := &AddressRelease{}
	return r, specOf(u, &r.Meta, &r.Spec)
}

// object builds a new object of kind with spec (a pointer: the converter
// takes no values), named generateName-<random>.
func object(kind, namespace, generateName string, spec any) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": raw}}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetGenerateName(generateName)
	return u, nil
}

// create creates an object of gvr and kind in namespace and converts it back.
func create[T any](ctx context.Context, c dynamic.Interface, gvr schema.GroupVersionResource, kind, namespace, generateName string,
	spec any, conv func(*unstructured.Unstructured) (*T, error)) (*T, error) {
	u, err := object(kind, namespace, generateName, spec)
	if err != nil {
		return nil, err
	}
	u, err = c.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return conv(u)
}

// list lists the objects of gvr in namespace; objects that do not convert
// are skipped (the CRD's schema keeps them out).
func list[T any](ctx context.Context, c dynamic.Interface, gvr schema.GroupVersionResource, namespace string,
	conv func(*unstructured.Unstructured) (*T, error)) ([]*T, error) {
	l, err := c.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*T
	for i := range l.Items {
		if v, err := conv(&l.Items[i]); err == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// CreatePlanApproval creates an approval in the controller's namespace.
func CreatePlanApproval(ctx context.Context, c dynamic.Interface, namespace string, spec PlanApprovalSpec) (*PlanApproval, error) {
	return create(ctx, c, PlanApprovals, KindPlanApproval, namespace, spec.PlanID+"-", &spec, PlanApprovalFrom)
}

// CreateStateUnlock creates an unlock request in the controller's namespace.
func CreateStateUnlock(ctx context.Context, c dynamic.Interface, namespace string, spec StateUnlockSpec) (*StateUnlock, error) {
	return create(ctx, c, StateUnlocks, KindStateUnlock, namespace, "unlock-", &spec, StateUnlockFrom)
}

// CreateAddressRelease creates a release request in the controller's
// namespace.
func CreateAddressRelease(ctx context.Context, c dynamic.Interface, namespace string, spec AddressReleaseSpec) (*AddressRelease, error) {
	return create(ctx, c, AddressReleases, KindAddressRelease, namespace, "release-", &spec, AddressReleaseFrom)
}

// ListPlanApprovals lists the approvals in namespace.
func ListPlanApprovals(ctx context.Context, c dynamic.Interface, namespace string) ([]*PlanApproval, error) {
	return list(ctx, c, PlanApprovals, namespace, PlanApprovalFrom)
}

// ListStateUnlocks lists the unlock requests in namespace.
func ListStateUnlocks(ctx context.Context, c dynamic.Interface, namespace string) ([]*StateUnlock, error) {
	return list(ctx, c, StateUnlocks, namespace, StateUnlockFrom)
}

// ListAddressReleases lists the release requests in namespace.
func ListAddressReleases(ctx context.Context, c dynamic.Interface, namespace string) ([]*AddressRelease, error) {
	return list(ctx, c, AddressReleases, namespace, AddressReleaseFrom)
}
