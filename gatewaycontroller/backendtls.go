package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/tenancy"
)

// BackendTLSPolicies (where the API server serves them) are decided by
// package gateway (DecideBackendTLS) at each look at a Gateway; each
// backend of its HTTPRoutes to a Service port a policy applies to is
// reached over TLS, or fails closed. A policy's status has an ancestor
// entry for each Gateway whose routes reach its Service, written with the
// routes' statuses. Its CA ConfigMaps are watched one by one
// (configmaps.go).

// backendTLSFeatures are the conformance features BackendTLSPolicy brings.
var backendTLSFeatures = []gatewayv1.FeatureName{"BackendTLSPolicy", "BackendTLSPolicySANValidation"}

// servesBackendTLSPolicies tells whether the API server serves
// BackendTLSPolicies: an informer of a kind it lacks would fail to list
// forever.
func servesBackendTLSPolicies(gw gwclient.Interface) (bool, error) {
	served, err := gw.Discovery().ServerResourcesForGroupVersion(gatewayv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("gateway controller: discover %s: %w", gatewayv1.GroupVersion, err)
	}
	return slices.ContainsFunc(served.APIResources, func(r metav1.APIResource) bool { return r.Name == "backendtlspolicies" }), nil
}

// watchBackendTLS sets up the policies' lister and the watch of their
// ConfigMaps, where the server serves policies; it returns the policies'
// informer's handler, or nil.
func (c *Controller) watchBackendTLS(gw gwclient.Interface, f gwinformers.SharedInformerFactory) (*handlerOf, error) {
	served, err := servesBackendTLSPolicies(gw)
	if err != nil || !served {
		return nil, err
	}
	inf := f.Gateway().V1().BackendTLSPolicies()
	c.tlsPolicies = inf.Lister()
	c.caWatch = newCAWatch(c.kube, c.configMapChanged)
	return &handlerOf{inf: inf.Informer(), on: c.policyChanged}, nil
}

// policyChanged keeps the watch of the ConfigMaps the policies name and
// queues the Gateways whose routes reach the policy's Services.
func (c *Controller) policyChanged(obj any) {
	p, ok := objectOf[*gatewayv1.BackendTLSPolicy](obj)
	if !ok {
		return
	}
	if all, err := c.tlsPolicies.List(labels.Everything()); err == nil {
		c.caWatch.keep(gateway.CAConfigMaps(all))
	}
	c.queueReaching(p.Namespace, targetServices(p))
}

// configMapChanged queues the Gateways reaching the Services of the
// policies naming ConfigMap nn.
func (c *Controller) configMapChanged(nn types.NamespacedName) {
	ps, err := c.tlsPolicies.BackendTLSPolicies(nn.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range ps {
		if slices.ContainsFunc(p.Spec.Validation.CACertificateRefs, func(r gatewayv1.LocalObjectReference) bool { return string(r.Name) == nn.Name }) {
			c.queueReaching(p.Namespace, targetServices(p))
		}
	}
}

// queueReaching queues the parents of every HTTPRoute (and GRPCRoute)
// with a backendRef to a Service of namespace ns named in services.
func (c *Controller) queueReaching(ns string, services []string) {
	routes, err := c.httpRoutes()
	if err != nil {
		return
	}
	for _, r := range routes {
		if reaches(r, ns, services) {
			c.queueParents(r.Namespace, r.Spec.ParentRefs)
		}
	}
}

// reaches tells whether a backendRef of r names a Service of ns in
// services.
func reaches(r *gatewayv1.HTTPRoute, ns string, services []string) bool {
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			bns := r.Namespace
			if b.Namespace != nil {
				bns = string(*b.Namespace)
			}
			if bns == ns && (b.Group == nil || *b.Group == "") && (b.Kind == nil || *b.Kind == "Service") &&
				slices.Contains(services, string(b.Name)) {
				return true
			}
		}
	}
	return false
}

// targetServices are the Services p's targetRefs name.
func targetServices(p *gatewayv1.BackendTLSPolicy) []string {
	var out []string
	for _, t := range p.Spec.TargetRefs {
		if t.Group == "" && t.Kind == "Service" {
			out = append(out, string(t.Name))
		}
	}
	return out
}

// decideBackendTLS decides every policy (none where the server serves
// none).
func (c *Controller) decideBackendTLS(ctx context.Context) gateway.BackendTLS {
	if c.tlsPolicies == nil {
		return gateway.DecideBackendTLS(nil, nil)
	}
	all, err := c.tlsPolicies.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Gateway controller: list BackendTLSPolicies")
	}
	return gateway.DecideBackendTLS(all, func(policy objectref.Ref, name string) (string, string) {
		return c.caCertificate(ctx, policy, name)
	})
}

