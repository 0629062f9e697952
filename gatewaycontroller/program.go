package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/tenancy"
)

// Engine is what the controller needs of the engine: a Gateway's load
// balancer converged or removed under a review, and its routes' rule
// sets (rulesets.go).
type Engine interface {
	ReconcileGateway(ctx context.Context, g gateway.LoadBalancer, keys map[string]string, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error)
	RemoveGateway(ctx context.Context, g gateway.LoadBalancer, rv engine.Review) (*engine.Outcome, error)
	PreviewGateway(ctx context.Context, g gateway.LoadBalancer, keys map[string]string, obj engine.PolicyObject, editor string) (*engine.Speculation, []engine.Verdict, error)
	// GetGatewayLoadBalancer is the load balancer as last applied,
	// without a plan (exists false: none).
	GetGatewayLoadBalancer(ctx context.Context, g gateway.LoadBalancer) (lb *engine.LoadBalancer, exists bool, err error)
	ReconcileRuleSet(ctx context.Context, s lbmodel.RuleSet, rv engine.Review) (*engine.Outcome, error)
	PreviewRuleSet(ctx context.Context, s lbmodel.RuleSet, obj engine.PolicyObject, editor string) (*engine.Speculation, []engine.Verdict, error)
	DestroyRuleSet(ctx context.Context, ref objectref.Ref, rv engine.Review) (*engine.Outcome, error)
}

// Reviewer is what the controller needs of review (a *review.Board): a
// change run under review and reported, the Gateway's subject, and what
// it tells beside a change.
type Reviewer interface {
	Run(ctx context.Context, s *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error)
	GatewaySubject(gw *gatewayv1.Gateway, in review.GatewayInputs, kind string) review.Subject
	// RuleSetSubject is the review of a route's rule set on gw's load
	// balancer (rulesets.go).
	RuleSetSubject(gw *gatewayv1.Gateway, in review.GatewayInputs, ref objectref.Ref, kind string) review.Subject
	// GatewayAddressSubject is the review of reserved address ns/name
	// that gw takes or lets go of (addresses.go).
	GatewayAddressSubject(gw *gatewayv1.Gateway, ns, name, kind string) review.Subject
	Failed(s review.Subject, err error)
	Eventf(s review.Subject, typ, reason, format string, args ...any)
	Removed(ctx context.Context, out *engine.Outcome)
	// Records lists every plan record: what a controller that starts
	// reads of the Gateways planned before it (sweep.go).
	Records(ctx context.Context) ([]*records.Record, error)
}

var _ Reviewer = (*review.Board)(nil)

// Infra is what Gateways are built on beside the engine: the target
// pool of every node and the TLS Secrets their listeners serve.
type Infra interface {
	// Pool is the id of the target pool of every node, made if none is:
	// where the routes' backends forward, on their node ports.
	Pool(ctx context.Context) (string, error)
	// ExistingPool is that id without making it ("" when there is
	// none): what a preview reads.
	ExistingPool(ctx context.Context) (string, error)
	// TLSSecret reads and checks a TLS Secret (its certificate chain and
	// private key); the error says what is wrong with it.
	TLSSecret(ctx context.Context, namespace, name string) (crt, key string, err error)
}

// PodPools is what Gateways need of the pod pools (package podpools):
// the pool of each Service port their rules forward to directly.
type PodPools interface {
	// Use says that user forwards to ports now, and to no other, and
	// returns each one's pool id, applied under the pools' review when
	// new.
	Use(ctx context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error)
	// Known are the ids of those of ports whose pools exist, making
	// none (a preview's).
	Known(ctx context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error)
}

// Settings are the cloud config's words for Gateways.
type Settings struct {
	// PodTargets: the rules forward to the backends' pods directly
	// (gatewayAPI.targetType ip), else to their node ports.
	PodTargets bool
	// Policy is the cluster's apply policy; a Gateway's
	// loadbalancer.example.com/apply-policy annotation may tighten it.
	Policy annotations.ApplyPolicy
	// TLSResync is how often a Gateway serving TLS Secrets is looked at
	// again: Secrets are not watched, so this is how a renewed
	// certificate reaches the cloud.
	TLSResync time.Duration
	// Approvals are how many approvals a held plan needs, and
	// PreviewBudget how long a preview's plan may take (0: as long as the
	// request): what previews say and allow.
	Approvals     int
	PreviewBudget time.Duration
	// ClaimsNamespace holds each Gateway's claims (claims.go): the
	// controller's own (review.namespace). HostnameClaimGrace is how long
	// a claim no route serves is kept (gatewayAPI.hostnameClaimGrace).
	ClaimsNamespace    string
	HostnameClaimGrace time.Duration
}

