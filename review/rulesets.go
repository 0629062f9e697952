package review

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
)

// RuleSetSubject is the reconcile of rule set ref, one route's rules on
// gw's load balancer in a workspace of their own (docs/adr/0028): a
// PlanApproval names the rule set, its events go to the Gateway, and its
// contributors are the Gateway's, in as GatewaySubject has them (the
// route among them), so nobody who may edit the Gateway's inputs may
// approve a route's change either. Policy rules see it as kind RuleSet.
func (b *Board) RuleSetSubject(gw *gatewayv1.Gateway, in GatewayInputs, ref objectref.Ref, kind string) Subject {
	s := b.GatewaySubject(gw, in, kind)
	s.ref = ref
	return s
}
