package servicelb

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// work takes q's keys through do until ctx ends (then q shuts down): a key
// whose do fails comes back after q's backoff, the error logged as what.
func work[K comparable](ctx context.Context, q workqueue.TypedRateLimitingInterface[K], what string, do func(context.Context, K) error) {
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		if err := do(ctx, key); err != nil {
			klog.ErrorS(err, what, "key", key)
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}
