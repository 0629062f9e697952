package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// What a Gateway's plan is made from, for its review, and what it is
// built on before its review.

// inputs are what lb, gw's load balancer, is made from besides gw, for
// its review: the routes naming gw, every Secret its HTTPS listeners'
// certificateRefs name (one that does not resolve changes the plan too:
// its listener is not built), and the Services lb's rules forward to.
func (c *Controller) inputs(gw *gatewayv1.Gateway, routes []objectref.Ref, lb gateway.LoadBalancer) (review.GatewayInputs, error) {
	in := review.GatewayInputs{Routes: routes}
	for _, l := range gw.Spec.Listeners {
		if l.Protocol != gatewayv1.HTTPSProtocolType || l.TLS == nil {
			continue
		}
		for _, ref := range l.TLS.CertificateRefs {
			if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Secret") {
				continue // never read
			}
			n := types.NamespacedName{Namespace: gw.Namespace, Name: string(ref.Name)}
			if ref.Namespace != nil {
				n.Namespace = string(*ref.Namespace)
			}
			if !slices.Contains(in.Secrets, n) {
				in.Secrets = append(in.Secrets, n)
			}
		}
	}
	services, err := c.forwardedTo(lb)
	in.Services = services
	in.TLSPolicies, in.ConfigMaps = c.tlsInputs(services)
	return in, err
}

// tlsInputs are the BackendTLSPolicies targeting services, each one (not
// only the one that applies: an edit may change which does), and the CA
// ConfigMaps they name.
func (c *Controller) tlsInputs(services []types.NamespacedName) (policies, configMaps []types.NamespacedName) {
	if c.tlsPolicies == nil || len(services) == 0 {
		return nil, nil
	}
	all, err := c.tlsPolicies.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "Gateway controller: list BackendTLSPolicies for a review's inputs")
	}
	slices.SortFunc(all, func(a, b *gatewayv1.BackendTLSPolicy) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for _, p := range all {
		if !slices.ContainsFunc(targetServices(p), func(s string) bool {
			return slices.Contains(services, types.NamespacedName{Namespace: p.Namespace, Name: s})
		}) {
			continue
		}
		policies = append(policies, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		for _, ref := range p.Spec.Validation.CACertificateRefs {
			n := types.NamespacedName{Namespace: p.Namespace, Name: string(ref.Name)}
			if ref.Group == "" && ref.Kind == "ConfigMap" && !slices.Contains(configMaps, n) {
				configMaps = append(configMaps, n)
			}
		}
	}
	return policies, configMaps
}

// forwardedTo are the Services whose pods or node ports lb's rules
// forward to. A node port rule names a node port, not the backendRef it
// came from: a node port is one Service's in the whole cluster, so it
// names the Service that gets the requests.
func (c *Controller) forwardedTo(lb gateway.LoadBalancer) ([]types.NamespacedName, error) {
	ports := map[int]bool{}
	var out []types.NamespacedName
	for _, r := range lb.Rules {
		for _, b := range r.Backends {
			if b.Pods != nil {
				if n := (types.NamespacedName{Namespace: b.Pods.Namespace, Name: b.Pods.Service}); !slices.Contains(out, n) {
					out = append(out, n)
				}
				continue
			}
			ports[b.Port] = true
		}
	}
	if len(ports) > 0 {
		all, err := c.services.List(labels.Everything())
		if err != nil {
			return nil, fmt.Errorf("list Services: %w", err)
		}
		for _, svc := range all {
			if slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.NodePort != 0 && ports[int(p.NodePort)] }) {
				out = append(out, types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
			}
		}
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// errNoPool: gw's policy lets nothing be created before its review, and
// the target pool of every node does not exist yet.
var errNoPool = errors.New("it does not exist yet, and a Gateway whose apply policy is not auto creates nothing before its review: " +
	"the pools' review creates it for the first Service, or Gateway under auto, that needs it")

// pool is the target pool of every node, where gw's rules forward. Only
// a Gateway under the auto policy has it created when there is none (its
// plan is applied unreviewed anyway); under another, the pool would be
// made before the Gateway's review, so the Gateway waits for it.
func (c *Controller) pool(ctx context.Context, gw *gatewayv1.Gateway) (string, error) {
	if c.policy(gw) == annotations.ApplyAuto {
		return c.cloud.Infra.Pool(ctx)
	}
	id, err := c.cloud.Infra.ExistingPool(ctx)
	if err == nil && id == "" {
		err = errNoPool
	}
	return id, err
}