// SettingsOf are cfg's settings for Gateways.
func SettingsOf(cfg *cloudconfig.Config) Settings {
	grace := cloudconfig.DefaultHostnameClaimGrace
	if g := cfg.GatewayAPI.HostnameClaimGrace; g != nil {
		grace = g.Duration
	}
	return Settings{Policy: annotations.ApplyPolicy(cfg.Terraform.ApplyPolicy), TLSResync: cfg.LoadBalancer.TLSSecrets.ResyncInterval.Duration,
		Approvals: cfg.Review.Approvals.Required, PreviewBudget: cfg.Webhook.PreviewBudget.Duration,
		ClaimsNamespace: cfg.Review.Namespace, HostnameClaimGrace: grace, PodTargets: cfg.GatewayAPI.TargetType == cloudconfig.TargetTypeIP}
}

// Cloud is how the controller builds Gateways' load balancers. Without
// one (New's default) it only writes statuses.
type Cloud struct {
	Engine Engine
	Review Reviewer
	Infra  Infra
	// Pods are the pod pools, with Settings.PodTargets.
	Pods PodPools
	// Addresses are the reserved addresses Gateways take (nil: none).
	Addresses Addresses
	Settings
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
// status: Programmed with the addresses, or why not (with the addresses
// last applied).
type programmed struct {
	ok        bool
	reason    gatewayv1.GatewayConditionReason
	message   string
	addresses []gatewayv1.GatewayStatusAddress
	// pending are the listeners not built, by name.
	pending map[gatewayv1.SectionName]gateway.Reason
	// unresolved are the listeners whose certificateRefs do not resolve,
	// by name, with their ResolvedRefs reason.
	unresolved map[gatewayv1.SectionName]gateway.Reason
	// readsSecrets: an HTTPS listener names TLS Secrets, which are read
	// again every Cloud.TLSResync (renewed, or mended).
	readsSecrets bool
	// retry is when to look again (0: on the next change).
	retry time.Duration
	// rules is what the routes are told of their rules (rulestatus.go).
	rules ruleStates
}

// program builds gw's load balancer from t under review. Only a failure
// to talk to the API server is an error: what the cloud or the review
// says goes into the status.
func (c *Controller) program(ctx context.Context, gw *gatewayv1.Gateway, routes []objectref.Ref, t gateway.Translation) (programmed, error) {
	if c.cloud == nil {
		return programmed{reason: gatewayv1.GatewayReasonPending, message: "this controller builds no load balancers (no cloud)"}, nil
	}
	certs, pems, keys := c.certificates(ctx, gw)
	c.setCertificates(ctx, gw, t, certs, pems, keys)
	lb, pending, unreachable := gateway.Program(gw, t, certs)
	// Until an apply says otherwise, the addresses are those last
	// applied: a change waiting for approval leaves the load balancer
	// serving what it served.
	out := programmed{pending: pending, unresolved: map[gatewayv1.SectionName]gateway.Reason{}, addresses: gw.Status.Addresses}
	for name, lc := range certs {
		if lc.Unresolved != nil {
			out.unresolved[name] = *lc.Unresolved
		}
	}
	withCertificates(&lb, pems)
	out.readsSecrets = len(certs) > 0
	in, err := c.inputs(gw, routes, lb)
	in.Secrets = setSecrets(in.Secrets, t)
	if err != nil {
		return out, err
	}
	subj := c.cloud.Review.GatewaySubject(gw, in, records.KindChange)
	c.warnBoundary(subj, gw, t)
	if u := strings.Join(unreachable, ", "); c.unreachable.tell(gw.UID, u) { // once per change, not per look
		c.cloud.Review.Eventf(subj, v1.EventTypeWarning, "BackendUnreachable",
			"%d rule(s) forward to a Service without a node port (type ClusterIP), which the Example load balancer cannot reach: it gets no requests (%s)",
			len(unreachable), u)
	}
	if len(lb.Listeners) == 0 {
		err := errors.New("no listener to build: none is accepted (HTTPS ones need certificates that resolve)")
		c.cloud.Review.Failed(subj, err)
		out.reason, out.message = gatewayv1.GatewayReasonInvalid, err.Error()
		return out, nil
	}
	reason, msg, keep, err := c.addressProblem(ctx, gw, t.Addresses)
	if err != nil {
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, err.Error(), provisioningRetry
		return out, nil
	}
	if reason != "" {
		// Nothing is built; a load balancer built before lets go of what
		// the Gateway may no longer hold (another namespace's address
		// whose grant was withdrawn, one it no longer names).
		out.reason, out.message, out.retry = reason, msg, addressRetry
		if slices.Contains(gw.Finalizers, Finalizer) {
			var held programmed
			if c.holdAddresses(ctx, gw, "", "", "", "", keep, &held); held.message != "" {
				klog.InfoS("Gateway not programmed: a reserved address it may not hold is not let go of yet", "gateway", klog.KObj(gw), "reason", held.message)
			}
		}
		return out, nil
	}
	if err := c.addFinalizer(ctx, gw); err != nil {
		return out, err
	}
	ids, err := c.podPoolIDs(ctx, gw, lb.PodPorts())
	if err != nil {
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, "pod pools: "+err.Error(), provisioningRetry
		return out, nil
	}
	// The routes' rules go to their rule sets (rulesets.go), applied
	// after the load balancer: its fences and catch-alls are in place
	// before any route's new rules take requests.
	// A route's rules the load balancer holds stay there until its set is
	// applied (moves.go).
	sets := splitRuleSets(&lb)
	h, err := c.heldRules(ctx, gw, lb)
	if err != nil {
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, err.Error(), provisioningRetry
		return out, nil
	}
	kept, moving := c.ruleSets.keep(&lb, sets, h)
	// A set whose pod pool is not applied yet waits alone (pools.go).
	held, msg, err := c.resolvePools(ctx, gw, &lb, sets, kept, ids)
	if err != nil {
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, msg+": "+err.Error(), provisioningRetry
		return out, nil
	}
	var built *engine.LoadBalancer
	pol := c.policy(gw)
	c.planned.plan(gw, pol) // its workspace is swept if it goes without the finalizer
	_, err = c.cloud.Review.Run(ctx, &subj, pol, func(rv engine.Review) (out *engine.Outcome, err error) {
		built, out, err = c.cloud.Engine.ReconcileGateway(ctx, lb, usedKeys(lb, keys), rv)
		return out, err
	})
	if err == nil && built != nil {
		c.ruleSets.hold(gw.UID, heldBy(built))
	}
	if built != nil && built.ID != "" && (err == nil || isWaiting(err)) {
		probs := c.syncRuleSets(ctx, gw, in, pol, built.ID, sets, kept, moving, held)
		out.setsPending(probs)
		out.movesPending(probs)
		out.rules = ruleStates{synced: true, by: probs.told}
	}
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
	var take string
	if len(t.Addresses.Refs) > 0 {
		take = t.Addresses.Refs[0] // the one: more is addressProblem's
	}
	addresses := c.holdAddresses(ctx, gw, built.ID, built.IPv4, built.IPv6, take, keep, &out)
	if addresses == nil {
		return out, nil
	}
	out.ok, out.reason, out.message, out.addresses = true, gatewayv1.GatewayReasonProgrammed, "load balancer "+built.ID, addresses
	return out, nil
}

// certificates resolves the certificateRefs of gw's HTTPS listeners: each
// a TLS Secret of the Gateway's namespace, or of one whose ReferenceGrant
// lets the Gateway in (package tenancy, the one authorization check). It
// returns what each listener resolved to, and the certificate chains and
// private keys by key ("namespace/name" of the Secret).
func (c *Controller) certificates(ctx context.Context, gw *gatewayv1.Gateway) (certs gateway.Certificates, pems, keys map[string]string) {
	certs, pems, keys = gateway.Certificates{}, map[string]string{}, map[string]string{}
	from := objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID))
	for _, l := range gw.Spec.Listeners {
		if l.Protocol != gatewayv1.HTTPSProtocolType || l.TLS == nil {
			continue
		}
		certs[l.Name] = c.listenerCertificates(ctx, from, l, pems, keys)
	}
	return certs, pems, keys
}

