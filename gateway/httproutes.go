package gateway

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Backend is where a backendRef's requests go: a target pool, on a
// Service's node port.
type Backend = lbmodel.Backend

// Backends resolves a backendRef of route to where its requests go, or
// says why it cannot, as a ResolvedRefs reason (BackendNotFound,
// InvalidKind, RefNotPermitted) and message.
type Backends func(route objectref.Ref, ref gatewayv1.BackendRef) (Backend, gatewayv1.RouteConditionReason, string)

// Translation is a Gateway and its routes decided: the cloud rules, what
// the statuses say, and the claims its namespaces hold.
type Translation struct {
	// Rules are by listener port, then priority.
	Rules []lbmodel.Rule
	// Attached counts the routes attached to each listener, by name;
	// Refused says why routes cannot attach to a listener.
	Attached map[gatewayv1.SectionName]int32
	Refused  map[gatewayv1.SectionName]Reason
	// Parents are, per route, the state of each of its parentRefs naming
	// the Gateway.
	Parents map[RouteKey][]Parent
	// Claims are the host names and TCP/UDP listeners its namespaces
	// hold after this look (none with ownership None), to keep for the
	// next; Recheck is when a claim's grace ends (zero: none waits), when
	// the Gateway is to be looked at again.
	Claims  Claims
	Recheck time.Time
	// Moves are the host names and listeners that went from one
	// namespace to another at this look: what the Gateway's reviewers
	// are warned of.
	Moves []Move
	// OwnershipUnknown is the annotation's value when it is not one of
	// Namespace and None (taken as Namespace).
	OwnershipUnknown string
	// Addresses are the reserved addresses spec.addresses asks for
	// (addresses.go).
	Addresses Addresses
	// BackendTLSPolicies are the policies of the Service ports its
	// routes' backends resolve to, with their conditions: what the
	// controller reports under the Gateway (backendtls.go; set by the
	// caller, which resolves the backends).
	BackendTLSPolicies map[types.NamespacedName]PolicyConditions
	// ListenerSets are the states of the ListenerSets naming the Gateway
	// (listenersets.go), AttachedListenerSets how many are accepted, and
	// SetListeners their listeners to build beside the Gateway's.
	ListenerSets         map[types.NamespacedName]ListenerSetState
	AttachedListenerSets int32
	SetListeners         []SetListener
}

// RouteKey names a route of any kind.
type RouteKey struct {
	Kind gatewayv1.Kind
	types.NamespacedName
}

// Reason is a condition's reason and message.
type Reason struct {
	Reason  string
	Message string
}

// Parent is a route's state under one parentRef: Accepted (reason
// Accepted when it is) and ResolvedRefs (reason ResolvedRefs when all
// are).
type Parent struct {
	Ref          gatewayv1.ParentReference
	Accepted     Reason
	ResolvedRefs Reason
}

// candidate is one cloud rule before priorities, with what orders it.
type candidate struct {
	rule lbmodel.Rule
	// from is the route it comes from; nil for the Gateway's own rules (a
	// listener's catch-all, a claimed host name's fence).
	from *origin
	// listenerHost is the hostname of the listener the rule came through:
	// a request belongs to the most specific listener matching its host,
	// and only that listener's routes serve it.
	listenerHost string
	// ruleIndex and matchIndex place it in its route.
	ruleIndex, matchIndex int
	// ruleID names its route rule in its cloud rules' names (ruleID).
	ruleID string
	// written is the host name its route wrote it for: a copy made for a
	// claimed host name (fences.go) keeps its original's, and its place
	// after the rules written for that name.
	written string
	// fence is a claimed host name's closing 404 (fences.go), counted in
	// the shares of the namespaces chargedTo.
	fence     bool
	chargedTo []string
}

// origin is the route a rule comes from, as precedence reads it.
type origin struct {
	namespace, name string
	created         metav1.Time
}

// HTTP decides gw's HTTPRoutes alone, as Translate does with no L4
// routes and no claims kept.
func HTTP(gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute, nsLabels NamespaceLabels, backends Backends) Translation {
	return Translate(gw, routes, nil, nsLabels, backends, Boundary{})
}

