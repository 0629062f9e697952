package gatewaycontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/preview"
)

// Previews: a server-side dry run of a Gateway, a route or a ListenerSet (kubectl
// apply --dry-run=server, kubectl diff) is answered with what the edit
// would do to each Gateway of this controller's class it concerns: a
// speculative plan of the Gateway's load balancer with the edit in, the
// policy rules the plan meets and the apply policy, in package preview's
// words, each line naming the Gateway. A route's concerns only the
// Gateways whose listeners would take it (as edited, or as it was): of
// another it names, the preview says only that it is not previewed, the
// same words for a Gateway that does not exist, is another controller's
// or would refuse the route, so a dry run tells nothing of other
// namespaces' Gateways; of one in the route's own namespace it says what
// the route's status would. Warnings only, never a refusal; nothing is
// created (not even the pool of every node). An edit that is stored gets
// none: the controller's plan follows.

// Preview answers the validating webhook of Gateways and routes;
// planAllowed spends one of a namespace's speculative plans (the
// webhook's budget, shared with the Services' previews).
func (c *Controller) Preview(planAllowed func(namespace string) bool) func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		resp := &admissionv1.AdmissionResponse{Allowed: true}
		if req.DryRun == nil || !*req.DryRun || c.cloud == nil || len(req.Object.Raw) == 0 {
			return resp
		}
		if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
			resp.Warnings = []string{preview.Prefix + "preview unavailable: the controller has not read the Gateway API objects yet"}
			return resp
		}
		e, err := c.concerned(req)
		if err != nil {
			resp.Warnings = []string{preview.Prefix + "preview unavailable: " + err.Error()}
			return resp
		}
		gws, untaken := c.taking(ctx, e)
		outcome := preview.NoChange
		for _, gw := range gws {
			lines, o := c.previewGateway(ctx, gw, e.now(gw), e.route, req.Namespace, planAllowed(req.Namespace))
			resp.Warnings = append(resp.Warnings, lines...)
			outcome = worse(outcome, o)
		}
		resp.Warnings = append(resp.Warnings, untaken...)
		if len(gws) > 0 {
			resp.Warnings = append(resp.Warnings, preview.OutcomeLine+outcome.String())
		}
		return resp
	}
}

// routeSet are the routes naming a Gateway, and its ListenerSets when
// the edit is one (nil: as stored).
type routeSet struct {
	http []*gatewayv1.HTTPRoute
	l4   []gateway.L4Route
	sets []*gatewayv1.ListenerSet
}

// edit is what a dry run concerns.
type edit struct {
	// gws are the Gateways of this controller's class the object is (a
	// Gateway) or names (a route: now or before the edit).
	gws []*gatewayv1.Gateway
	// now are the routes each would have with the edit in; before, with
	// the route as it was.
	now, before func(*gatewayv1.Gateway) routeSet
	// route is the edited route (nil for a Gateway), in namespace
	// routeNS, and parents the Gateways it names as edited.
	route   *gateway.RouteKey
	routeNS string
	parents []types.NamespacedName
	// said is what a ListenerSet's dry run says of a Gateway it does not
	// preview (listenersetpreview.go).
	said []string
}

