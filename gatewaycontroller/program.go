package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// Engine is what the controller needs of the engine: a Gateway's load
// balancer converged or removed under a review.
type Engine interface {
	ReconcileGateway(ctx context.Context, g gateway.LoadBalancer, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error)
	RemoveGateway(ctx context.Context, g gateway.LoadBalancer, rv engine.Review) (*engine.Outcome, error)
}

// Reviewer is what the controller needs of review (a *review.Board): a
// change run under review and reported, the Gateway's subject, and what
// it tells beside a change.
type Reviewer interface {
	Run(ctx context.Context, s *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error)
	GatewaySubject(gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute, kind string) review.Subject
	Failed(s review.Subject, err error)
	Removed(ctx context.Context, out *engine.Outcome)
}

var _ Reviewer = (*review.Board)(nil)

// Cloud is how the controller builds Gateways' load balancers. Without
// one (New's default) it only writes statuses.
type Cloud struct {
	Engine Engine
	Review Reviewer
	// Pool is the id of the target pool of every node, made if none is:
	// where the routes' backends forward, on their node ports.
	Pool func(ctx context.Context) (string, error)
	// Policy is the cluster's apply policy; a Gateway's
	// loadbalancer.example.com/apply-policy annotation may tighten it.
	Policy annotations.ApplyPolicy
}

// Finalizer holds a Gateway whose load balancer this controller built
// until the load balancer is destroyed.
const Finalizer = "gateway.example.com/load-balancer"

// Retry delays of a Gateway not yet programmed.
const (
	// approvalRetry: its plan waits for people; a PlanApproval does not
	// queue the Gateway, so this is how soon an approval is acted on (a
	// look while nothing changed runs no terraform).
	approvalRetry = 5 * time.Second
	// provisioningRetry: its load balancer is provisioning.
	provisioningRetry = 5 * time.Second
)

// programmed is what building a Gateway's load balancer came to, for its
// status: Programmed with the addresses, or why not.
type programmed struct {
	ok        bool
	reason    gatewayv1.GatewayConditionReason
	message   string
	addresses []gatewayv1.GatewayStatusAddress
	// pending are the listeners not built, by name.
	pending map[gatewayv1.SectionName]gateway.Reason
	// retry is when to look again (0: on the next change).
	retry time.Duration
}

// program builds gw's load balancer from t under review. Only a failure
// to talk to the API server is an error: what the cloud or the review
// says goes into the status.
func (c *Controller) program(ctx context.Context, gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute, t gateway.Translation) (programmed, error) {
	if c.cloud == nil {
		return programmed{reason: gatewayv1.GatewayReasonPending, message: "this controller builds no load balancers (no cloud)"}, nil
	}
	lb, pending, err := gateway.Program(gw, t)
	out := programmed{pending: pending}
	if err == nil && len(lb.Listeners) == 0 {
		err = errors.New("no listener to build: no accepted HTTP listener")
	}
	subj := c.cloud.Review.GatewaySubject(gw, routes, records.KindChange)
	if err != nil {
		c.cloud.Review.Failed(subj, err)
		out.reason, out.message = gatewayv1.GatewayReasonInvalid, err.Error()
		return out, nil
	}
	if err := c.addFinalizer(ctx, gw); err != nil {
		return out, err
	}
	pool, err := c.cloud.Pool(ctx)
	if err != nil {
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, fmt.Sprintf("target pool of every node: %v", err), provisioningRetry
		return out, nil
	}
	for i := range lb.Rules {
		for j := range lb.Rules[i].Backends {
			lb.Rules[i].Backends[j].TargetPoolID = pool
		}
	}
	var built *engine.LoadBalancer
	_, err = c.cloud.Review.Run(ctx, &subj, c.policy(gw), func(rv engine.Review) (out *engine.Outcome, err error) {
		built, out, err = c.cloud.Engine.ReconcileGateway(ctx, lb, rv)
		return out, err
	})
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait) && wait.Policy == annotations.ApplyPlanOnly && built != nil && built.Status == "active":
		// A plan-only plan keeps serving what exists.
	case errors.As(err, &wait), errors.As(err, &denied):
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, err.Error(), approvalRetry
		return out, nil
	case err != nil:
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonInvalid, err.Error(), provisioningRetry
		return out, nil
	case built == nil:
		out.reason, out.message = gatewayv1.GatewayReasonInvalid, "no load balancer in the applied state"
		return out, nil
	}
	switch built.Status {
	case "active":
	case "error":
		out.reason, out.message = gatewayv1.GatewayReasonInvalid, fmt.Sprintf("load balancer %s is in status error", built.ID)
		return out, nil
	default:
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, fmt.Sprintf("load balancer %s is %s", built.ID, built.Status), provisioningRetry
		return out, nil
	}
	out.ok, out.reason, out.message = true, gatewayv1.GatewayReasonProgrammed, "load balancer "+built.ID
	ip := gatewayv1.AddressType(gatewayv1.IPAddressType)
	for _, a := range []string{built.IPv4, built.IPv6} {
		if a != "" {
			out.addresses = append(out.addresses, gatewayv1.GatewayStatusAddress{Type: &ip, Value: a})
		}
	}
	return out, nil
}

