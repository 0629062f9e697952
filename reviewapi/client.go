package reviewapi

import (
	"context"
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// object builds a new object of kind with spec, named generateName-<random>.
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

// CreatePlanApproval creates an approval in the controller's namespace.
func CreatePlanApproval(ctx context.Context, c dynamic.Interface, namespace string, spec PlanApprovalSpec) (*PlanApproval, error) {
	u, err := object(KindPlanApproval, namespace, spec.PlanID+"-", &spec)
	if err != nil {
		return nil, err
	}
	u, err = c.Resource(PlanApprovals).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return PlanApprovalFrom(u)
}

// CreateStateUnlock creates an unlock request in the controller's namespace.
func CreateStateUnlock(ctx context.Context, c dynamic.Interface, namespace string, spec StateUnlockSpec) (*StateUnlock, error) {
	u, err := object(KindStateUnlock, namespace, "unlock-", &spec)
	if err != nil {
		return nil, err
	}
	u, err = c.Resource(StateUnlocks).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	return StateUnlockFrom(u)
}

// ListPlanApprovals lists the approvals in namespace; objects that do not
// convert are skipped (the CRD's schema keeps them out).
func ListPlanApprovals(ctx context.Context, c dynamic.Interface, namespace string) ([]*PlanApproval, error) {
	l, err := c.Resource(PlanApprovals).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*PlanApproval
	for i := range l.Items {
		if a, err := PlanApprovalFrom(&l.Items[i]); err == nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// ListStateUnlocks lists the unlock requests in namespace.
func ListStateUnlocks(ctx context.Context, c dynamic.Interface, namespace string) ([]*StateUnlock, error) {
	l, err := c.Resource(StateUnlocks).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*StateUnlock
	for i := range l.Items {
		if s, err := StateUnlockFrom(&l.Items[i]); err == nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// Matches tells whether an approval or unlock names object o: same kind,
// namespace, name and, for a Service, uid.
func (o ObjectRef) Matches(other ObjectRef) bool {
	return o.Kind == other.Kind && o.Namespace == other.Namespace && o.Name == other.Name && o.UID == other.UID
}