// listenerCertificates resolves the certificateRefs of HTTPS listener l
// of from (a Gateway, or a ListenerSet): each a TLS Secret of from's
// namespace, or of one whose ReferenceGrant lets from's kind in; the
// chains and keys read go into pems and keys.
func (c *Controller) listenerCertificates(ctx context.Context, from objectref.Ref, l gatewayv1.Listener, pems, keys map[string]string) gateway.ListenerCertificates {
	var lc gateway.ListenerCertificates
	unresolved := func(reason gatewayv1.ListenerConditionReason, format string, args ...any) {
		if lc.Unresolved == nil {
			lc.Unresolved = &gateway.Reason{Reason: string(reason), Message: fmt.Sprintf(format, args...)}
		}
	}
	for _, ref := range l.TLS.CertificateRefs {
		ns := from.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Secret") {
			unresolved(gatewayv1.ListenerReasonInvalidCertificateRef, "certificateRef %s: only Secrets are supported", ref.Name)
			continue
		}
		err := c.refs.Authorize(ctx, from, []tenancy.Reference{{Kind: tenancy.GatewayCertificate, Namespace: ns, Name: string(ref.Name)}})
		var refused *tenancy.RefusedError
		switch {
		case errors.As(err, &refused):
			unresolved(gatewayv1.ListenerReasonRefNotPermitted, "%s", refused.Error())
			continue
		case err != nil:
			unresolved(gatewayv1.ListenerReasonRefNotPermitted, "%v", err)
			continue
		}
		key := ns + "/" + string(ref.Name)
		if _, done := pems[key]; !done {
			crt, pk, err := c.cloud.Infra.TLSSecret(ctx, ns, string(ref.Name))
			if err != nil {
				unresolved(gatewayv1.ListenerReasonInvalidCertificateRef, "Secret %s: %v", key, err)
				continue
			}
			pems[key], keys[key] = crt, pk
		}
		lc.Keys = append(lc.Keys, key)
	}
	return lc
}