// policy is the stricter of the cluster's apply policy and the
// Gateway's annotation (an unknown value is the strictest).
func (c *Controller) policy(gw *gatewayv1.Gateway) annotations.ApplyPolicy {
	p, ok := gw.Annotations[string(annotations.LBApplyPolicy)]
	if !ok {
		return c.cloud.Policy
	}
	if !slices.Contains(annotations.ApplyPolicies, p) {
		return annotations.ApplyPlanOnly
	}
	return annotations.Stricter(c.cloud.Policy, annotations.ApplyPolicy(p))
}

// remove destroys the load balancer of gw, which is leaving (deleted, or
// no longer of this controller's class), under review, then lets it go;
// false while the destroy waits.
func (c *Controller) remove(ctx context.Context, gw *gatewayv1.Gateway) (bool, error) {
	if !slices.Contains(gw.Finalizers, Finalizer) {
		return true, nil
	}
	if c.cloud != nil {
		subj := c.cloud.Review.GatewaySubject(gw, nil, records.KindDestroy)
		lb := gateway.LoadBalancer{Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)}
		out, err := c.cloud.Review.Run(ctx, &subj, c.policy(gw), func(rv engine.Review) (*engine.Outcome, error) {
			return c.cloud.Engine.RemoveGateway(ctx, lb, rv)
		})
		var wait *engine.AwaitingApprovalError
		var denied *engine.DeniedError
		switch {
		case errors.As(err, &wait), errors.As(err, &denied):
			return false, nil
		case err != nil:
			return false, err
		}
		c.cloud.Review.Removed(ctx, out)
	}
	return true, c.updateFinalizers(ctx, gw, func(fs []string) []string {
		return slices.DeleteFunc(fs, func(f string) bool { return f == Finalizer })
	})
}

// addFinalizer holds gw until its load balancer is destroyed.
func (c *Controller) addFinalizer(ctx context.Context, gw *gatewayv1.Gateway) error {
	if slices.Contains(gw.Finalizers, Finalizer) {
		return nil
	}
	return c.updateFinalizers(ctx, gw, func(fs []string) []string {
		if slices.Contains(fs, Finalizer) {
			return fs
		}
		return append(fs, Finalizer)
	})
}

// updateFinalizers writes edit's finalizers into the Gateway.
func (c *Controller) updateFinalizers(ctx context.Context, gw *gatewayv1.Gateway, edit func([]string) []string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.gw.GatewayV1().Gateways(gw.Namespace).Get(ctx, gw.Name, metav1.GetOptions{})
		if err != nil || cur.UID != gw.UID {
			return ignoreGone(err)
		}
		next := edit(slices.Clone(cur.Finalizers))
		if slices.Equal(next, cur.Finalizers) {
			return nil
		}
		cur.Finalizers = next
		_, err = c.gw.GatewayV1().Gateways(gw.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return ignoreGone(err)
	})
}

// ignoreGone is err, nil when the Gateway is gone.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
