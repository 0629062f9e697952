package ccm

import (
	"context"
	"errors"
	"fmt"
	"time"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/review"
)

// GatewayParts are what the Gateway API front-end (package
// gatewaycontroller, beside this one) builds load balancers with: this
// controller's engine and review, and the target pool of every node.
type GatewayParts struct {
	Engine *engine.Engine
	Board  *review.Board
	// Pool is the id of the target pool of every node, created under the
	// pools' review when there is none; ExistingPool that id, "" when
	// there is none (what a preview reads).
	Pool, ExistingPool func(ctx context.Context) (string, error)
	// Policy is the cluster's apply policy.
	Policy annotations.ApplyPolicy
	// TLSSecret reads and checks a TLS Secret an HTTPS listener serves,
	// as a Service's are read (its key redacted from everything the
	// controller writes); the error says what is wrong, never the content.
	TLSSecret func(ctx context.Context, namespace, name string) (crt, key string, err error)
	// TLSResync is how often Secrets are read again
	// (loadBalancer.tlsSecrets.resyncInterval).
	TLSResync time.Duration
	// Approvals are how many approvals a held plan needs; PreviewBudget
	// how long a preview's plan may take (webhook.previewBudget).
	Approvals     int
	PreviewBudget time.Duration
}

// Gateways are c's parts for the Gateway API front-end; false when the
// cloud config leaves it off (gatewayAPI.enabled).
func Gateways(c cloudprovider.Interface) (GatewayParts, bool) {
	cl, ok := c.(*cloud)
	if !ok || !cl.cfg.GatewayAPI.Enabled {
		return GatewayParts{}, false
	}
	return GatewayParts{Engine: cl.engine, Board: cl.board, Pool: cl.lb.everyNodesPool,
		ExistingPool: func(ctx context.Context) (string, error) { return cl.engine.TargetPoolID(ctx, "") },
		Policy:       annotations.ApplyPolicy(cl.cfg.Terraform.ApplyPolicy), TLSSecret: cl.tls.gatewaySecret,
		TLSResync: cl.cfg.LoadBalancer.TLSSecrets.ResyncInterval.Duration, Approvals: cl.cfg.Review.Approvals.Required, PreviewBudget: cl.cfg.Webhook.PreviewBudget.Duration}, true
}

// gatewaySecret is secret for a Gateway's listener: refused, like a
// Service's TLS Secrets, with a distribution without write-only
// arguments.
func (t *tlsSecrets) gatewaySecret(ctx context.Context, namespace, name string) (crt, key string, err error) {
	if d := t.cfg.Terraform.Distribution; engine.Distribution(d) == engine.DistributionTofu {
		return "", "", fmt.Errorf("certificates from TLS Secrets need Terraform 1.11 or later (write-only arguments), and the controller runs %s (terraform.distribution)", d)
	}
	if t.client == nil {
		return "", "", errors.New("no Kubernetes client to read TLS Secrets")
	}
	return t.secret(ctx, namespace, name)
}

// errPoolsDisabled: the Gateways' backends forward to the target pool of
// every node, and the cloud config turns target pools off.
var errPoolsDisabled = errors.New("target pools are disabled (loadBalancer.targetPools.disabled): a Gateway's backends forward to the target pool of every node")

// everyNodesPool is the id of the target pool of every node, created (on
// the leader, which runs the Gateway front-end and owns the pools) under
// the pools' own review and policy when there is none. The prune keeps it
// while the Gateway API front-end is on (prunePoolsOnce).
func (l *loadBalancers) everyNodesPool(ctx context.Context) (string, error) {
	if l.cfg.LoadBalancer.TargetPools.Disabled {
		return "", errPoolsDisabled
	}
	subj, delays, err := l.poolsReview(ctx)
	if err != nil {
		return "", err
	}
	var id string
	out, err := l.board.Run(ctx, &subj, annotations.ApplyPolicy(l.cfg.LoadBalancer.TargetPools.ApplyPolicy), func(rv engine.Review) (out *engine.Outcome, err error) {
		id, out, err = l.engine.ReconcileTargetPools(ctx, "", l.members(l.groups.lastNodes(), delays), rv)
		return out, err
	})
	l.afterPools(ctx, subj, out, err)
	if err != nil {
		return "", fmt.Errorf("target pools: %w", err)
	}
	return id, nil
}