// withCertificates gives lb the certificate chains its listeners serve.
func withCertificates(lb *gateway.LoadBalancer, pems map[string]string) {
	for _, l := range lb.Listeners {
		for _, k := range l.Certificates {
			if lb.Certificates == nil {
				lb.Certificates = map[string]string{}
			}
			lb.Certificates[k] = pems[k]
		}
	}
}

// usedKeys are the private keys of the certificates lb serves.
func usedKeys(lb gateway.LoadBalancer, keys map[string]string) map[string]string {
	out := map[string]string{}
	for k := range lb.Certificates {
		out[k] = keys[k]
	}
	return out
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
// false while the destroy waits. A Gateway without the finalizer is let
// go at once unless this controller planned it (whoever may update it
// removed the finalizer): its load balancer is destroyed all the same.
func (c *Controller) remove(ctx context.Context, gw *gatewayv1.Gateway) (bool, error) {
	c.unreachable.forget(gw.UID)
	c.ownershipSaid.forget(gw.UID)
	nn := nameOf(gw)
	if !slices.Contains(gw.Finalizers, Finalizer) && !c.planned.has(gw) {
		return true, c.claims.remove(ctx, nn, false)
	}
	if c.cloud != nil {
		if gone, err := c.destroy(ctx, gw); !gone || err != nil {
			return false, err
		}
	}
	// The claims go with the load balancer that served them.
	if err := c.claims.remove(ctx, nn, true); err != nil {
		return false, err
	}
	return true, c.updateFinalizers(ctx, gw, func(fs []string) []string {
		return slices.DeleteFunc(fs, func(f string) bool { return f == Finalizer })
	})
}

// destroy destroys gw's load balancer under review and tells whether it
// is gone (false while the destroy waits for approval or is denied). Its
// policy is the stricter of gw's and the one its last plan was reviewed
// under: an annotation taken off, or gone with its Gateway, does not
// loosen the review of the destroy.
func (c *Controller) destroy(ctx context.Context, gw *gatewayv1.Gateway) (bool, error) {
	pol := c.policy(gw)
	if p, ok := c.planned.get(nameOf(gw)); ok && p.uid == gw.UID {
		pol = annotations.Stricter(pol, p.policy)
	}
	// The cloud keeps a load balancer while it has rule sets.
	if gone, err := c.destroyRuleSets(ctx, gw, pol); !gone || err != nil {
		return false, err
	}
	subj := c.cloud.Review.GatewaySubject(gw, review.GatewayInputs{}, records.KindDestroy)
	lb := gateway.LoadBalancer{Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)}
	out, err := c.cloud.Review.Run(ctx, &subj, pol, func(rv engine.Review) (*engine.Outcome, error) {
		return c.cloud.Engine.RemoveGateway(ctx, lb, rv)
	})
	switch {
	case isWaiting(err):
		return false, nil
	case errors.Is(err, engine.ErrGone): // this process destroyed it already
	case err != nil:
		return false, err
	default:
		c.cloud.Review.Removed(ctx, out)
	}
	c.planned.forget(nameOf(gw), gw.UID)
	c.ruleSets.unhold(gw.UID)
	if c.cloud.PodTargets && c.cloud.Pods != nil {
		// Its pod pools go with it (once nothing else forwards to them).
		if _, err := c.cloud.Pods.Use(ctx, objectref.Gateway(gw.Namespace, gw.Name, "").Key(), nil); err != nil {
			return true, err
		}
	}
	return true, nil
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
