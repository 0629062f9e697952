// Package referencegrants keeps the cluster's ReferenceGrants from a
// watch, and whether they can be read: the one source of consent
// (tenancy.Sources.Grants) both front-ends read, servicelb for the
// Services' references and gatewaycontroller for the Gateways' and
// routes'.
package referencegrants

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/tenancy"
)

// Watch keeps the cluster's ReferenceGrants from a watch, and whether
// they can be read: consent given or taken back takes effect at
// its watch event, and while they cannot be read nobody consents (a
// failed read refuses; it never answers from the grants read before).
//
// It is the store of a reflector (the list-watch loop of an informer)
// over the dynamic client: the reflector replaces the grants in the same
// call that ends a list, so a list after a failure makes the grants
// readable exactly when they are the list's (an informer's indexer
// catches up after the list returns: its grants from before the failure
// would briefly answer).
type Watch struct {
	// recheck bounds how long a watch stays open: the API server checks
	// the controller's permission when a watch opens, never on an open
	// one, so a permission taken away is noticed within recheck; and
	// without the ReferenceGrant API, the API is looked for again as often.
	recheck time.Duration
	// firstList bounds how long a read waits for the first list.
	firstList time.Duration
	// name names the reflector; consents what the grants consent to, in
	// the logs' words.
	name, consents string
	once           sync.Once

	mu    sync.Mutex
	state grantState
	// listed is the state the list being made gives once the reflector
	// stores it (Replace): readable, or missing.
	listed grantState
	// grants are by namespace and name.
	grants map[string]map[string]gatewayv1beta1.ReferenceGrant
	// settled is closed once the first list ended, either way.
	settled chan struct{}
	// changed is told the namespace whose grants changed, "" when they
	// all may have (readable or not); nil: nobody listens.
	changed func(namespace string)
}

type grantState int

const (
	grantsPending    grantState = iota // not listed yet
	grantsReadable                     // listed, and watched since
	grantsMissing                      // no ReferenceGrant API here: nobody consents
	grantsUnreadable                   // the last list or watch failed
)

func (s grantState) String() string {
	return [...]string{"pending", "readable", "missing", "unreadable"}[s]
}

// Options are a watch's.
type Options struct {
	// Name names its reflector; Consents says in the logs what the grants
	// consent to.
	Name, Consents string
	// FirstList bounds how long a read before the first list waits for
	// it (0: it refuses at once).
	FirstList time.Duration
	// Recheck bounds how long a watch stays open (Watch.recheck); 10 s
	// when 0.
	Recheck time.Duration
}

// New is a watch of the grants, not started (Start).
func New(o Options) *Watch {
	return &Watch{recheck: cmp.Or(o.Recheck, 10*time.Second), firstList: o.FirstList, name: o.Name, consents: o.Consents,
		settled: make(chan struct{}), grants: map[string]map[string]gatewayv1beta1.ReferenceGrant{}}
}

// Start watches the grants from src until ctx ends (once).
func (w *Watch) Start(ctx context.Context, src Source) {
	w.once.Do(func() {
		// A list is a list: readability flips with what it returns, so the
		// reflector must not stream its lists as watches (client-go's
		// WatchListClient, on by default since 1.35).
		r := cache.NewReflectorWithOptions(listOnly{w.ListWatch(src)}, src.Object, w,
			cache.ReflectorOptions{Name: w.name, TypeDescription: "gateway.networking.k8s.io/v1beta1 ReferenceGrant"})
		go r.RunWithContext(ctx)
	})
}

// HasSynced: the first list ended, readable or not (a controller runs
// either way: unreadable grants refuse).
func (w *Watch) HasSynced() bool { return w.current() != grantsPending }

