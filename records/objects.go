package records

import (
	"context"
	"maps"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// obj is a ConfigMap or a Secret reduced to what the store uses, so one
// code path packs both.
type obj struct {
	name        string
	rv          string // "" for an object not created yet
	labels      map[string]string
	annotations map[string]string
	data        map[string][]byte
}

// payload is what an object's data counts against the chunk budget: keys
// and values (the apiserver counts values only).
func (o *obj) payload() int {
	n := 0
	for k, v := range o.data {
		n += len(k) + len(v)
	}
	return n
}

// kindAPI reads and writes one kind in the store's namespace. update and
// delete are conditional on obj.rv / rv. Writes that lost a race (object
// changed, created or deleted meanwhile) return Conflict errors, so
// retry.RetryOnConflict starts the read-modify-write over.
type kindAPI interface {
	get(ctx context.Context, name string) (*obj, error)
	// list reads from the apiserver's cache when cached: quick, maybe
	// stale; otherwise it is consistent, which can wait ~0.1 s for a kind
	// without recent writes.
	list(ctx context.Context, selector string, cached bool) ([]*obj, error)
	create(ctx context.Context, o *obj) (*obj, error)
	update(ctx context.Context, o *obj) (*obj, error)
	delete(ctx context.Context, name, rv string) error
}

// raced turns the errors of a write that lost a race into Conflicts.
func raced(err error, resource, name string) error {
	if apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
		return apierrors.NewConflict(schema.GroupResource{Resource: resource}, name, err)
	}
	return err
}

func listOptions(selector string, cached bool) metav1.ListOptions {
	o := metav1.ListOptions{LabelSelector: selector}
	if cached {
		o.ResourceVersion = "0"
	}
	return o
}

func deleteOptions(rv string) metav1.DeleteOptions {
	if rv == "" {
		return metav1.DeleteOptions{}
	}
	return metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}
}

// Kinds, for messages.
const (
	kindConfigMap = "ConfigMap"
	kindSecret    = "Secret"
)

// typedClient is what a kindAPI uses of client-go's typed client of one
// kind in one namespace: T is the object, L its list.
type typedClient[T, L any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// clientKind is the kindAPI of one kind E (listed as L): the client calls are
// the same for ConfigMaps and Secrets, only the conversions differ.
type clientKind[E, L any] struct {
	c        typedClient[*E, L]
	resource string // in Conflict errors, e.g. "configmaps"
	items    func(L) []E
	from     func(*E) *obj
	to       func(*obj) *E
}

func (k clientKind[E, L]) get(ctx context.Context, name string) (*obj, error) {
	o, err := k.c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return k.from(o), nil
}

func (k clientKind[E, L]) list(ctx context.Context, selector string, cached bool) ([]*obj, error) {
	l, err := k.c.List(ctx, listOptions(selector, cached))
	if err != nil {
		return nil, err
	}
	items := k.items(l)
	out := make([]*obj, len(items))
	for i := range items {
		out[i] = k.from(&items[i])
	}
	return out, nil
}

func (k clientKind[E, L]) create(ctx context.Context, o *obj) (*obj, error) {
	created, err := k.c.Create(ctx, k.to(o), metav1.CreateOptions{})
	if err != nil {
		return nil, raced(err, k.resource, o.name)
	}
	return k.from(created), nil
}

func (k clientKind[E, L]) update(ctx context.Context, o *obj) (*obj, error) {
	updated, err := k.c.Update(ctx, k.to(o), metav1.UpdateOptions{})
	if err != nil {
		return nil, raced(err, k.resource, o.name)
	}
	return k.from(updated), nil
}

func (k clientKind[E, L]) delete(ctx context.Context, name, rv string) error {
	return k.c.Delete(ctx, name, deleteOptions(rv))
}

func configMaps(c corev1client.ConfigMapInterface) kindAPI {
	return clientKind[corev1.ConfigMap, *corev1.ConfigMapList]{c: c, resource: "configmaps",
		items: func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items }, from: fromConfigMap, to: toConfigMap}
}

// A ConfigMap's data is UTF-8 text: other values (gzipped plan texts) go
// to binaryData; obj.data holds both.
func fromConfigMap(cm *corev1.ConfigMap) *obj {
	o := &obj{name: cm.Name, rv: cm.ResourceVersion, labels: cm.Labels, annotations: cm.Annotations, data: make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))}
	for k, v := range cm.Data {
		o.data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		o.data[k] = v
	}
	return o
}

func toConfigMap(o *obj) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, ResourceVersion: o.rv, Labels: o.labels, Annotations: o.annotations},
		Data:       map[string]string{},
	}
	for k, v := range o.data {
		if utf8.Valid(v) {
			cm.Data[k] = string(v)
			continue
		}
		if cm.BinaryData == nil {
			cm.BinaryData = map[string][]byte{}
		}
		cm.BinaryData[k] = v
	}
	return cm
}

func secrets(c corev1client.SecretInterface) kindAPI {
	return clientKind[corev1.Secret, *corev1.SecretList]{c: c, resource: "secrets",
		items: func(l *corev1.SecretList) []corev1.Secret { return l.Items }, from: fromSecret, to: toSecret}
}

func fromSecret(s *corev1.Secret) *obj {
	return &obj{name: s.Name, rv: s.ResourceVersion, labels: s.Labels, annotations: s.Annotations, data: maps.Clone(s.Data)}
}

func toSecret(o *obj) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: o.name, ResourceVersion: o.rv, Labels: o.labels, Annotations: o.annotations},
		Type:       corev1.SecretTypeOpaque,
		Data:       o.data,
	}
}
