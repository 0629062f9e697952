package servicelb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// A Service of target type ip forwards to its pods, each port through a
// pod pool (docs/adr/0024-pod-targets.md). The pools are the leader's, as
// the target pools are (leaderpools.go): the leader keeps them (package
// podpools) and learns who uses them from every Service it sees, on any
// shard (podUsers); a replica that does not lead reads their ids from
// their state and waits while the leader makes a new one.

// PodPools is what a Service of target type ip needs of the pod pools:
// on the leader the *podpools.Pools it keeps (Use makes the pools new
// ports need), elsewhere podpools.Recorded (Known reads them).
type PodPools interface {
	Use(ctx context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error)
	Known(ctx context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error)
}

// PodPoolKeeper is the pools the leader keeps (a *podpools.Pools): what
// PodPools reads and makes, and Want, which says which ports a Service
// forwards to without waiting for their pools' applies.
type PodPoolKeeper interface {
	PodPools
	Want(user string, ports []lbmodel.ServicePort)
}

// podPools gives a Service of target type ip its pod pools' ids.
type podPools struct {
	// recorded reads the pools from their state, on any replica.
	recorded PodPools
	// kept are the pools this replica keeps as the leader (nil before it
	// leads, and on other replicas).
	kept atomic.Pointer[PodPoolKeeper]
}

// keeper is the leader's pools, nil elsewhere.
func (p *podPools) keeper() PodPoolKeeper {
	if k := p.kept.Load(); k != nil {
		return *k
	}
	return nil
}

// podUser is a Service's key among a pod pool's users.
func podUser(namespace, name string) string {
	return objectref.Ref{Kind: objectref.KindService, Namespace: namespace, Name: name}.Key()
}

// ids are the pod pools of ports, for in: made now on the leader (under
// the pools' review: a RetryError while a new one awaits approval), read
// elsewhere (a RetryError until the leader has made each).
func (p *podPools) ids(ctx context.Context, in *annotations.Service, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	svc := in.Service
	if k := p.keeper(); k != nil {
		ids, err := k.Use(ctx, podUser(svc.Namespace, svc.Name), ports)
		var wait *engine.AwaitingApprovalError
		var denied *engine.DeniedError
		switch {
		case errors.As(err, &wait), errors.As(err, &denied):
			return nil, api.NewRetryError(fmt.Sprintf("pod pools: %v", err), approvalRetry)
		case err != nil:
			return nil, fmt.Errorf("pod pools: %w", err)
		}
		return ids, nil
	}
	ids, missing, err := p.known(ctx, ports)
	switch {
	case err != nil:
		return nil, err
	case missing != nil:
		return nil, api.NewRetryError(fmt.Sprintf("pod pool of %s: the leader creates it", missing), poolWait)
	}
	return ids, nil
}

// known are the existing pools of ports, made by nobody: the leader's as
// it keeps them, else as their state records them; missing is a port
// without one.
func (p *podPools) known(ctx context.Context, ports []lbmodel.ServicePort) (_ map[lbmodel.ServicePort]string, missing *lbmodel.ServicePort, _ error) {
	src := p.recorded
	if k := p.keeper(); k != nil {
		src = k
	}
	if src == nil {
		return nil, nil, errors.New("pod pools: this controller keeps none")
	}
	ids, err := src.Known(ctx, ports)
	if err != nil {
		return nil, nil, fmt.Errorf("pod pools: %w", err)
	}
	for _, sp := range ports {
		if ids[sp] == "" {
			return nil, &sp, nil
		}
	}
	return ids, nil, nil
}

// podUsers tells, on the leader, the pools it keeps which Services
// forward to their pods, from the unfiltered Service informer: a Service
// of any shard, and one that stops forwarding to them (deleted, another
// target type, ports gone), whose pools then go once its load balancer
// no longer forwards to them.
type podUsers struct {
	*serviceQueue
	pools *podPools
}

func newPodUsers(p *podPools, inf cache.SharedIndexInformer, leads func() bool) (*podUsers, error) {
	q, err := newServiceQueue("pod_pool_users", inf, leads, serviceKey, serviceEvents{changed: func(o, c *v1.Service) bool {
		return !reflect.DeepEqual(o.Annotations, c.Annotations) || !reflect.DeepEqual(o.Spec, c.Spec) || (o.DeletionTimestamp == nil) != (c.DeletionTimestamp == nil)
	}, deleted: true})
	return &podUsers{serviceQueue: q, pools: p}, err
}

// run tells the pools their users until ctx ends.
func (u *podUsers) run(ctx context.Context) {
	work(ctx, u.queue, "Cannot tell the pod pools which Service uses them; retrying", u.sync)
}

// sync tells the pools which ports the Service of key forwards to now:
// none when it is gone, leaving or not of target type ip. The pools'
// worker applies those new (a Service's own reconcile on the leader may
// have already), so no apply holds up another Service's users.
func (u *podUsers) sync(_ context.Context, key string) error {
	k := u.pools.keeper()
	if k == nil {
		return nil
	}
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil //nolint:nilerr // not a key of ours: nothing to retry
	}
	var ports []lbmodel.ServicePort
	if obj, ok, err := u.store.GetByKey(key); err == nil && ok {
		if svc, _ := obj.(*v1.Service); svc != nil && ours(svc) && svc.DeletionTimestamp == nil {
			// A Service refused (its annotations, its ports) keeps what
			// it used until it is fixed: its own reconcile reports it.
			if ports, err = engine.PodPorts(annotations.Read(svc)); err != nil {
				return nil //nolint:nilerr // the Service's own reconcile reports it
			}
		}
	}
	k.Want(podUser(ns, name), ports)
	return nil
}
