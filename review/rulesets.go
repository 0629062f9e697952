package review

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
)

// RuleSetSubject is the reconcile of rule set ref, one route's rules on
// gw's load balancer in a workspace of their own (docs/adr/0028): a
// PlanApproval names the rule set, and its contributors are the
// Gateway's, in as GatewaySubject has them (the route among them), so
// nobody who may edit the Gateway's inputs may approve a route's change
// either. Policy rules see it as kind RuleSet. Its events go to the
// Gateway, but those that tell the route's author of the set's plan go to
// the route, when in names it (routeReasons).
func (b *Board) RuleSetSubject(gw *gatewayv1.Gateway, in GatewayInputs, ref objectref.Ref, kind string) Subject {
	s := b.GatewaySubject(gw, in, kind)
	s.ref = ref
	_, routeKind, ns, name, ok := objectref.ParseRuleSetName(ref.Name)
	for _, r := range in.Routes {
		if ok && r.UID != "" && r.Kind == routeKind && r.Namespace == ns && r.Name == name {
			// Not a kind of client-go's scheme: the event names it by
			// reference (UID too: kubectl describe finds events by it).
			s.route = &v1.ObjectReference{APIVersion: gatewayv1.GroupVersion.String(), Kind: r.Kind,
				Namespace: r.Namespace, Name: r.Name, UID: types.UID(r.UID)}
		}
	}
	return s
}

// routeReasons are the events of a rule set's plan its route's author
// reads on the route: what became of the plan of their change. The
// others stay on the Gateway, for its owners: an ignored approval names
// whatever input its approver may edit (another team's route, the
// Gateway's Secret), a failure the shared load balancer's state.
var routeReasons = map[string]bool{
	"Planned": true, "AwaitingApproval": true, "PlanDenied": true, "Applied": true, "PlanSuperseded": true,
}

// routeFailure is what a rule set's route is told of a failure, whose
// error stays on the Gateway.
const routeFailure = "RulesFailed"
