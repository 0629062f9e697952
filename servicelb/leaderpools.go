package servicelb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
)

// Sharded, the target pools are one workspace of the leader's: a Service
// of another replica uses a pool that exists, and the leader creates the
// pools that Services ask for (docs/adr/0017).

// poolWait is when a Service waiting for the leader's new pool asks again.
const poolWait = 2 * time.Second

// leadersPool is targetPool on a replica that does not lead: the pool of
// sel if it exists; else, if the Service may cause one, a retry while
// the leader creates it; else its nodes, listed in its own plan.
func (l *targetPools) leadersPool(ctx context.Context, in *annotations.Service, sel string, has bool, pol annotations.ApplyPolicy) (string, error) {
	if has {
		id, err := l.engine.TargetPoolID(ctx, sel)
		if err != nil {
			return "", fmt.Errorf("target pools: %w", err)
		}
		return id, nil
	}
	svc := in.Service
	if why := newPoolRefused(svc.Namespace, sel, pol, len(l.poolsOf(ctx, svc.Namespace)), l.cfg.LoadBalancer.TargetPools.MaxPerNamespace); why != "" {
		klog.V(2).InfoS("no new target pool: the Service lists its nodes in its own plan", "service", klog.KObj(svc), "selection", sel, "reason", why)
		return "", nil
	}
	return "", api.NewRetryError(fmt.Sprintf("target pool of node selection %q: the leader creates it", engine.PoolKey(sel)), poolWait)
}

// poolCreator queues, on the leader, the Services whose node selection may
// have no pool yet (keys of the unfiltered Service informer), and creates
// their pools: each under the pools' review, caused by the Service.
type poolCreator struct {
	*serviceQueue
	lb *targetPools
}

func newPoolCreator(l *targetPools, inf cache.SharedIndexInformer) (*poolCreator, error) {
	q, err := newServiceQueue("pool_asks", inf, l.shards.Leads, func(svc *v1.Service) (string, bool) {
		if !ours(svc) || svc.DeletionTimestamp != nil {
			return "", false
		}
		return serviceKey(svc)
	}, serviceEvents{changed: func(o, c *v1.Service) bool { return !reflect.DeepEqual(o.Annotations, c.Annotations) }})
	return &poolCreator{serviceQueue: q, lb: l}, err
}

// run creates the pools asked for until ctx ends.
func (p *poolCreator) run(ctx context.Context) {
	work(ctx, p.queue, "Cannot create the target pool a Service asks for; retrying", p.create)
}

func (p *poolCreator) create(ctx context.Context, key string) error {
	obj, ok, err := p.store.GetByKey(key)
	if err != nil || !ok {
		return err
	}
	in := annotations.Read(obj.(*v1.Service))
	if _, ok, err := engine.Selection(in); err != nil || !ok {
		return nil //nolint:nilerr // the Service's own reconcile reports it
	}
	_, err = p.lb.targetPool(ctx, in, nil, p.lb.policy(in.LB))
	var waiting *api.RetryError
	if errors.As(err, &waiting) {
		return nil // awaiting approval: the pools' record says so
	}
	return err
}