// caCertificate reads the ca.crt of ConfigMap name of policy's namespace,
// after package tenancy's check (the one authorization decision): why
// not, in words that never quote the ConfigMap.
func (c *Controller) caCertificate(ctx context.Context, policy objectref.Ref, name string) (bundle, unresolved string) {
	err := c.refs.Authorize(ctx, policy, []tenancy.Reference{{Kind: tenancy.BackendTLSCACertificate, Namespace: policy.Namespace, Name: name}})
	var refused *tenancy.RefusedError
	switch {
	case errors.As(err, &refused):
		return "", refused.Error()
	case err != nil:
		return "", err.Error()
	}
	cm, err := c.caWatch.read(ctx, types.NamespacedName{Namespace: policy.Namespace, Name: name})
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Sprintf("ConfigMap %s/%s not found", policy.Namespace, name)
	case err != nil:
		return "", fmt.Sprintf("ConfigMap %s/%s cannot be read: %v", policy.Namespace, name, apierrors.ReasonForError(err))
	}
	ca, ok := cm.Data[caKey]
	if !ok {
		return "", fmt.Sprintf("ConfigMap %s/%s has no key %s", policy.Namespace, name, caKey)
	}
	return ca, ""
}

// caKey is where a ConfigMap holds the CA certificates, as the Gateway
// API says.
const caKey = "ca.crt"

// withBackendTLS is backend b of a route of kind from to Service port
// port of service (namespace ns) as the policies decide it: over TLS,
// closed (a policy that does not resolve, or a GRPCRoute's h2c, which the
// load balancer does not re-encrypt), or as it was. Each policy applying
// (or naming the port, conflicted) is noted in used with its conditions.
func withBackendTLS(tls gateway.BackendTLS, used map[types.NamespacedName]gateway.PolicyConditions, from objectref.Ref, ns, service string,
	port corev1.ServicePort, b gateway.Backend) gateway.Backend {
	if from.Kind != objectref.KindHTTPRoute && from.Kind != objectref.KindGRPCRoute {
		return b // TLS passthrough, TCP and UDP forward connections as they come
	}
	for _, p := range tls.Targeting(ns, service, port.Name) {
		used[p] = tls.Policies[p]
	}
	policy, t, ok := tls.For(ns, service, port.Name)
	if !ok {
		return b
	}
	switch {
	case t == nil:
		b.Closed = fmt.Sprintf("BackendTLSPolicy %s does not resolve", policy.Name)
	case b.Protocol != "":
		b.Closed = fmt.Sprintf("BackendTLSPolicy %s: a %s backend is reached in %s, which the Example load balancer does not re-encrypt", policy.Name, from.Kind, b.Protocol)
	default:
		b.TLS = t
	}
	return b
}

// syncBackendTLSPolicies writes Gateway nn's ancestor entry of every
// policy: the conditions t says of those its routes reach, none on the
// others (a policy reached no more, or a Gateway gone).
func (c *Controller) syncBackendTLSPolicies(ctx context.Context, nn types.NamespacedName, t gateway.Translation) error {
	if c.tlsPolicies == nil {
		return nil
	}
	all, err := c.tlsPolicies.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list BackendTLSPolicies: %w", err)
	}
	for _, p := range all {
		pn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		conds, reached := t.BackendTLSPolicies[pn]
		if reflect.DeepEqual(withAncestor(p, nn, conds, reached), p.Status) {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := c.gw.GatewayV1().BackendTLSPolicies(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return ignoreGone(err)
			}
			next := cur.DeepCopy()
			next.Status = withAncestor(cur, nn, conds, reached)
			if reflect.DeepEqual(next.Status, cur.Status) {
				return nil
			}
			_, err = c.gw.GatewayV1().BackendTLSPolicies(p.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("status of BackendTLSPolicy %s: %w", pn, err)
		}
	}
	return nil
}

// withAncestor is p's status with Gateway gw's entry (this controller's)
// set to conds, or removed when the Gateway does not reach p.
func withAncestor(p *gatewayv1.BackendTLSPolicy, gw types.NamespacedName, conds gateway.PolicyConditions, reached bool) gatewayv1.PolicyStatus {
	st := *p.Status.DeepCopy()
	i := slices.IndexFunc(st.Ancestors, func(a gatewayv1.PolicyAncestorStatus) bool {
		return a.ControllerName == ControllerName && a.AncestorRef.Name == gatewayv1.ObjectName(gw.Name) &&
			a.AncestorRef.Namespace != nil && string(*a.AncestorRef.Namespace) == gw.Namespace
	})
	if !reached {
		if i >= 0 {
			st.Ancestors = slices.Delete(st.Ancestors, i, i+1)
		}
		return st
	}
	if i < 0 {
		group, kind, ns := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway"), gatewayv1.Namespace(gw.Namespace)
		st.Ancestors = append(st.Ancestors, gatewayv1.PolicyAncestorStatus{ControllerName: ControllerName,
			AncestorRef: gatewayv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gatewayv1.ObjectName(gw.Name)}})
		i = len(st.Ancestors) - 1
	}
	set := func(typ string, r gateway.Reason, okReason string) {
		s := metav1.ConditionFalse
		if r.Reason == okReason {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Ancestors[i].Conditions, metav1.Condition{Type: typ, Status: s, Reason: r.Reason,
			Message: strings.TrimSpace(r.Message), ObservedGeneration: p.Generation})
	}
	set(string(gatewayv1.PolicyConditionAccepted), conds.Accepted, string(gatewayv1.PolicyReasonAccepted))
	set(string(gatewayv1.BackendTLSPolicyConditionResolvedRefs), conds.ResolvedRefs, string(gatewayv1.BackendTLSPolicyReasonResolvedRefs))
	return st
}

// handlerOf is an informer and what its events call.
type handlerOf struct {
	inf cache.SharedIndexInformer
	on  func(obj any)
}