// httpUnits are the parentRefs of route (an HTTPRoute, or a GRPCRoute
// read as one) naming the Gateway or one of its ListenerSets (sc), each attached where its listeners allow (or
// refused), with its cloud rules: one per rule, match and host name. A
// route with a feature the cloud lacks, or a rule the cloud would refuse,
// is not accepted. Its entries are added to t.Parents.
func httpUnits(sc scope, route *gatewayv1.HTTPRoute, nsLabels NamespaceLabels, backends Backends, t *Translation) []*unit {
	key := RouteKey{Kind: KindOf(route), NamespacedName: types.NamespacedName{Namespace: route.Namespace, Name: route.Name}}
	unsupported := unsupportedIn(route)
	weighted, resolved := resolve(route, backends)
	at := func(c candidate) string {
		if len(route.Spec.Rules[c.ruleIndex].Matches) == 0 {
			return fmt.Sprintf("spec.rules[%d]", c.ruleIndex)
		}
		return fmt.Sprintf("spec.rules[%d].matches[%d]", c.ruleIndex, c.matchIndex)
	}
	var out []*unit
	for _, ref := range route.Spec.ParentRefs {
		set, ok := sc.parentOf(route.Namespace, ref)
		if !ok {
			continue
		}
		u := newUnit(key, route.ObjectMeta, ref, resolved, t)
		u.a = sc.attach(set, key.Kind, route.Namespace, route.Spec.Hostnames, ref, nsLabels)
		out = append(out, u)
		switch {
		case u.a.reason != "":
			u.refuse(string(u.a.reason), u.a.message)
			continue
		case unsupported != "":
			u.refuse(string(gatewayv1.RouteReasonUnsupportedValue), unsupported)
			continue
		}
		for i, l := range u.a.listeners {
			for _, h := range u.a.hostnames[i] {
				u.serves(h)
				for _, c := range routeCandidates(route, int(l.spec.Port), h, weighted) {
					c.listenerHost = l.hostname()
					u.http = addCandidate(u.http, c)
				}
			}
		}
		if why := refusedRule(u.http, at); why != "" {
			u.refuse(string(gatewayv1.RouteReasonUnsupportedValue), why)
		}
	}
	return out
}

// addCandidate adds c to cs unless a rule of its name is there: one host
// through two listeners, the more specific takes its requests.
func addCandidate(cs []candidate, c candidate) []candidate {
	k := slices.IndexFunc(cs, func(o candidate) bool { return o.rule.Name == c.rule.Name })
	switch {
	case k < 0:
		return append(cs, c)
	case compareHosts(c.listenerHost, cs[k].listenerHost) < 0:
		cs[k].listenerHost = c.listenerHost
	}
	return cs
}

// resolve resolves a route's backendRefs once: per rule, those that
// resolve, with their weights (1 by default; one backend named twice
// merged); and the route's
// ResolvedRefs, the reason of its first backendRef that does not, else
// ResolvedRefs (whether or not the route attaches anywhere).
func resolve(route *gatewayv1.HTTPRoute, backends Backends) ([][]Backend, Reason) {
	out := make([][]Backend, len(route.Spec.Rules))
	resolved := Reason{Reason: string(gatewayv1.RouteReasonResolvedRefs)}
	from := objectref.Ref{Kind: string(KindOf(route)), Namespace: route.Namespace, Name: route.Name}
	for i, rule := range route.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			if b, ok := resolveRef(from, ref.BackendRef, backends, &resolved); ok {
				out[i] = append(out[i], b)
			}
		}
		out[i] = mergeBackends(out[i])
	}
	return out, resolved
}

// resolveRef resolves one backendRef of route from, with its weight (1
// by default); one that does not resolve sets *resolved, the route's
// ResolvedRefs, unless an earlier one did.
func resolveRef(from objectref.Ref, ref gatewayv1.BackendRef, backends Backends, resolved *Reason) (Backend, bool) {
	b, reason, msg := backends(from, ref)
	if reason != "" {
		if resolved.Reason == string(gatewayv1.RouteReasonResolvedRefs) {
			*resolved = Reason{Reason: string(reason), Message: msg}
		}
		return Backend{}, false
	}
	b.Weight = 1
	if ref.Weight != nil {
		b.Weight = int(*ref.Weight)
	}
	return b, true
}

