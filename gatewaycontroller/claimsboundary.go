package gatewaycontroller

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/tenancy"
)

// translate decides gw with its routes under the claims its namespaces
// hold (the store's; keep: the worker's look, which caches them). Claims
// that cannot be read are an error: nothing is decided then.
func (c *Controller) translate(ctx context.Context, gw *gatewayv1.Gateway, http []*gatewayv1.HTTPRoute, l4 []gateway.L4Route, keep bool) (gateway.Translation, error) {
	return c.translateSets(ctx, gw, http, l4, nil, keep)
}

// translateWith is translate of a preview's routes (and ListenerSets,
// when the edit is one).
func (c *Controller) translateWith(ctx context.Context, gw *gatewayv1.Gateway, routes routeSet, keep bool) (gateway.Translation, error) {
	return c.translateSets(ctx, gw, routes.http, routes.l4, routes.sets, keep)
}

// translateSets is translate with the ListenerSets override (nil: those
// stored).
func (c *Controller) translateSets(ctx context.Context, gw *gatewayv1.Gateway, http []*gatewayv1.HTTPRoute, l4 []gateway.L4Route,
	override []*gatewayv1.ListenerSet, keep bool) (gateway.Translation, error) {
	nn := types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}
	claims, err := c.claims.load(ctx, nn, gw.UID, keep)
	if err != nil {
		return gateway.Translation{}, fmt.Errorf("claims of Gateway %s: %w", nn, err)
	}
	sets, err := c.listenerSetsOf(gw)
	if err != nil {
		return gateway.Translation{}, err
	}
	if override != nil {
		sets = override
	}
	// The policies are decided once for the look, and each the routes
	// reach is noted (its status under the Gateway: backendtls.go).
	tls, used := c.decideBackendTLS(ctx), map[types.NamespacedName]gateway.PolicyConditions{}
	backends := func(from objectref.Ref, ref gatewayv1.BackendRef) (gateway.Backend, gatewayv1.RouteConditionReason, string) {
		return c.backend(from, ref, tls, used)
	}
	t := gateway.Translate(gw, http, l4, c.namespaceLabels, backends,
		gateway.Boundary{ListenerSets: sets, Claims: claims, Now: c.now(), Grace: c.grace(), Consent: c.consent(ctx)})
	t.BackendTLSPolicies = used
	return t, nil
}

// grace is how long a claim no route serves is kept.
func (c *Controller) grace() time.Duration {
	if c.cloud == nil {
		return cloudconfig.DefaultHostnameClaimGrace
	}
	return c.cloud.HostnameClaimGrace
}

// consent asks package tenancy, the one authorization check, whether a
// host name's holder lets a route of another namespace serve it (its
// ReferenceGrant); grants that cannot be read are no consent.
func (c *Controller) consent(ctx context.Context) gateway.Consent {
	return func(route gateway.RouteKey, holder, host string) bool {
		from := objectref.Ref{Kind: string(route.Kind), Namespace: route.Namespace, Name: route.Name}
		return c.refs.Authorize(ctx, from, []tenancy.Reference{{Kind: tenancy.GatewayHostname, Namespace: holder, Name: host}}) == nil
	}
}

// Event reasons of the tenant boundary on a Gateway (its owners', the
// platform team's: they may name every namespace).
const (
	reasonHostnameMoved     = "HostnameMoved"
	reasonListenerMoved     = "ListenerMoved"
	reasonUnknownOwnership  = "UnknownHostnameOwnership"
	unknownOwnershipMessage = "annotation %s: unknown value %q, taken as %s (accepted: %s, %s)"
)

// warnBoundary tells the Gateway's owners, on the Gateway, what went
// from one namespace to another at this look (each move once: the claims
// saved, the next look has none), and an ownership annotation it does
// not know (once per value).
func (c *Controller) warnBoundary(subj review.Subject, gw *gatewayv1.Gateway, t gateway.Translation) {
	for _, m := range t.Moves {
		reason := reasonHostnameMoved
		if m.Listener != "" {
			reason = reasonListenerMoved
		}
		c.cloud.Review.Eventf(subj, v1.EventTypeWarning, reason, "%s", m)
	}
	if c.ownershipSaid.tell(gw.UID, t.OwnershipUnknown) {
		c.cloud.Review.Eventf(subj, v1.EventTypeWarning, reasonUnknownOwnership, unknownOwnershipMessage, gateway.OwnershipAnnotation,
			t.OwnershipUnknown, gateway.OwnershipNamespace, gateway.OwnershipNamespace, gateway.OwnershipNone)
	}
}
