package gatewaycontroller

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
)

// ListenerSets (where the API server serves them, as GRPCRoutes) add a
// team's listeners to a Gateway: package gateway decides them with the
// Gateway's own, so a ListenerSet's change is a change of its Gateway's
// load balancer, planned and reviewed as the Gateway's (its author among
// the change's contributors, who may not approve it). Here: the watch,
// the routes that attach to them, their certificates and statuses.

// listenerSetFeature is the conformance feature a GatewayClass of this
// controller claims where ListenerSets are served.
const listenerSetFeature gatewayv1.FeatureName = "ListenerSet"

// listenerSetChanged queues the Gateway a ListenerSet names (before and
// after an edit: the informer calls it with both).
func (c *Controller) listenerSetChanged(obj any) {
	if s, ok := objectOf[*gatewayv1.ListenerSet](obj); ok {
		c.queue.Add(key{NamespacedName: parentOf(s)})
	}
}

// parentOf is the Gateway ListenerSet s names.
func parentOf(s *gatewayv1.ListenerSet) types.NamespacedName {
	ns := s.Namespace
	if s.Spec.ParentRef.Namespace != nil {
		ns = string(*s.Spec.ParentRef.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: string(s.Spec.ParentRef.Name)}
}

// listenerSetsOf are the ListenerSets naming gw (none where they are not
// served).
func (c *Controller) listenerSetsOf(gw *gatewayv1.Gateway) ([]*gatewayv1.ListenerSet, error) {
	if c.sets == nil {
		return nil, nil
	}
	all, err := c.sets.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list ListenerSets: %w", err)
	}
	var out []*gatewayv1.ListenerSet
	for _, s := range all {
		if gateway.NamesGateway(s, gw) {
			out = append(out, s)
		}
	}
	return out, nil
}

// setKeys are the ListenerSets naming gw, by namespace/name: what a
// route's parentRef of kind ListenerSet attaches to it through.
func (c *Controller) setKeys(gw *gatewayv1.Gateway) []types.NamespacedName {
	sets, err := c.listenerSetsOf(gw)
	if err != nil {
		return nil
	}
	return keysOf(sets)
}

// keysOf are sets by namespace/name.
func keysOf(sets []*gatewayv1.ListenerSet) []types.NamespacedName {
	out := make([]types.NamespacedName, len(sets))
	for i, s := range sets {
		out[i] = types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
	}
	return out
}

// namesSet tells whether a parentRef of a route in namespace ns names
// one of sets.
func namesSet(ns string, refs []gatewayv1.ParentReference, sets []types.NamespacedName) bool {
	return slices.ContainsFunc(refs, func(ref gatewayv1.ParentReference) bool {
		return isListenerSetRef(ref) && slices.Contains(sets, refTarget(ns, ref))
	})
}

func isListenerSetRef(ref gatewayv1.ParentReference) bool {
	return ref.Kind != nil && *ref.Kind == gateway.KindListenerSet && (ref.Group == nil || *ref.Group == gatewayv1.GroupName)
}

// scope is what one Gateway's sync rewrites of this controller's entries
// in routes' statuses: those for the Gateway, for the ListenerSets naming
// it, and for ListenerSets gone (whichever Gateway's sync comes first:
// no translation names them again).
type scope struct {
	gateway types.NamespacedName
	set     func(types.NamespacedName) bool
}

// scopeOf is Gateway nn's scope.
func (c *Controller) scopeOf(nn types.NamespacedName) scope {
	sc := scope{gateway: nn, set: func(types.NamespacedName) bool { return false }}
	if c.sets != nil {
		sc.set = func(k types.NamespacedName) bool {
			s, err := c.sets.ListenerSets(k.Namespace).Get(k.Name)
			return err != nil || parentOf(s) == nn
		}
	}
	return sc
}

