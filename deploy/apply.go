package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// crdEstablishTimeout bounds the wait for a CRD to be served.
const crdEstablishTimeout = 30 * time.Second

// Apply creates each object, or updates it if it exists (a full
// replacement, like kubectl replace), in order. Exceptions: a Lease is only
// created (its spec is the leader election's state), a webhook
// configuration keeps its injected CA bundles, and Apply waits for
// each CRD to be Established, so the objects of its kind can be created
// as soon as Apply returns.
func Apply(ctx context.Context, client kubernetes.Interface, objs []runtime.Object) error {
	for _, o := range objs {
		if err := apply(ctx, client, o.DeepCopyObject()); err != nil {
			if m, merr := meta.Accessor(o); merr == nil {
				if ns := m.GetNamespace(); ns != "" {
					return fmt.Errorf("apply %T %q in %q: %w", o, m.GetName(), ns, err)
				}
				return fmt.Errorf("apply %T %q: %w", o, m.GetName(), err)
			}
			return fmt.Errorf("apply %T: %w", o, err)
		}
	}
	return nil
}

func apply(ctx context.Context, c kubernetes.Interface, o runtime.Object) error {
	switch o := o.(type) {
	case *corev1.Namespace:
		return upsert(ctx, c.CoreV1().Namespaces(), o)
	case *corev1.ServiceAccount:
		return upsert(ctx, c.CoreV1().ServiceAccounts(o.Namespace), o)
	case *corev1.ConfigMap:
		return upsert(ctx, c.CoreV1().ConfigMaps(o.Namespace), o)
	case *corev1.Secret:
		return upsert(ctx, c.CoreV1().Secrets(o.Namespace), o)
	case *corev1.Service:
		// An update without clusterIP keeps the allocated one.
		return upsert(ctx, c.CoreV1().Services(o.Namespace), o)
	case *rbacv1.ClusterRole:
		return upsert(ctx, c.RbacV1().ClusterRoles(), o)
	case *rbacv1.ClusterRoleBinding:
		return upsert(ctx, c.RbacV1().ClusterRoleBindings(), o)
	case *rbacv1.Role:
		return upsert(ctx, c.RbacV1().Roles(o.Namespace), o)
	case *rbacv1.RoleBinding:
		return upsert(ctx, c.RbacV1().RoleBindings(o.Namespace), o)
	case *appsv1.Deployment:
		return upsert(ctx, c.AppsV1().Deployments(o.Namespace), o)
	case *policyv1.PodDisruptionBudget:
		return upsert(ctx, c.PolicyV1().PodDisruptionBudgets(o.Namespace), o)
	case *admissionv1.ValidatingAdmissionPolicy:
		return upsert(ctx, c.AdmissionregistrationV1().ValidatingAdmissionPolicies(), o)
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		return upsert(ctx, c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings(), o)
	case *admissionv1.MutatingWebhookConfiguration:
		client := c.AdmissionregistrationV1().MutatingWebhookConfigurations()
		if cur, err := client.Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
			keepCABundles(o.Webhooks, cur.Webhooks, func(w *admissionv1.MutatingWebhook) (string, *admissionv1.WebhookClientConfig) {
				return w.Name, &w.ClientConfig
			})
		}
		return upsert(ctx, client, o)
	case *admissionv1.ValidatingWebhookConfiguration:
		client := c.AdmissionregistrationV1().ValidatingWebhookConfigurations()
		if cur, err := client.Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
			keepCABundles(o.Webhooks, cur.Webhooks, func(w *admissionv1.ValidatingWebhook) (string, *admissionv1.WebhookClientConfig) {
				return w.Name, &w.ClientConfig
			})
		}
		return upsert(ctx, client, o)
	case *coordinationv1.Lease:
		_, err := c.CoordinationV1().Leases(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	case *apiextensionsv1.CustomResourceDefinition:
		return applyCRD(ctx, crdClient{c.CoreV1().RESTClient()}, o)
	}
	return fmt.Errorf("unsupported kind %T", o)
}

// keepCABundles keeps each webhook's injected CA bundle (the controller's
// or cert-manager's, from live) where the manifest has none, as kubectl
// apply does: a replacement must not cut the API server off the webhook.
func keepCABundles[W any](want, live []W, of func(*W) (string, *admissionv1.WebhookClientConfig)) {
	bundles := map[string][]byte{}
	for i := range live {
		name, cc := of(&live[i])
		bundles[name] = cc.CABundle
	}
	for i := range want {
		if name, cc := of(&want[i]); len(cc.CABundle) == 0 {
			cc.CABundle = bundles[name]
		}
	}
}

// typedClient is the part of a client-go typed client upsert needs.
type typedClient[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
}

func upsert[T metav1.Object](ctx context.Context, c typedClient[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.SetResourceVersion(cur.GetResourceVersion())
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
		return err
	})
}

// applyCRD upserts a CRD, then waits until it is Established.
func applyCRD(ctx context.Context, c crdClient, crd *apiextensionsv1.CustomResourceDefinition) error {
	if err := upsert(ctx, c, crd); err != nil {
		return err
	}
	var last *apiextensionsv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, crdEstablishTimeout, true,
		func(ctx context.Context) (bool, error) {
			cur, err := c.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			last = cur
			for _, cond := range cur.Status.Conditions {
				switch {
				case cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse:
					return false, fmt.Errorf("names not accepted: %s", cond.Message)
				case cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue:
					return true, nil
				}
			}
			return false, nil
		})
	if err != nil && last != nil {
		return fmt.Errorf("not established (conditions %+v): %w", last.Status.Conditions, err)
	}
	return err
}

// crdClient reaches CustomResourceDefinitions through the REST client of
// the given clientset, in JSON: client-go's clientset has no apiextensions
// client, and Apply keeps taking a kubernetes.Interface.
type crdClient struct{ rest rest.Interface }

const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func (c crdClient) Create(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, _ metav1.CreateOptions) (*apiextensionsv1.CustomResourceDefinition, error) {
	return c.do(ctx, c.rest.Post().AbsPath(crdPath), crd)
}

func (c crdClient) Update(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, _ metav1.UpdateOptions) (*apiextensionsv1.CustomResourceDefinition, error) {
	return c.do(ctx, c.rest.Put().AbsPath(crdPath, crd.Name), crd)
}

func (c crdClient) Get(ctx context.Context, name string, _ metav1.GetOptions) (*apiextensionsv1.CustomResourceDefinition, error) {
	return c.do(ctx, c.rest.Get().AbsPath(crdPath, name), nil)
}

func (c crdClient) do(ctx context.Context, req *rest.Request, in *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	if in != nil {
		in.APIVersion, in.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		body, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		req = req.SetHeader("Content-Type", "application/json").Body(body)
	}
	raw, err := req.SetHeader("Accept", "application/json").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var out apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode CustomResourceDefinition: %w", err)
	}
	return &out, nil
}
