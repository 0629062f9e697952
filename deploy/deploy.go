// Package deploy holds the Kustomize base that installs the CCM
// (deploy/base, see deploy/README.md), its optional components
// (deploy/components) and the Helm chart of the same objects (deploy/chart),
// and lets Go code, such as the e2e test, render, decode and apply them
// without kubectl.
package deploy

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Names the base fixes; the cloud config, the RBAC subjects and the
// Deployment's flags refer to them.
const (
	// Namespace is the controller's own namespace.
	Namespace = "example-ccm"
	// ServiceAccount is the controller's identity, in Namespace.
	ServiceAccount = "cloud-controller-manager"
	// LeaderElectionNamespace and LeaderElectionLease name the pre-created
	// Lease the controller may get and update (nothing else in kube-system).
	LeaderElectionNamespace = "kube-system"
	LeaderElectionLease     = "cloud-controller-manager"
	// ReviewersGroup is bound to the reviewer roles.
	ReviewersGroup = "example-ccm:reviewers"
)

// Optional components (deploy/components/<name>).
const (
	// ServiceAuthor verifies the review.example.com/author annotation of
	// LoadBalancer Services.
	ServiceAuthor = "service-author"
	// ReferenceGrants is Gateway API's ReferenceGrant CRD, unchanged, for
	// clusters without Gateway API: how a namespace consents to Services
	// of another joining its load balancer groups.
	ReferenceGrants = "reference-grants"
)

//go:embed base/*.yaml components/*/*.yaml
var files embed.FS

// scheme is client-go's plus the CRD types.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}()

// Kustomization is the part of a kustomization.yaml this package reads.
type Kustomization struct {
	Kind      string   `json:"kind"`
	Resources []string `json:"resources"`
}

// ReadKustomization parses base/kustomization.yaml.
func ReadKustomization() (*Kustomization, error) {
	return readKustomization("base")
}

func readKustomization(dir string) (*Kustomization, error) {
	data, err := files.ReadFile(path.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	return &k, nil
}

// Objects decodes every object of the base, in kustomization order. Unknown
// fields are errors: a typo must not silently drop a setting.
func Objects() ([]runtime.Object, error) {
	return objectsOf("base")
}

// Component decodes the objects of an optional component, such as
// ServiceAuthor, to apply after the base.
func Component(name string) ([]runtime.Object, error) {
	dir := path.Join("components", name)
	k, err := readKustomization(dir)
	if err != nil {
		return nil, fmt.Errorf("component %q: %w", name, err)
	}
	if k.Kind != "Component" {
		return nil, fmt.Errorf("component %q: kustomization kind is %q, want Component", name, k.Kind)
	}
	return objectsOf(dir)
}

// WithComponents decodes the objects of the base followed by those of
// the named components, as applied in that order.
func WithComponents(names ...string) ([]runtime.Object, error) {
	objs, err := Objects()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		c, err := Component(name)
		if err != nil {
			return nil, err
		}
		objs = append(objs, c...)
	}
	return objs, nil
}

func objectsOf(dir string) ([]runtime.Object, error) {
	k, err := readKustomization(dir)
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, file := range k.Resources {
		data, err := files.ReadFile(path.Join(dir, file))
		if err != nil {
			return nil, err
		}
		o, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, file, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// RBACObjects is everything the controller needs except its Deployment and
// the objects a cluster edits (cloud config, credentials): the Namespace,
// the ServiceAccount, roles and bindings (the reviewers' too), the
// leader-election Lease, the CRDs and the identity admission policy. The
// e2e runs the CCM with exactly these.
func RBACObjects() ([]runtime.Object, error) {
	all, err := Objects()
	if err != nil {
		return nil, err
	}
	return RBACOf(all), nil
}

// RBACOf keeps the objects RBACObjects returns, in order: of the base, or
// of the chart's rendering (ChartObjects).
func RBACOf(all []runtime.Object) []runtime.Object {
	var objs []runtime.Object
	for _, o := range all {
		switch o.(type) {
		case *corev1.Namespace, *corev1.ServiceAccount,
			*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding,
			*coordinationv1.Lease, *apiextensionsv1.CustomResourceDefinition,
			*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding:
			objs = append(objs, o)
		}
	}
	return objs
}

// Decode decodes a (multi-document) YAML file strictly with client-go's
// scheme and the CRD types; cert-manager's objects, as unstructured.
func Decode(data []byte) ([]runtime.Object, error) {
	codec := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme,
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
		if u, err := foreign(doc); u != nil || err != nil {
			if err != nil {
				return nil, err
			}
			objs = append(objs, u)
			continue
		}
		o, _, err := codec.Decode(doc, nil, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

// foreignGroups are API groups outside the scheme whose objects the chart
// may render (webhook.certificates.mode cert-manager): decoded as
// unstructured, so not strictly.
var foreignGroups = []string{"cert-manager.io"}

// foreign decodes doc as unstructured if its kind is of a foreignGroups
// group; else it returns nil.
func foreign(doc []byte) (*unstructured.Unstructured, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	// A bad apiVersion is not ours either: the codec reports it.
	if gv, err := schema.ParseGroupVersion(tm.APIVersion); err != nil || !slices.Contains(foreignGroups, gv.Group) {
		return nil, nil
	}
	data, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return u, nil
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