// has tells whether ref, of a route in ns, is in sc.
func (sc scope) has(ns string, ref gatewayv1.ParentReference) bool {
	if isListenerSetRef(ref) {
		return sc.set(refTarget(ns, ref))
	}
	return refTarget(ns, ref) == sc.gateway
}

// refTarget is the namespace/name a parentRef of a route in ns names.
func refTarget(ns string, ref gatewayv1.ParentReference) types.NamespacedName {
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
}

// setCertificates resolves the certificateRefs of the ListenerSets'
// accepted HTTPS listeners as the Gateway's are (certificates), from the
// ListenerSet (a ReferenceGrant to Gateways lets none in), and refuses a
// certificate naming a host name that is not its namespace's on the
// Gateway (gateway.CertificateOverreach): it would answer for it.
func (c *Controller) setCertificates(ctx context.Context, gw *gatewayv1.Gateway, t gateway.Translation, certs gateway.Certificates, pems, keys map[string]string) {
	for _, sl := range t.SetListeners {
		if sl.Spec.Protocol != gatewayv1.HTTPSProtocolType || sl.Spec.TLS == nil {
			continue
		}
		from := objectref.Ref{Kind: string(gateway.KindListenerSet), Namespace: sl.Set.Namespace, Name: sl.Set.Name}
		lc := c.listenerCertificates(ctx, from, sl.Spec, pems, keys)
		if lc.Unresolved == nil {
			for _, k := range lc.Keys {
				if why := gateway.CertificateOverreach(gw, t, sl.Set, dnsNames(pems[k])); why != "" {
					lc.Unresolved = &gateway.Reason{Reason: string(gatewayv1.ListenerReasonInvalidCertificateRef), Message: "Secret " + k + ": " + why}
					lc.Keys = nil
					break
				}
			}
		}
		certs[sl.ID] = lc
	}
}

// dnsNames are the DNS names of the first certificate of a PEM chain.
func dnsNames(chain string) []string {
	b, _ := pem.Decode([]byte(chain))
	if b == nil {
		return nil
	}
	crt, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil
	}
	return crt.DNSNames
}

// writeListenerSets writes each ListenerSet's status as t and p decide
// it; one whose status would not change costs no request.
func (c *Controller) writeListenerSets(ctx context.Context, t gateway.Translation, p programmed) error {
	if c.sets == nil {
		return nil
	}
	for k, st := range t.ListenerSets {
		s, err := c.sets.ListenerSets(k.Namespace).Get(k.Name)
		if err != nil {
			continue // gone since
		}
		if reflect.DeepEqual(listenerSetStatus(s, st, p, c.serves), s.Status) {
			continue
		}
		api := c.gw.GatewayV1().ListenerSets(k.Namespace)
		err = writeStatus(ctx, k.Name, s.UID, api.Get, api.UpdateStatus, func(cur *gatewayv1.ListenerSet) (*gatewayv1.ListenerSet, bool) {
			next := cur.DeepCopy()
			next.Status = listenerSetStatus(cur, st, p, c.serves)
			return next, !reflect.DeepEqual(next.Status, cur.Status)
		})
		if err != nil {
			return fmt.Errorf("status of ListenerSet %s: %w", k, err)
		}
	}
	return nil
}

// parentGone marks the ListenerSets naming Gateway nn, deleted (or never
// made), as not accepted (ParentNotAccepted, no listeners): none is left
// saying it is attached to a load balancer that is gone. One that says so
// already is left alone. A Gateway moved to another class is not gone:
// its new controller writes them.
func (c *Controller) parentGone(ctx context.Context, nn types.NamespacedName) error {
	if c.sets == nil {
		return nil
	}
	all, err := c.sets.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list ListenerSets: %w", err)
	}
	gone := gateway.Reason{Reason: string(gatewayv1.ListenerSetReasonParentNotAccepted), Message: "Gateway " + nn.String() + " is deleted, or does not exist"}
	t := gateway.Translation{ListenerSets: map[types.NamespacedName]gateway.ListenerSetState{}}
	for _, s := range all {
		if a := meta.FindStatusCondition(s.Status.Conditions, string(gatewayv1.ListenerSetConditionAccepted)); parentOf(s) == nn && (a == nil || a.Reason != gone.Reason) {
			t.ListenerSets[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = gateway.ListenerSetState{Accepted: gone}
		}
	}
	return c.writeListenerSets(ctx, t, programmed{})
}