// concerned is what req's object concerns: the Gateways of this
// controller's class it is or names (as it is and as it was), and the
// routes each would have with the edit in.
func (c *Controller) concerned(req *admissionv1.AdmissionRequest) (edit, error) {
	http, err := c.httpRoutes()
	if err != nil {
		return edit{}, err
	}
	l4, err := c.l4Routes()
	if err != nil {
		return edit{}, err
	}
	// The edited route, as it is and as it was: its parents' Gateways
	// are concerned, and it replaces the stored one.
	var edited, was *gateway.L4Route // an HTTPRoute is read as one too, for its identity and parents
	var editedHTTP, wasHTTP *gatewayv1.HTTPRoute
	switch k := gatewayv1.Kind(req.Kind.Kind); k {
	case "Gateway":
		var gw gatewayv1.Gateway
		if err := json.Unmarshal(req.Object.Raw, &gw); err != nil {
			return edit{}, fmt.Errorf("decode Gateway: %w", err)
		}
		if !c.ours(gw.Spec.GatewayClassName) {
			return edit{}, nil
		}
		return edit{gws: []*gatewayv1.Gateway{&gw}, now: func(gw *gatewayv1.Gateway) routeSet { return naming(gw, c.setKeys(gw), http, l4, nil, nil) }}, nil
	case gateway.KindHTTPRoute:
		var cur, old gatewayv1.HTTPRoute
		if err := decodeEdit(req, &cur, &old); err != nil {
			return edit{}, err
		}
		editedHTTP, wasHTTP = &cur, &old
		edited = &gateway.L4Route{Kind: k, ObjectMeta: cur.ObjectMeta, ParentRefs: cur.Spec.ParentRefs}
		was = &gateway.L4Route{Kind: k, ObjectMeta: old.ObjectMeta, ParentRefs: old.Spec.ParentRefs}
	case gateway.KindGRPCRoute:
		// Decided as the HTTPRoute it is read as (grpcroutes.go).
		var cur, old gatewayv1.GRPCRoute
		if err := decodeEdit(req, &cur, &old); err != nil {
			return edit{}, err
		}
		editedHTTP, wasHTTP = gateway.GRPCRoute(&cur), gateway.GRPCRoute(&old)
		curID, oldID := grpcIdentity(&cur), grpcIdentity(&old)
		edited, was = &curID, &oldID
	case gateway.KindListenerSet:
		return c.listenerSetEdit(req, http, l4)
	case gateway.KindTLSRoute, gateway.KindTCPRoute, gateway.KindUDPRoute:
		cur, old, err := decodeL4(req)
		if err != nil {
			return edit{}, err
		}
		edited, was = &cur, &old
	default:
		return edit{}, nil
	}
	key := edited.Key()
	e := edit{route: &key, routeNS: edited.Namespace}
	for i, r := range []*gateway.L4Route{edited, was} {
		for _, ref := range r.ParentRefs {
			nn := types.NamespacedName{Namespace: r.Namespace, Name: string(ref.Name)}
			if ref.Namespace != nil {
				nn.Namespace = string(*ref.Namespace)
			}
			if i == 0 && !slices.Contains(e.parents, nn) {
				e.parents = append(e.parents, nn)
			}
			gw, err := c.gateways.Gateways(nn.Namespace).Get(nn.Name)
			if err != nil || !c.ours(gw.Spec.GatewayClassName) || slices.Contains(e.gws, gw) {
				continue
			}
			e.gws = append(e.gws, gw)
		}
	}
	if editedHTTP != nil {
		e.now = func(gw *gatewayv1.Gateway) routeSet { return naming(gw, c.setKeys(gw), http, l4, editedHTTP, nil) }
		e.before = func(gw *gatewayv1.Gateway) routeSet { return naming(gw, c.setKeys(gw), http, l4, wasHTTP, nil) }
		return e, nil
	}
	e.now = func(gw *gatewayv1.Gateway) routeSet { return naming(gw, c.setKeys(gw), http, l4, nil, edited) }
	e.before = func(gw *gatewayv1.Gateway) routeSet { return naming(gw, c.setKeys(gw), http, l4, nil, was) }
	return e, nil
}

// taking are the Gateways of e to preview: a Gateway's own edit, and the
// Gateways whose listeners would take an edited route, as edited or as it
// was (package gateway's attachment, with the claims the reconcile
// reads). Of each other Gateway the route names it says only that it is
// not previewed: for one in the route's namespace, also what the route's
// status would say of it (its Accepted reason); for one elsewhere nothing
// more, so that one that refuses the route reads as one that does not
// exist.
func (c *Controller) taking(ctx context.Context, e edit) (gws []*gatewayv1.Gateway, untaken []string) {
	if e.route == nil {
		return e.gws, e.said
	}
	said := map[types.NamespacedName]*gateway.Reason{}
	for _, gw := range e.gws {
		takes, why, err := c.takes(ctx, e, gw)
		if err != nil {
			klog.V(2).InfoS("no preview of a Gateway a route names", "gateway", klog.KObj(gw), "err", err)
		}
		if takes {
			gws = append(gws, gw)
			continue
		}
		said[types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}] = why
	}
	for _, nn := range e.parents {
		if slices.ContainsFunc(gws, func(gw *gatewayv1.Gateway) bool { return gw.Namespace == nn.Namespace && gw.Name == nn.Name }) {
			continue
		}
		who := preview.Prefix + objectref.Gateway(nn.Namespace, nn.Name, "").Describe() + ": not previewed: "
		if why := said[nn]; why != nil && nn.Namespace == e.routeNS {
			untaken = append(untaken, who+"the route would not attach to it: "+why.Reason+": "+why.Message)
			continue
		}
		untaken = append(untaken, who+"previews answer only for Gateways of this controller whose listeners would take the route")
	}
	return gws, untaken
}