// listOnly is a ListWatch whose lists are lists (client-go's watchlist
// package asks).
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// OnChange sets who is told of changes: the namespace whose grants
// changed, "" when they all may have (readable or not; never at the first
// list).
func (w *Watch) OnChange(f func(namespace string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = f
}

// Read is the tenancy source: namespace's grants while readable, none
// without the API, tenancy.ErrGrantsUnreadable otherwise. Before the
// first list it waits for it (at most firstList, or ctx).
func (w *Watch) Read(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error) {
	select {
	case <-w.settled:
	default:
		t := time.NewTimer(w.firstList)
		select {
		case <-w.settled:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.state {
	case grantsReadable:
		return slices.Collect(maps.Values(w.grants[namespace])), nil
	case grantsMissing:
		return nil, nil
	default:
		return nil, fmt.Errorf("ReferenceGrants of namespace %s (%s): %w", namespace, w.state, tenancy.ErrGrantsUnreadable)
	}
}

// ListWatch lists and watches every namespace's grants from src, and
// keeps the state: a failure makes them unreadable, a list (stored) or a
// watch that opens readable again; without the API (not found) there are
// none, quietly.
func (w *Watch) ListWatch(src Source) *cache.ListWatch {
	res := src
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			list, err := res.List(ctx, opts)
			switch {
			case absent(err):
				w.mu.Lock()
				w.listed = grantsMissing
				w.mu.Unlock()
				return &unstructured.UnstructuredList{}, nil
			case err != nil:
				w.fail(err)
				return nil, fmt.Errorf("list ReferenceGrants: %w", err)
			}
			w.mu.Lock()
			w.listed = grantsReadable
			w.mu.Unlock()
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if secs := int64(w.recheck.Seconds()); opts.TimeoutSeconds == nil || *opts.TimeoutSeconds > secs {
				opts.TimeoutSeconds = &secs
			}
			wi, err := res.Watch(ctx, opts)
			switch {
			case absent(err):
				w.set(grantsMissing, nil)
				return idleWatch(w.recheck), nil // look again then, without an error to log
			case err != nil:
				w.fail(err)
				return nil, fmt.Errorf("watch ReferenceGrants: %w", err)
			}
			if w.current() == grantsMissing {
				// The API is served again: what was listed without it
				// means nothing; "expired" makes the reflector list anew.
				wi.Stop()
				return nil, apierrors.NewResourceExpired("ReferenceGrants are served again: listing them anew")
			}
			// It resumes where the grants are: readable again.
			w.set(grantsReadable, nil)
			return wi, nil
		},
	}
}

// absent: the cluster does not serve ReferenceGrants (no Gateway API).
func absent(err error) bool { return apierrors.IsNotFound(err) || meta.IsNoMatchError(err) }

func (w *Watch) fail(err error) { w.set(grantsUnreadable, err) }

func (w *Watch) current() grantState {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

// set changes the state, says so once, and tells the listener when
// readability flipped (not at the first list: every Service is
// reconciled after a start anyway).
func (w *Watch) set(s grantState, err error) {
	w.mu.Lock()
	prev := w.state
	w.state = s
	if prev == grantsPending && s != grantsPending {
		select {
		case <-w.settled:
		default:
			close(w.settled)
		}
	}
	changed := w.changed
	w.mu.Unlock()
	if prev == s {
		return
	}
	switch s {
	case grantsUnreadable:
		klog.ErrorS(err, "ReferenceGrants cannot be read: no namespace consents to "+w.consents+" until they can")
	case grantsMissing:
		klog.InfoS("ReferenceGrants are not served in this cluster (no Gateway API CRD): no namespace consents to " + w.consents)
	case grantsReadable:
		klog.InfoS("ReferenceGrants can be read: namespaces consent to "+w.consents+" by them again", "was", prev.String())
	}
	if changed != nil && prev != grantsPending {
		changed("")
	}
}

// The reflector's store: grants as they are listed and watched.

func (w *Watch) Add(obj any) error    { w.put(obj); return nil }
func (w *Watch) Update(obj any) error { w.put(obj); return nil }
func (w *Watch) Resync() error        { return nil }

func (w *Watch) Delete(obj any) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	w.mu.Lock()
	delete(w.grants[m.GetNamespace()], m.GetName())
	changed := w.changed
	w.mu.Unlock()
	if changed != nil {
		changed(m.GetNamespace())
	}
	return nil
}

func (w *Watch) put(obj any) {
	ns, name, g, ok := ToGrant(obj)
	if ns == "" {
		return
	}
	w.mu.Lock()
	if w.grants[ns] == nil {
		w.grants[ns] = map[string]gatewayv1beta1.ReferenceGrant{}
	}
	if ok {
		w.grants[ns][name] = g
	} else {
		delete(w.grants[ns], name) // unreadable: it grants nothing
	}
	changed := w.changed
	w.mu.Unlock()
	if changed != nil {
		changed(ns)
	}
}

// Replace stores a list: the grants are the list's, in the state it gave.
func (w *Watch) Replace(list []any, _ string) error {
	next := map[string]map[string]gatewayv1beta1.ReferenceGrant{}
	for _, obj := range list {
		if ns, name, g, ok := ToGrant(obj); ok {
			if next[ns] == nil {
				next[ns] = map[string]gatewayv1beta1.ReferenceGrant{}
			}
			next[ns][name] = g
		}
	}
	w.mu.Lock()
	var diff []string
	for ns := range maps.Keys(next) {
		if !reflect.DeepEqual(next[ns], w.grants[ns]) {
			diff = append(diff, ns)
		}
	}
	for ns, old := range w.grants {
		if _, kept := next[ns]; !kept && len(old) > 0 {
			diff = append(diff, ns)
		}
	}
	w.grants = next
	listed, prev := w.listed, w.state
	changed := w.changed
	w.mu.Unlock()
	w.set(listed, nil)
	if changed == nil || prev == grantsPending || prev != listed {
		return nil // set told it all
	}
	for _, ns := range diff {
		changed(ns)
	}
	return nil
}

// ToGrant is obj (an *unstructured.Unstructured or a ReferenceGrant) as
// a ReferenceGrant: ok is false when it cannot be read as one (it then
// grants nothing).
func ToGrant(obj any) (ns, name string, g gatewayv1beta1.ReferenceGrant, ok bool) {
	if t, isT := obj.(*gatewayv1beta1.ReferenceGrant); isT {
		return t.Namespace, t.Name, *t, true
	}
	u, isU := obj.(*unstructured.Unstructured)
	if !isU {
		return "", "", g, false
	}
	ns, name = u.GetNamespace(), u.GetName()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &g); err != nil {
		klog.ErrorS(err, "ReferenceGrant cannot be read; it grants nothing", "referenceGrant", klog.KRef(ns, name))
		return ns, name, g, false
	}
	return ns, name, g, true
}

// idleWatch is a watch without events that ends after d.
func idleWatch(d time.Duration) watch.Interface {
	fw := watch.NewFake()
	time.AfterFunc(d, fw.Stop)
	return fw
}
