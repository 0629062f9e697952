package gateway

import (
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// A route rule's sessionPersistence (the experimental channel's; the
// standard channel's CRDs drop it) is the cloud rule's
// session_persistence: each cloud rule of the route rule (one per match
// and host name) keeps its clients on their targets, the cookie's path
// the match's. Its type and cookie lifetime go in lower case, so a value
// the API server did not check is the cloud's refusal (naming the field),
// as is a session name or timeout the cloud cannot hold.

// withSession is base with rule's session persistence. A redirect has no
// target to keep: it has none, as it has no timeouts.
func withSession(base lbmodel.Rule, rule gatewayv1.HTTPRouteRule) lbmodel.Rule {
	sp := rule.SessionPersistence
	if sp == nil || base.Redirect != nil {
		return base
	}
	out := &exampleapi.SessionPersistence{Type: strings.ToLower(string(ptr.Deref(sp.Type, ""))), Name: ptr.Deref(sp.SessionName, ""),
		AbsoluteTimeoutSeconds: wholeSeconds(sp.AbsoluteTimeout)}
	if c := sp.CookieConfig; c != nil {
		out.Lifetime = strings.ToLower(string(ptr.Deref(c.LifetimeType, "")))
	}
	base.SessionPersistence = out
	return base
}

// wholeSeconds is d in seconds, a part of one counting as one (the
// cloud's sessions last whole seconds): 0 (none) for "0s" or no d.
func wholeSeconds(d *gatewayv1.Duration) int {
	return (milliseconds(d) + 999) / 1000
}