// takes tells whether a listener of gw takes e's route, as edited or as
// it was; when neither, why not as edited (its Accepted reason), if it
// names gw.
func (c *Controller) takes(ctx context.Context, e edit, gw *gatewayv1.Gateway) (bool, *gateway.Reason, error) {
	var why *gateway.Reason
	for i, routes := range []routeSet{e.now(gw), e.before(gw)} {
		t, err := c.translateWith(ctx, gw, routes, false)
		if err != nil {
			return false, nil, err
		}
		for _, p := range t.Parents[*e.route] {
			if p.Accepted.Reason == string(gatewayv1.RouteReasonAccepted) {
				return true, nil, nil
			}
			if i == 0 && why == nil {
				why = &p.Accepted
			}
		}
	}
	return false, why, nil
}

// naming are the routes naming gw (or one of its ListenerSets, sets),
// the edited one (if any) in place of the stored one.
func naming(gw *gatewayv1.Gateway, sets []types.NamespacedName, http []*gatewayv1.HTTPRoute, l4 []gateway.L4Route, editedHTTP *gatewayv1.HTTPRoute, edited *gateway.L4Route) routeSet {
	var out routeSet
	for _, r := range http {
		if (names(r.Namespace, r.Spec.ParentRefs, gw) || namesSet(r.Namespace, r.Spec.ParentRefs, sets)) && (editedHTTP == nil || gateway.KindOf(r) != gateway.KindOf(editedHTTP) ||
			r.Namespace != editedHTTP.Namespace || r.Name != editedHTTP.Name) {
			out.http = append(out.http, r)
		}
	}
	if editedHTTP != nil && (names(editedHTTP.Namespace, editedHTTP.Spec.ParentRefs, gw) || namesSet(editedHTTP.Namespace, editedHTTP.Spec.ParentRefs, sets)) {
		out.http = append(out.http, editedHTTP)
	}
	for _, r := range l4 {
		if (names(r.Namespace, r.ParentRefs, gw) || namesSet(r.Namespace, r.ParentRefs, sets)) && (edited == nil || r.Key() != edited.Key()) {
			out.l4 = append(out.l4, r)
		}
	}
	if edited != nil && (names(edited.Namespace, edited.ParentRefs, gw) || namesSet(edited.Namespace, edited.ParentRefs, sets)) {
		out.l4 = append(out.l4, *edited)
	}
	return out
}

// decodeEdit decodes an admission request's object into cur and its old
// object (an update's) into old.
func decodeEdit(req *admissionv1.AdmissionRequest, cur, old any) error {
	if err := json.Unmarshal(req.Object.Raw, cur); err != nil {
		return fmt.Errorf("decode %s: %w", req.Kind.Kind, err)
	}
	if len(req.OldObject.Raw) > 0 {
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return fmt.Errorf("decode %s: %w", req.Kind.Kind, err)
		}
	}
	return nil
}

// decodeL4 decodes an edit of a TLSRoute, TCPRoute or UDPRoute.
func decodeL4(req *admissionv1.AdmissionRequest) (cur, old gateway.L4Route, err error) {
	switch gatewayv1.Kind(req.Kind.Kind) {
	case gateway.KindTLSRoute:
		var c, o gatewayv1.TLSRoute
		err = decodeEdit(req, &c, &o)
		return gateway.TLSRoute(&c), gateway.TLSRoute(&o), err
	case gateway.KindTCPRoute:
		var c, o gatewayv1.TCPRoute
		err = decodeEdit(req, &c, &o)
		return gateway.TCPRoute(&c), gateway.TCPRoute(&o), err
	default:
		var c, o gatewayv1.UDPRoute
		err = decodeEdit(req, &c, &o)
		return gateway.UDPRoute(&c), gateway.UDPRoute(&o), err
	}
}

