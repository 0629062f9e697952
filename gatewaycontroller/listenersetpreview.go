package gatewaycontroller

import (
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/tenancy"
)

// listenerSetEdit is what a dry run of a ListenerSet concerns: the
// Gateway it names (as edited, and as it was), previewed with the edit in
// where that Gateway takes ListenerSets of its namespace. Of a Gateway
// that does not, does not exist, or is another controller's, it says only
// that it is not previewed, in the same words: a dry run tells nothing
// of another namespace's Gateway.
func (c *Controller) listenerSetEdit(req *admissionv1.AdmissionRequest, http []*gatewayv1.HTTPRoute, l4 []gateway.L4Route) (edit, error) {
	var cur, old gatewayv1.ListenerSet
	if err := decodeEdit(req, &cur, &old); err != nil {
		return edit{}, err
	}
	var e edit
	for i, s := range []*gatewayv1.ListenerSet{&cur, &old} {
		if s.Name == "" {
			continue // a create: nothing as it was
		}
		nn := parentOf(s)
		gw, err := c.gateways.Gateways(nn.Namespace).Get(nn.Name)
		ok := err == nil && c.ours(gw.Spec.GatewayClassName)
		if ok {
			ok, _ = tenancy.AdmitsListenerSet(gw.Spec.AllowedListeners, gw.Namespace, s.Namespace, c.namespaceLabels)
		}
		switch {
		case !ok && i == 0:
			e.said = append(e.said, preview.Prefix+objectref.Gateway(nn.Namespace, nn.Name, "").Describe()+
				": not previewed: previews answer only for Gateways of this controller that take ListenerSets of namespace "+s.Namespace)
		case ok && !slices.Contains(e.gws, gw):
			e.gws = append(e.gws, gw)
		}
	}
	with := func(edited *gatewayv1.ListenerSet) func(*gatewayv1.Gateway) routeSet {
		return func(gw *gatewayv1.Gateway) routeSet {
			stored, _ := c.listenerSetsOf(gw)
			sets := slices.DeleteFunc(slices.Clone(stored), func(s *gatewayv1.ListenerSet) bool {
				return s.Namespace == cur.Namespace && s.Name == cur.Name
			})
			if edited.Name != "" && gateway.NamesGateway(edited, gw) {
				sets = append(sets, edited)
			}
			if sets == nil {
				sets = []*gatewayv1.ListenerSet{} // none: not "as stored"
			}
			rs := naming(gw, keysOf(sets), http, l4, nil, nil)
			rs.sets = sets
			return rs
		}
	}
	e.now, e.before = with(&cur), with(&old)
	return e, nil
}