// routeCandidates are the cloud rules of route on listener port for host
// (one per rule and match), with each rule's weighted backends (resolve).
func routeCandidates(route *gatewayv1.HTTPRoute, port int, host string, weighted [][]Backend) []candidate {
	from := &origin{namespace: route.Namespace, name: routeName(route), created: route.CreationTimestamp}
	owner := &lbmodel.RouteRef{Kind: string(KindOf(route)), Namespace: route.Namespace, Name: route.Name}
	var out []candidate
	for i, rule := range route.Spec.Rules {
		base := withSession(withTiming(withFilters(lbmodel.Rule{ListenerPort: port, Hostname: host}, rule.Filters), rule), rule)
		if base.Redirect == nil {
			base.Backends = weighted[i]
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		id := ruleID(rule.Name, i)
		for j, m := range matches {
			r := withMatch(base, m)
			r.Name = ruleName(route.Namespace, from.name, id, j, port, host)
			r.Route = owner
			out = append(out, candidate{rule: r, from: from, ruleIndex: i, matchIndex: j, ruleID: id, written: host})
		}
	}
	return out
}

// isolation are the catch-alls that keep a listener's requests its own:
// a request goes to the most specific listener whose hostname matches
// it, and when none of that listener's routes match, the Gateway API
// wants 404, not a less specific listener's route on the same port. So
// a listener with a hostname that another listener of its port covers
// (a wildcard over it, or no hostname) ends with a rule answering 404
// for its hostname.
func isolation(ls []*listener) []candidate {
	var out []candidate
	for _, l := range ls {
		if l.refused != "" || !slices.ContainsFunc(ls, func(o *listener) bool { return o.refused == "" && coveredBy(l, o) }) {
			continue
		}
		h, port := l.hostname(), int(l.spec.Port)
		out = append(out, candidate{listenerHost: h, rule: lbmodel.Rule{
			Name:         shorten(fmt.Sprintf("listener/%s:%d@%s", l.id, port, h)),
			ListenerPort: port, Hostname: h, FixedResponse: &lbmodel.FixedResponse{StatusCode: http.StatusNotFound},
		}})
	}
	return out
}

// coveredBy tells whether listener o takes requests for l's host name
// too, so that l's HTTP(S) requests end with a catch-all: o is on l's
// port and protocol, without a host name, or with one covering l's.
func coveredBy(l, o *listener) bool {
	h := l.hostname()
	return o != l && h != "" && (l.spec.Protocol == gatewayv1.HTTPProtocolType || l.spec.Protocol == gatewayv1.HTTPSProtocolType) &&
		o.spec.Port == l.spec.Port && o.spec.Protocol == l.spec.Protocol && (o.hostname() == "" || covers(o.hostname(), h))
}

// Path ranks, the first field of a rule's precedence in its order key: an
// exact path, then a regular expression (as Envoy Gateway ranks them: the
// Gateway API leaves it to implementations), then a prefix or any path.
// The regex rank came after the others were in use: "0r" sorts after
// every exact rule's key ("0" and a digit) and before "1", so no key of a
// rule without a regex changed (nor did any route set's plan).
const (
	rankExact  = "0"
	rankRegex  = "0r"
	rankPrefix = "1"
)

func pathRank(r lbmodel.Rule) string {
	switch r.PathType {
	case exampleapi.PathExact:
		return rankExact
	case exampleapi.PathRegex:
		return rankRegex
	}
	return rankPrefix
}

func methodRank(r lbmodel.Rule) int {
	if r.Method != "" {
		return 0
	}
	return 1
}

// ruleName names a cloud rule after where it comes from (an HTTPRoute
// namespace/name); a name longer than the cloud's 128 characters keeps
// its start and a hash of it all.
func ruleName(namespace, name, rule string, match, port int, host string) string {
	if host == "" {
		host = "any"
	}
	return shorten(fmt.Sprintf("%s/%s/%s.%d:%d@%s", namespace, name, rule, match, port, host))
}

// ruleID is how a route rule is named in its cloud rules: by its name
// where it has one (unique in its route: a plan reads which rule changed,
// and moving rules renames none), else by its index.
func ruleID(name *gatewayv1.SectionName, index int) string {
	if name != nil && *name != "" {
		return string(*name)
	}
	return strconv.Itoa(index)
}

// shorten keeps a rule name within the cloud's 128 characters: a longer
// one keeps its start and a hash of it all.
func shorten(name string) string {
	if len(name) <= 128 {
		return name
	}
	return name[:111] + objectref.HashedName("#", 16, name)
}

// unsupportedIn names the first feature of route the Example load
// balancer does not have ("" for none): regular expression header and
// query parameter matches, filters other than header changes, redirects and rewrites (a
// GRPCRoute's: header changes), filters on a backend.
func unsupportedIn(route *gatewayv1.HTTPRoute) string {
	filters := routeFilters(KindOf(route))
	for i, rule := range route.Spec.Rules {
		at := fmt.Sprintf("spec.rules[%d]", i)
		for j, m := range rule.Matches {
			mat := fmt.Sprintf("%s.matches[%d]", at, j)
			for _, h := range m.Headers {
				if h.Type != nil && *h.Type != gatewayv1.HeaderMatchExact {
					return mat + ".headers: only Exact header matches are supported"
				}
			}
			for _, q := range m.QueryParams {
				if q.Type != nil && *q.Type != gatewayv1.QueryParamMatchExact {
					return mat + ".queryParams: only Exact query parameter matches are supported"
				}
			}
		}
		for j, f := range rule.Filters {
			if !slices.Contains(filters, f.Type) {
				return fmt.Sprintf("%s.filters[%d]: filter %s is not supported (supported: %s)", at, j, f.Type, filterList(filters))
			}
		}
		for j, b := range rule.BackendRefs {
			if len(b.Filters) > 0 {
				return fmt.Sprintf("%s.backendRefs[%d].filters: backend filters are not supported", at, j)
			}
		}
		if why := unsupportedTiming(rule, at); why != "" {
			return why
		}
	}
	return ""
}
