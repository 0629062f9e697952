package servicelb

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// serviceQueue queues, on the leader, what the Services of the unfiltered
// Service informer ask of one of the leader's keepers (the reserved
// addresses, the target pools, the pod pools): each Service's key for it,
// from its events, and from all of them when a replica becomes the
// leader (it did not look before). The keeper works the keys through
// work (queues.go).
type serviceQueue struct {
	store cache.Store
	leads func() bool
	// keyOf is what svc asks for, false when nothing.
	keyOf func(svc *v1.Service) (string, bool)
	queue workqueue.TypedRateLimitingInterface[string]
}

// serviceEvents says which events of the informer ask.
type serviceEvents struct {
	// changed tells whether an update asks: the old Service's key too
	// when old (what it let go of).
	changed func(o, c *v1.Service) bool
	old     bool
	// deleted: a Service deleted asks too.
	deleted bool
}

func newServiceQueue(name string, inf cache.SharedIndexInformer, leads func() bool, keyOf func(*v1.Service) (string, bool), ev serviceEvents) (*serviceQueue, error) {
	q := &serviceQueue{store: inf.GetStore(), leads: leads, keyOf: keyOf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name})}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: q.ask,
		UpdateFunc: func(old, cur any) {
			o, ok1 := serviceOf(old)
			c, ok2 := serviceOf(cur)
			if ok1 && ok2 && ev.changed(o, c) {
				if ev.old {
					q.ask(old)
				}
				q.ask(cur)
			}
		},
	}
	if ev.deleted {
		h.DeleteFunc = q.ask
	}
	_, err := inf.AddEventHandler(h)
	return q, err
}

// ask queues what obj, a Service, asks for (on the leader).
func (q *serviceQueue) ask(obj any) {
	svc, ok := serviceOf(obj)
	if !ok || !q.leads() {
		return
	}
	if key, ok := q.keyOf(svc); ok {
		q.queue.Add(key)
	}
}

// askAll queues what every Service asks for.
func (q *serviceQueue) askAll() {
	for _, obj := range q.store.List() {
		q.ask(obj)
	}
}

// serviceKey is svc's namespace/name: what a Service asks for when it
// asks for itself.
func serviceKey(svc *v1.Service) (string, bool) {
	key, err := cache.MetaNamespaceKeyFunc(svc)
	return key, err == nil
}
