package gatewaycontroller

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// The sweep: the finalizer holds a Gateway until its load balancer is
// destroyed, but whoever may update the Gateway may remove it, and the
// Gateway then goes with its load balancer still serving its last rules.
// So the controller keeps, for each Gateway workspace, the Gateway (uid)
// it was last planned for: each one this process plans, and each one a
// plan record names (read once at start: a Gateway deleted while no
// controller ran). A Gateway of that uid gone, or replaced by another of
// its name (a new uid: the workspace is by name), has its load balancer
// destroyed under review as remove does, then its claims deleted. A uid
// match is the identity: the load balancer of a Gateway that exists is
// never swept.

// plannedGateway is what the controller knows of the Gateway a workspace
// was last planned for: its uid, the apply policy that plan was reviewed
// under, and its last state seen (nil when only its plan record tells).
type plannedGateway struct {
	uid    types.UID
	policy annotations.ApplyPolicy
	last   *gatewayv1.Gateway
}

// plannedGateways are the Gateways that have a workspace, by
// namespace/name. The worker writes them; the informer's delete handler
// gives one its last state.
type plannedGateways struct {
	mu sync.Mutex
	m  map[types.NamespacedName]plannedGateway
}

func (p *plannedGateways) get(nn types.NamespacedName) (plannedGateway, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	g, ok := p.m[nn]
	return g, ok
}

// has tells whether gw's workspace was planned for gw itself.
func (p *plannedGateways) has(gw *gatewayv1.Gateway) bool {
	g, ok := p.get(nameOf(gw))
	return ok && g.uid == gw.UID
}

// plan notes that gw is planned under policy pol.
func (p *plannedGateways) plan(gw *gatewayv1.Gateway, pol annotations.ApplyPolicy) {
	p.set(nameOf(gw), plannedGateway{uid: gw.UID, policy: pol, last: gw}, true)
}

// set keeps g for nn; unless over, only when nothing is known of nn (a
// record read late says less than what this process planned since).
func (p *plannedGateways) set(nn types.NamespacedName, g plannedGateway, over bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[types.NamespacedName]plannedGateway{}
	}
	if _, known := p.m[nn]; known && !over {
		return
	}
	p.m[nn] = g
}

// saw keeps gw, deleted, as the last state of the Gateway planned, when
// it is that one.
func (p *plannedGateways) saw(gw *gatewayv1.Gateway) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g, ok := p.m[nameOf(gw)]; ok && g.uid == gw.UID {
		g.last = gw
		p.m[nameOf(gw)] = g
	}
}

// forget drops nn's entry if it is uid's: its load balancer is gone.
func (p *plannedGateways) forget(nn types.NamespacedName, uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if g, ok := p.m[nn]; ok && g.uid == uid {
		delete(p.m, nn)
	}
}

func nameOf(gw *gatewayv1.Gateway) types.NamespacedName {
	return types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
}

// gatewayDeleted keeps a deleted Gateway's last state for the sweep (its
// labels and annotations, as policy rules and its apply policy see
// them), then queues it.
func (c *Controller) gatewayDeleted(obj any) {
	if gw, ok := objectOf[*gatewayv1.Gateway](obj); ok {
		c.planned.saw(gw)
		c.gatewayChanged(gw)
	}
}

// readRecords learns the Gateways the plan records name (planned by an
// earlier process) and queues each: one gone, or replaced, is swept. The
// start's first work item, so that no Gateway is built before the
// workspace of an earlier one of its name is known (a listing that fails
// is retried, and Gateways are built meanwhile: a replaced Gateway's
// workspace is then planned by the new one, under review, never left).
func (c *Controller) readRecords(ctx context.Context) error {
	if c.cloud == nil {
		return nil
	}
	recs, err := c.cloud.Review.Records(ctx)
	if err != nil {
		return fmt.Errorf("list the plan records: %w", err)
	}
	for _, r := range recs {
		c.ruleSets.learn(r)
		// A record without a uid cannot tell its Gateway: never swept.
		if r.Object.Kind != objectref.KindGateway || r.Object.UID == "" {
			continue
		}
		nn := types.NamespacedName{Namespace: r.Object.Namespace, Name: r.Object.Name}
		c.planned.set(nn, plannedGateway{uid: types.UID(r.Object.UID), policy: recordedPolicy(r)}, false)
		c.queue.Add(key{NamespacedName: nn})
	}
	return nil
}

// recordedPolicy is the apply policy r's last plan was reviewed under
// (an unknown value is the strictest, "" none).
func recordedPolicy(r *records.Record) annotations.ApplyPolicy {
	if r.Policy != "" && !slices.Contains(annotations.ApplyPolicies, r.Policy) {
		return annotations.ApplyPlanOnly
	}
	return annotations.ApplyPolicy(r.Policy)
}

// sweep destroys the load balancer of the Gateway nn's workspace was last
// planned for when that is not the Gateway current (its uid; "" when
// none is), and deletes its claims. It tells whether nothing of an
// earlier Gateway is left: false while the destroy waits, or while the
// API server still serves the Gateway planned (the informer is behind).
func (c *Controller) sweep(ctx context.Context, nn types.NamespacedName, current types.UID) (bool, error) {
	p, ok := c.planned.get(nn)
	if !ok || p.uid == current || c.cloud == nil {
		return true, nil
	}
	cur, err := c.gw.GatewayV1().Gateways(nn.Namespace).Get(ctx, nn.Name, metav1.GetOptions{})
	switch {
	case err == nil && cur.UID == p.uid:
		return false, nil
	case err != nil && !apierrors.IsNotFound(err):
		return false, fmt.Errorf("read Gateway %s: %w", nn, err)
	}
	gw := p.last
	if gw == nil || gw.UID != p.uid {
		gw = &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name, UID: p.uid}}
	}
	if gone, err := c.destroy(ctx, gw); !gone || err != nil {
		return false, err
	}
	klog.InfoS("Destroyed the load balancer of a Gateway gone without its finalizer", "gateway", nn, "uid", p.uid)
	c.unreachable.forget(p.uid)
	c.ownershipSaid.forget(p.uid)
	return true, c.claims.removeOf(ctx, nn, p.uid)
}

// replacing is the status of Gateway nn while the destroy of the load
// balancer of an earlier Gateway of its name waits: it is built after.
func replacing(nn types.NamespacedName) programmed {
	arg := objectref.Gateway(nn.Namespace, nn.Name, "").Arg()
	return programmed{reason: gatewayv1.GatewayReasonPending, retry: approvalRetry,
		message: "the load balancer of an earlier Gateway of this name is destroyed first, and its destroy waits for a decision (examplectl status " + arg + ")"}
}
