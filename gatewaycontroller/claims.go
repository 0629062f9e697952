package gatewaycontroller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// Claims kept between looks: what each Gateway's namespaces hold (host
// names, TCP/UDP listeners; package gateway decides them) is one JSON
// document in a ConfigMap gateway-claims-<hash of namespace/name> of the
// controller's namespace (review.namespace, beside the plan records,
// where tenants cannot write). The worker looking at the Gateway (one at
// a time per Gateway) reads it once and keeps it
// in memory, writes it only when the claims change, and deletes it with
// the Gateway's load balancer. A ConfigMap it cannot read is an error to
// retry, never no claims: deciding from nothing would hand a host name to
// the first other namespace asking.

// Names of the claims ConfigMap's contents.
const (
	claimsPrefix = "gateway-claims-"
	claimsKey    = "claims.json"
	// annotationClaimsOf names the Gateway (namespace/name) for people,
	// annotationClaimsUID its uid: a Gateway deleted and created again
	// under its name starts with no claims.
	annotationClaimsOf  = "gateway.example.com/gateway"
	annotationClaimsUID = "gateway.example.com/gateway-uid"
)

// claimsName is the ConfigMap of Gateway nn's claims.
func claimsName(nn types.NamespacedName) string {
	return objectref.HashedName(claimsPrefix, 20, nn.String())
}

// claimStore keeps the claims of every Gateway. Without a client (a
// controller that builds nothing) they live in memory only; a nil one (a
// Controller not made by New) keeps none.
type claimStore struct {
	kube      kubernetes.Interface
	namespace string
	mu        sync.Mutex
	// cache is what the workers last read or wrote, by Gateway.
	cache map[types.NamespacedName]storedClaims
}

// storedClaims are a Gateway's claims as stored: the document, whether
// its ConfigMap exists and at which resourceVersion, and the Gateway's
// uid.
type storedClaims struct {
	uid     types.UID
	doc     []byte
	claims  gateway.Claims
	exists  bool
	version string
}

func newClaimStore(kube kubernetes.Interface, namespace string) *claimStore {
	if namespace == "" {
		kube = nil
	}
	return &claimStore{kube: kube, namespace: namespace, cache: map[types.NamespacedName]storedClaims{}}
}

// load is gw's claims: from memory once read, else from its ConfigMap
// (none before its first claim). keep caches what it reads: a worker
// does; a preview, which never writes, reads afresh.
func (s *claimStore) load(ctx context.Context, nn types.NamespacedName, uid types.UID, keep bool) (gateway.Claims, error) {
	if s == nil {
		return gateway.Claims{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.cache[nn]; ok && st.uid == uid {
		return st.claims, nil
	}
	st := storedClaims{uid: uid}
	if s.kube != nil {
		cm, err := s.kube.CoreV1().ConfigMaps(s.namespace).Get(ctx, claimsName(nn), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return gateway.Claims{}, fmt.Errorf("read ConfigMap %s/%s: %w", s.namespace, claimsName(nn), err)
		default:
			st.exists, st.version = true, cm.ResourceVersion
			if cm.Annotations[annotationClaimsUID] == string(uid) {
				st.doc = []byte(cm.Data[claimsKey])
				if err := json.Unmarshal(st.doc, &st.claims); err != nil {
					return gateway.Claims{}, fmt.Errorf("ConfigMap %s/%s: %s: %w", s.namespace, cm.Name, claimsKey, err)
				}
			}
		}
	}
	if keep {
		s.cache[nn] = st
	}
	return st.claims, nil
}

// save stores gw's claims c when they differ from those stored. A write
// that conflicts forgets what was read: the next look reads again.
func (s *claimStore) save(ctx context.Context, nn types.NamespacedName, uid types.UID, c gateway.Claims) error {
	if s == nil {
		return nil
	}
	doc, err := json.Marshal(c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.cache[nn]
	if !ok || cur.uid != uid {
		return fmt.Errorf("claims of Gateway %s saved before they were read", nn)
	}
	if bytes.Equal(doc, cur.doc) || cur.doc == nil && len(c.Hosts) == 0 && len(c.Listeners) == 0 {
		return nil
	}
	next := storedClaims{uid: uid, doc: doc, claims: c}
	if s.kube != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: claimsName(nn), ResourceVersion: cur.version,
			Labels:      map[string]string{records.LabelManagedBy: records.ManagedBy},
			Annotations: map[string]string{annotationClaimsOf: nn.String(), annotationClaimsUID: string(uid)}},
			Data: map[string]string{claimsKey: string(doc)}}
		api := s.kube.CoreV1().ConfigMaps(s.namespace)
		var out *corev1.ConfigMap
		if !cur.exists {
			out, err = api.Create(ctx, cm, metav1.CreateOptions{})
		} else {
			out, err = api.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			delete(s.cache, nn)
			return fmt.Errorf("write ConfigMap %s/%s: %w", s.namespace, cm.Name, err)
		}
		next.exists, next.version = true, out.ResourceVersion
	}
	s.cache[nn] = next
	return nil
}

// remove deletes Gateway nn's claims: its load balancer is gone. Unless
// always, only claims this process read are deleted: a Gateway gone, or
// of another class, that it never built costs no request at each look
// (every Gateway of its class is read at start).
func (s *claimStore) remove(ctx context.Context, nn types.NamespacedName, always bool) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, read := s.cache[nn]
	delete(s.cache, nn)
	if s.kube == nil || !read && !always {
		return nil
	}
	err := s.kube.CoreV1().ConfigMaps(s.namespace).Delete(ctx, claimsName(nn), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ConfigMap %s/%s: %w", s.namespace, claimsName(nn), err)
	}
	return nil
}

// removeOf deletes the claims of the Gateway nn of uid, gone with its
// load balancer (the sweep): the ConfigMap of a later Gateway of its name
// is left. What any Gateway of the name cached is forgotten when the
// ConfigMap goes: the next look reads afresh.
func (s *claimStore) removeOf(ctx context.Context, nn types.NamespacedName, uid types.UID) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.cache[nn]; ok && st.uid == uid {
		delete(s.cache, nn)
	}
	if s.kube == nil {
		return nil
	}
	api := s.kube.CoreV1().ConfigMaps(s.namespace)
	cm, err := api.Get(ctx, claimsName(nn), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read ConfigMap %s/%s: %w", s.namespace, claimsName(nn), err)
	case cm.Annotations[annotationClaimsUID] != string(uid):
		return nil
	}
	// Only the one read: a later Gateway's write in between is kept.
	err = api.Delete(ctx, cm.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete ConfigMap %s/%s: %w", s.namespace, cm.Name, err)
	}
	delete(s.cache, nn)
	return nil
}
