package servicelb

import (
	"context"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/engine"
)

// GatewayInfra is what the Gateway API front-end (package
// gatewaycontroller, beside this one) takes of the Services' load
// balancing: the target pool of every node, where a Gateway's backends
// forward, the TLS Secrets its listeners serve, read as a Service's, and
// the reserved addresses it takes (gatewayaddresses.go).
type GatewayInfra struct {
	pools *targetPools
	tls   *TLSSecrets
	addrs *addresses
}

// Gateways is the Gateway API front-end's infrastructure.
func (l *LoadBalancers) Gateways() *GatewayInfra {
	return &GatewayInfra{pools: l.pools, tls: l.tls, addrs: l.addresses}
}

// Pool is the id of the target pool of every node, created under the
// pools' review when there is none.
func (g *GatewayInfra) Pool(ctx context.Context) (string, error) { return g.pools.everyNodesPool(ctx) }

// ExistingPool is that id, "" when there is none (what a preview reads).
func (g *GatewayInfra) ExistingPool(ctx context.Context) (string, error) {
	return g.pools.engine.TargetPoolID(ctx, "")
}

// TLSSecret reads and checks a TLS Secret an HTTPS listener serves, as a
// Service's are read (its key redacted from everything the controller
// writes); the error says what is wrong, never the content.
func (g *GatewayInfra) TLSSecret(ctx context.Context, namespace, name string) (crt, key string, err error) {
	return g.tls.gatewaySecret(ctx, namespace, name)
}

// gatewaySecret is secret for a Gateway's listener: refused, like a
// Service's TLS Secrets, with a distribution without write-only
// arguments.
func (t *TLSSecrets) gatewaySecret(ctx context.Context, namespace, name string) (crt, key string, err error) {
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
func (l *targetPools) everyNodesPool(ctx context.Context) (string, error) {
	if l.cfg.LoadBalancer.TargetPools.Disabled {
		return "", errPoolsDisabled
	}
	subj, delays, err := l.poolsReview(ctx)
	if err != nil {
		return "", err
	}
	id, err := l.reconcilePool(ctx, subj, "", l.groups.lastNodes(), delays)
	if err != nil {
		return "", fmt.Errorf("target pools: %w", err)
	}
	return id, nil
}