// setNotProgrammed is what a ListenerSet is told of its Gateway's load
// balancer not programmed.
const setNotProgrammed = "the Gateway's load balancer is not programmed: the Gateway's Programmed condition says why"

// listenerSetStatus is cur's status as st (its Gateway's decision) and p
// (what building the load balancer came to) say: Accepted and Programmed
// with the reason of a ListenerSet not attached, and each listener's
// conditions as a Gateway listener's, a conflicted one's Programmed
// giving its conflict.
func listenerSetStatus(cur *gatewayv1.ListenerSet, st gateway.ListenerSetState, p programmed, serves func(gatewayv1.Kind) bool) gatewayv1.ListenerSetStatus {
	// What building the shared load balancer came to stays on the
	// Gateway, for its owners: its text may quote other teams' objects
	// (their pod pools, the plan's resources), as a route's status never
	// does either (rulestatus.go).
	if !p.ok {
		p.message = setNotProgrammed
	}
	next := cur.Status.DeepCopy()
	gen := cur.Generation
	set := conditionSetter(gen)
	accepted := st.IsAccepted()
	set(&next.Conditions, string(gatewayv1.ListenerSetConditionAccepted), accepted, st.Accepted.Reason, st.Accepted.Message)
	switch {
	case !accepted:
		set(&next.Conditions, string(gatewayv1.ListenerSetConditionProgrammed), false, st.Accepted.Reason, st.Accepted.Message)
	case p.ok:
		set(&next.Conditions, string(gatewayv1.ListenerSetConditionProgrammed), true, string(gatewayv1.ListenerSetReasonProgrammed), p.message)
	default:
		set(&next.Conditions, string(gatewayv1.ListenerSetConditionProgrammed), false, string(gatewayv1.ListenerSetReasonPending), p.message)
	}
	var ls []gatewayv1.ListenerEntryStatus
	for _, l := range st.Listeners {
		i := slices.IndexFunc(cur.Spec.Listeners, func(e gatewayv1.ListenerEntry) bool { return e.Name == l.Name })
		if i < 0 {
			continue
		}
		e := cur.Spec.Listeners[i]
		spec := gatewayv1.Listener(e)
		var old []metav1.Condition
		for _, o := range cur.Status.Listeners {
			if o.Name == l.Name {
				old = o.Conditions
			}
		}
		ls0 := listenerStatus(spec, l.ID, l.Attached, l.Refused, old, p, gen, serves)
		if r := l.Refused; r != nil && conflicted(*r) {
			set(&ls0.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, r.Reason, r.Message)
		}
		ls = append(ls, gatewayv1.ListenerEntryStatus{Name: l.Name, SupportedKinds: ls0.SupportedKinds, AttachedRoutes: ls0.AttachedRoutes, Conditions: ls0.Conditions})
	}
	next.Listeners = ls
	return *next
}

// setSecrets are secrets with those the accepted ListenerSet listeners'
// certificateRefs name: inputs of the Gateway's plan, as its own
// listeners' are.
func setSecrets(secrets []types.NamespacedName, t gateway.Translation) []types.NamespacedName {
	for _, sl := range t.SetListeners {
		if sl.Spec.TLS == nil {
			continue
		}
		for _, ref := range sl.Spec.TLS.CertificateRefs {
			n := refTargetOf(sl.Set.Namespace, ref)
			if !slices.Contains(secrets, n) {
				secrets = append(secrets, n)
			}
		}
	}
	return secrets
}

func refTargetOf(ns string, ref gatewayv1.SecretObjectReference) types.NamespacedName {
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
}
