package servicelb

import (
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// shared is what every part of the Service load balancing reads: the
// cloud config, the review, the Kubernetes client, the groups and their
// members, the tenant boundary's references, the shards, and the node
// lifecycle with what the load balancers ask of their pools.
type shared struct {
	cfg   *cloudconfig.Config
	board Reviewer
	// client reads and patches Services (nil until UseClients).
	client kubernetes.Interface
	// groups are the load balancer groups (shared load balancers).
	groups *groups
	// refs decides the references a Service makes outside itself.
	refs *references
	// shards: nil unless sharded (every Service is this replica's).
	shards *Shards
	// lifecycle decides which nodes the target pools forward to.
	lifecycle *nodeLifecycle
	// servicesSynced tells whether the Service informer has synced (nil
	// until SetInformers).
	servicesSynced func() bool
	// released are the Services (by uid) whose own load balancer is known
	// gone since they joined a group.
	released sync.Map
}

// policy is the stricter of the cluster's and the Service's apply policy.
func (l *shared) policy(ann annotations.LoadBalancer) annotations.ApplyPolicy {
	return annotations.Stricter(annotations.ApplyPolicy(l.cfg.Terraform.ApplyPolicy), ann.ApplyPolicy)
}

// served is the status a reconcile's outcome gives the Service: its load
// balancer's address once active; a retry while it provisions or its plan
// waits (a plan-only plan keeps serving what exists).
func (l *shared) served(subj review.Subject, in *annotations.Service, sharing []*v1.Service, lb *engine.LoadBalancer, err error) (*v1.LoadBalancerStatus, error) {
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait), errors.As(err, &denied):
		if lb != nil && lb.Status == "active" && wait != nil && wait.Policy == annotations.ApplyPlanOnly {
			return status(lb, in, sharing), nil // keep serving what exists
		}
		return nil, api.NewRetryError(err.Error(), approvalRetry)
	case err != nil:
		return nil, err
	case lb == nil:
		return nil, fmt.Errorf("%s: no load balancer in the applied state", objectref.Service(in.Service).Describe())
	}
	switch lb.Status {
	case "active":
		return status(lb, in, sharing), nil
	case "error":
		err := fmt.Errorf("load balancer %s of %s is in status error", lb.ID, objectref.Service(in.Service).Describe())
		l.board.Eventf(subj, v1.EventTypeWarning, "LoadBalancerFailed", "%v", err)
		return nil, err
	default:
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s is %s", lb.ID, lb.Status), provisioningRetry)
	}
}

// asked records what ref's load balancer, just applied (or found
// applied) for svc (its primary, for a group), asks of the pool poolID;
// forwarding to its nodes itself (no pool), it asks nothing.
func (l *shared) asked(ref objectref.Ref, in *annotations.Service, poolID string, lb *engine.LoadBalancer) {
	sel, ok, err := engine.Selection(in)
	if poolID == "" || err != nil || !ok {
		l.lifecycle.asks.forget(ref)
		return
	}
	l.lifecycle.asks.applied(ref, sel, lb.Delay)
}