// previewGateway is what gw with routes would do to the cloud, as
// warnings naming it, and its outcome; its plan waits for a terraform
// slot in the fair share of editor, the namespace of the object edited.
func (c *Controller) previewGateway(ctx context.Context, gw *gatewayv1.Gateway, routes routeSet, edited *gateway.RouteKey, editor string,
	allowed bool) ([]string, preview.Outcome) {
	who := objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID)).Describe() + ": "
	fallback := func(format string, args ...any) ([]string, preview.Outcome) {
		return []string{preview.Prefix + who + "no preview: " + fmt.Sprintf(format, args...)}, preview.NoChange
	}
	if !allowed {
		return fallback("namespace used its previews for this minute")
	}
	t, err := c.translateWith(ctx, gw, routes, false)
	if err != nil {
		return fallback("%v", err)
	}
	certs, pems, keys := c.certificates(ctx, gw)
	c.setCertificates(ctx, gw, t, certs, pems, keys)
	lb, _, unreachable := gateway.Program(gw, t, certs)
	if len(lb.Listeners) == 0 {
		return []string{preview.Prefix + who + "would not be built: no listener is accepted (HTTPS ones need certificates that resolve)"}, preview.Refused
	}
	withCertificates(&lb, pems)
	var lines []string
	if len(unreachable) > 0 {
		lines = append(lines, preview.Prefix+who+fmt.Sprintf("%d rule(s) forward to a Service without a node port (type ClusterIP), which gets no requests", len(unreachable)))
	}
	if missing, err := c.previewPools(ctx, &lb); err != nil {
		return fallback("%v", err)
	} else if missing != "" && editor != gw.Namespace && !strings.Contains(missing, "Service "+editor+"/") {
		return fallback("a pod pool of another namespace's Service, which the shared load balancer forwards to, does not exist yet")
	} else if missing != "" {
		return fallback("%s", missing)
	}
	if c.cloud.PreviewBudget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cloud.PreviewBudget)
		defer cancel()
	}
	// The edited route's rules are planned in its rule set (rulesets.go),
	// the rest in the Gateway's, with those a move keeps there (moves.go).
	sets := splitRuleSets(&lb)
	if h, ok := c.ruleSets.heldFor(gw.UID); ok {
		c.ruleSets.keep(&lb, sets, h)
	}
	setLines, setOutcome := c.previewRuleSet(ctx, gw, lb, sets, edited, editor)
	obj := engine.PolicyObject{Kind: objectref.KindGateway, Namespace: gw.Namespace, Name: gw.Name, Labels: gw.Labels, Annotations: gw.Annotations}
	sp, verdicts, err := c.cloud.Engine.PreviewGateway(ctx, lb, usedKeys(lb, keys), obj, editor)
	switch {
	case errors.Is(err, engine.ErrNoState):
		return fallback("no state yet: the Gateway's load balancer is created by its first plan")
	case errors.Is(err, engine.ErrBusy) || ctx.Err() != nil:
		return fallback("terraform did not answer within %s", c.cloud.PreviewBudget)
	case err != nil && editor != gw.Namespace:
		klog.V(2).InfoS("Gateway preview failed", "gateway", klog.KObj(gw), "err", err)
		return fallback("the plan of the shared load balancer failed (its owners' events on the Gateway say why)")
	case err != nil:
		klog.V(2).InfoS("Gateway preview failed", "gateway", klog.KObj(gw), "err", err)
		return fallback("the plan failed: %v", err)
	}
	ch := preview.Change{Plan: sp, Verdicts: verdicts, Policy: c.policy(gw), Approvals: c.cloud.Approvals}
	lines = append(lines, ownLines(changeLines(who, ch), editor, gw.Namespace)...)
	return append(lines, setLines...), worse(ch.Outcome(), setOutcome)
}

// keyedNamespace finds the namespace in a resource address keyed
// ["namespace/name"] (a certificate of the shared load balancer).
var keyedNamespace = regexp.MustCompile(`\["([a-z0-9][-a-z0-9]*)/`)

