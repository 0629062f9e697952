// Package deploy holds the Kustomize base that installs the CCM
// (deploy/base, see deploy/README.md) and lets Go code, such as the e2e
// test, decode and apply it without kubectl.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

//go:embed base/*.yaml
var base embed.FS

// Kustomization is the part of base/kustomization.yaml this package reads.
type Kustomization struct {
	Resources []string `json:"resources"`
}

// ReadKustomization parses base/kustomization.yaml.
func ReadKustomization() (*Kustomization, error) {
	data, err := base.ReadFile("base/kustomization.yaml")
	if err != nil {
		return nil, err
	}
	var k Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	return &k, nil
}

// Objects decodes every object of the base, in kustomization order. Unknown
// fields are errors: a typo must not silently drop a setting.
func Objects() ([]runtime.Object, error) {
	k, err := ReadKustomization()
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, file := range k.Resources {
		data, err := base.ReadFile(path.Join("base", file))
		if err != nil {
			return nil, err
		}
		o, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// RBACObjects are the ServiceAccount and its (Cluster)Roles and bindings.
func RBACObjects() ([]runtime.Object, error) {
	all, err := Objects()
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, o := range all {
		switch o.(type) {
		case *corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding:
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// Decode decodes a (multi-document) YAML file strictly with client-go's scheme.
func Decode(data []byte) ([]runtime.Object, error) {
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if onlyComments(doc) {
			continue
		}
		o, _, err := codec.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

// Apply creates each object, or updates it if it exists (a full
// replacement, like kubectl replace), in order.
func Apply(ctx context.Context, client kubernetes.Interface, objs []runtime.Object) error {
	for _, o := range objs {
		if err := apply(ctx, client, o.DeepCopyObject()); err != nil {
			if m, merr := meta.Accessor(o); merr == nil {
				return fmt.Errorf("apply %T %s/%s: %w", o, m.GetNamespace(), m.GetName(), err)
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
	}
	return fmt.Errorf("unsupported kind %T", o)
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

// onlyComments reports whether a YAML document holds no content.
func onlyComments(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}
