package gatewaycontroller

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/tenancy"
)

// grantStore keeps the cluster's ReferenceGrants for the references
// routes and Gateways make, and whether they can be read: a list or watch
// that fails makes them unreadable (tenancy.ErrGrantsUnreadable: consent
// that cannot be read is no consent, never the grants read before) until
// a list is stored again or a watch resumes where they are. So do the
// Services' references (ccm's grantWatch).
//
// It is the store of a reflector (an informer's list-watch loop): the
// reflector stores a list in the call that ends it (Replace), so grants
// are readable again exactly when they are the list's (an informer's
// indexer would catch up after the list returned, its grants from before
// the failure answering meanwhile).
type grantStore struct {
	cache.Indexer
	client gwclient.Interface
	// changed is told of every change of the grants or their readability.
	changed func()

	once sync.Once

	mu       sync.Mutex
	readable bool
	// listed: the list being made succeeded (readable once stored).
	listed bool
	// settled: the first list ended, either way.
	settled bool
}

// grantsRecheck bounds how long a watch stays open: the API server checks
// the controller's permission when a watch opens, so one taken away is
// noticed within it.
const grantsRecheck = 10 * time.Second

func newGrantStore(client gwclient.Interface, changed func()) *grantStore {
	return &grantStore{Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		client: client, changed: changed}
}

// start lists and watches the grants until ctx ends (once).
func (s *grantStore) start(ctx context.Context) {
	s.once.Do(func() {
		r := cache.NewReflectorWithOptions(listOnly{s.listWatch()}, &gatewayv1beta1.ReferenceGrant{}, s,
			cache.ReflectorOptions{Name: "gateway-referencegrants", TypeDescription: "gateway.networking.k8s.io/v1beta1 ReferenceGrant"})
		go r.RunWithContext(ctx)
	})
}

// listOnly is a ListWatch whose lists are lists: readability follows
// what a list returns, so the reflector must not stream it as a watch
// (client-go's WatchListClient asks).
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// listWatch lists and watches every namespace's grants, keeping whether
// they can be read.
func (s *grantStore) listWatch() *cache.ListWatch {
	grants := s.client.GatewayV1beta1().ReferenceGrants("")
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			l, err := grants.List(ctx, opts)
			if err != nil {
				s.set(false, err)
				return nil, fmt.Errorf("list ReferenceGrants: %w", err)
			}
			s.mu.Lock()
			s.listed = true
			s.mu.Unlock()
			return l, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if secs := int64(grantsRecheck.Seconds()); opts.TimeoutSeconds == nil || *opts.TimeoutSeconds > secs {
				opts.TimeoutSeconds = &secs
			}
			w, err := grants.Watch(ctx, opts)
			if err != nil {
				s.set(false, err)
				return nil, fmt.Errorf("watch ReferenceGrants: %w", err)
			}
			s.set(true, nil) // it resumes where the grants are
			return w, nil
		},
	}
}

// set makes the grants readable or not, says so when that flips, and
// tells the listener.
func (s *grantStore) set(readable bool, err error) {
	s.mu.Lock()
	was := s.readable
	s.readable, s.settled = readable, true
	s.listed = s.listed && readable
	s.mu.Unlock()
	if was == readable {
		return
	}
	if readable {
		klog.InfoS("ReferenceGrants can be read: Gateways and routes decide consent from them again")
	} else {
		klog.ErrorS(err, "ReferenceGrants cannot be read: no namespace consents to Gateways' and routes' references until they can")
	}
	s.changed()
}

// read is the tenancy source: namespace's grants while readable,
// tenancy.ErrGrantsUnreadable before the first list and from a failed
// list or watch until one succeeds.
func (s *grantStore) read(_ context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error) {
	s.mu.Lock()
	readable := s.readable
	s.mu.Unlock()
	if !readable {
		return nil, tenancy.ErrGrantsUnreadable
	}
	objs, err := s.ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]gatewayv1beta1.ReferenceGrant, 0, len(objs))
	for _, o := range objs {
		if g, ok := o.(*gatewayv1beta1.ReferenceGrant); ok {
			out = append(out, *g)
		}
	}
	return out, nil
}

// HasSynced: the first list ended, readable or not (the controller runs
// either way: unreadable grants refuse).
func (s *grantStore) HasSynced() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

// The reflector's store calls.

func (s *grantStore) Add(obj any) error    { return s.tell(s.Indexer.Add(obj)) }
func (s *grantStore) Update(obj any) error { return s.tell(s.Indexer.Update(obj)) }
func (s *grantStore) Delete(obj any) error { return s.tell(s.Indexer.Delete(obj)) }

// Replace stores a list: the grants are the list's, readable if it
// succeeded.
func (s *grantStore) Replace(list []any, rv string) error {
	if err := s.Indexer.Replace(list, rv); err != nil {
		return err
	}
	s.mu.Lock()
	listed := s.listed
	s.mu.Unlock()
	s.set(listed, nil)
	return s.tell(nil)
}

func (s *grantStore) tell(err error) error {
	if err == nil {
		s.changed()
	}
	return err
}