// ownLines are the lines of the shared load balancer's plan that editor,
// the namespace of the object edited, is shown: the Gateway's own
// namespace sees every one; another sees none naming another namespace's
// object (a team's certificate being renewed), only how many there are.
func ownLines(lines []string, editor, gwNamespace string) []string {
	if editor == gwNamespace {
		return lines
	}
	out := make([]string, 0, len(lines))
	others := 0
	for _, l := range lines {
		if slices.ContainsFunc(keyedNamespace.FindAllStringSubmatch(l, -1), func(m []string) bool { return m[1] != editor }) {
			others++
			continue
		}
		out = append(out, l)
	}
	if others > 0 {
		out = append(out, fmt.Sprintf("%s%d change(s) of other namespaces' objects on the shared load balancer, not shown", preview.Prefix, others))
	}
	return out
}

// changeLines are ch's warnings, each naming who, without the outcome
// line (one for all Gateways).
func changeLines(who string, ch preview.Change) []string {
	said := ch.Warnings()
	lines := make([]string, 0, len(said))
	for _, l := range said[:len(said)-1] {
		lines = append(lines, preview.Prefix+who+strings.TrimPrefix(l, preview.Prefix))
	}
	return lines
}

// previewRuleSet plans the rule set of the edited route on gw's load
// balancer lb (sets are lb's routes' sets), for a dry run's warnings:
// nothing for an edit that is no route's, or a route without rules there.
func (c *Controller) previewRuleSet(ctx context.Context, gw *gatewayv1.Gateway, lb gateway.LoadBalancer, sets []lbmodel.RuleSet,
	edited *gateway.RouteKey, editor string) ([]string, preview.Outcome) {
	if edited == nil {
		return nil, preview.NoChange
	}
	i := slices.IndexFunc(sets, func(s lbmodel.RuleSet) bool {
		return s.RouteKind == string(edited.Kind) && s.RouteNamespace == edited.Namespace && s.Route == edited.Name
	})
	if i < 0 {
		return nil, preview.NoChange
	}
	s := sets[i]
	who := objectref.Gateway(gw.Namespace, gw.Name, "").Describe() + ": the rules of " + string(edited.Kind) + " " + edited.Namespace + "/" + edited.Name + ": "
	prior, ok, err := c.cloud.Engine.GetGatewayLoadBalancer(ctx, lb)
	switch {
	case err != nil:
		return []string{preview.Prefix + who + "no preview: " + err.Error()}, preview.NoChange
	case !ok || prior.ID == "":
		return []string{preview.Prefix + who + "no preview: the Gateway's load balancer is created by its first plan, the route's rules after it"}, preview.NoChange
	}
	s.LoadBalancerID = prior.ID
	obj := engine.PolicyObject{Kind: objectref.KindRuleSet, Namespace: gw.Namespace, Name: s.Ref().Name, Labels: gw.Labels, Annotations: gw.Annotations}
	sp, verdicts, err := c.cloud.Engine.PreviewRuleSet(ctx, s, obj, editor)
	switch {
	case errors.Is(err, engine.ErrNoState):
		return []string{preview.Prefix + who + fmt.Sprintf("%d rule(s) added: a new rule set, created by its first plan", len(s.Rules))},
			worse(preview.Changes, c.newSetOutcome(gw))
	case errors.Is(err, engine.ErrBusy) || ctx.Err() != nil:
		return []string{preview.Prefix + who + fmt.Sprintf("no preview: terraform did not answer within %s", c.cloud.PreviewBudget)}, preview.NoChange
	case err != nil:
		return []string{preview.Prefix + who + "no preview: the plan failed: " + err.Error()}, preview.NoChange
	}
	ch := preview.Change{Plan: sp, Verdicts: verdicts, Policy: c.policy(gw), Approvals: c.cloud.Approvals}
	return changeLines(who, ch), ch.Outcome()
}

// newSetOutcome is what a new rule set's plan would come to under gw's
// apply policy: held for approval unless auto.
func (c *Controller) newSetOutcome(gw *gatewayv1.Gateway) preview.Outcome {
	if c.policy(gw) == annotations.ApplyAuto {
		return preview.Changes
	}
	return preview.NeedsApproval
}

// worse is the outcome of two Gateways' previews: a refusal first, then
// one held for approval, then a change.
func worse(a, b preview.Outcome) preview.Outcome {
	rank := map[preview.Outcome]int{preview.NoChange: 0, preview.Changes: 1, preview.NeedsApproval: 2, preview.Refused: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
