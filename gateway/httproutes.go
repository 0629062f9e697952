package gateway

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// Backend is where a backendRef's requests go: a target pool, on a
// Service's node port (the front-end names it without the renderer).
type Backend = renderer.RuleBackend

// Backends resolves a backendRef of route to where its requests go, or
// says why it cannot, as a ResolvedRefs reason (BackendNotFound,
// InvalidKind, RefNotPermitted) and message.
type Backends func(route objectref.Ref, ref gatewayv1.BackendRef) (Backend, gatewayv1.RouteConditionReason, string)

// Translation is a Gateway and its HTTPRoutes decided: the cloud rules,
// and what the statuses say.
type Translation struct {
	// Rules are by listener port, then priority.
	Rules []renderer.Rule
	// Attached counts the routes attached to each listener, by name;
	// Refused says why routes cannot attach to a listener.
	Attached map[gatewayv1.SectionName]int32
	Refused  map[gatewayv1.SectionName]Reason
	// Parents are, per route, the state of each of its parentRefs naming
	// the Gateway.
	Parents map[RouteKey][]Parent
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
	rule renderer.Rule
	// route is nil for a listener's catch-all (isolation).
	route *gatewayv1.HTTPRoute
	// listenerHost is the hostname of the listener the rule came through:
	// a request belongs to the most specific listener matching its host,
	// and only that listener's routes serve it.
	listenerHost string
	// ruleIndex and matchIndex place it in its route.
	ruleIndex, matchIndex int
	headers               int
}

// HTTP decides gw's HTTPRoutes: every route naming gw in a parentRef
// attaches where its listeners allow, and its rules become cloud rules,
// one per rule, match and host name, ordered by the Gateway API's
// precedence. A route with a feature the cloud lacks is not accepted.
func HTTP(gw *gatewayv1.Gateway, routes []*gatewayv1.HTTPRoute, nsLabels NamespaceLabels, backends Backends) Translation {
	ls := listenersOf(gw)
	t := Translation{Attached: map[gatewayv1.SectionName]int32{}, Refused: map[gatewayv1.SectionName]Reason{},
		Parents: map[RouteKey][]Parent{}}
	var cands []candidate
	seen := map[string]int{} // rule name: index in cands
	for _, route := range routes {
		key := RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: route.Namespace, Name: route.Name}}
		unsupported := unsupportedIn(route)
		weighted, resolved := resolve(route, backends)
		for _, ref := range route.Spec.ParentRefs {
			if !refersTo(gw, route.Namespace, ref) {
				continue
			}
			p := Parent{Ref: ref, Accepted: Reason{Reason: string(gatewayv1.RouteReasonAccepted)}}
			a := attach(gw.Namespace, ls, KindHTTPRoute, route.Namespace, route.Spec.Hostnames, ref, nsLabels)
			switch {
			case a.reason != "":
				p.Accepted = Reason{Reason: string(a.reason), Message: a.message}
			case unsupported != "":
				p.Accepted = Reason{Reason: string(gatewayv1.RouteReasonUnsupportedValue), Message: unsupported}
			default:
				for i, l := range a.listeners {
					l.attached++
					for _, h := range a.hostnames[i] {
						for _, c := range routeCandidates(route, int(l.spec.Port), h, weighted) {
							c.listenerHost = l.hostname()
							switch k, dup := seen[c.rule.Name]; {
							case !dup:
								seen[c.rule.Name] = len(cands)
								cands = append(cands, c)
							case compareHosts(c.listenerHost, cands[k].listenerHost) < 0:
								// One host through two listeners: the more
								// specific takes its requests.
								cands[k].listenerHost = c.listenerHost
							}
						}
					}
				}
			}
			t.Parents[key] = append(t.Parents[key], p)
		}
		for i := range t.Parents[key] {
			t.Parents[key][i].ResolvedRefs = resolved
		}
	}
	for _, l := range ls {
		t.Attached[l.spec.Name] = l.attached
		if l.refused != "" {
			t.Refused[l.spec.Name] = Reason{Reason: string(l.refused), Message: l.message}
		}
	}
	cands = append(cands, isolation(ls)...)
	slices.SortStableFunc(cands, precedence)
	next := map[int]int{}
	for _, c := range cands {
		next[c.rule.ListenerPort]++
		c.rule.Priority = next[c.rule.ListenerPort]
		t.Rules = append(t.Rules, c.rule)
	}
	slices.SortStableFunc(t.Rules, func(a, b renderer.Rule) int { return cmp.Compare(a.ListenerPort, b.ListenerPort) })
	return t
}

// resolve resolves a route's backendRefs once: per rule, those that
// resolve, with their weights (1 by default); and the route's
// ResolvedRefs, the reason of its first backendRef that does not, else
// ResolvedRefs (whether or not the route attaches anywhere).
func resolve(route *gatewayv1.HTTPRoute, backends Backends) ([][]Backend, Reason) {
	out := make([][]Backend, len(route.Spec.Rules))
	resolved := Reason{Reason: string(gatewayv1.RouteReasonResolvedRefs)}
	from := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: route.Namespace, Name: route.Name}
	for i, rule := range route.Spec.Rules {
		for _, ref := range rule.BackendRefs {
			if b, ok := resolveRef(from, ref.BackendRef, backends, &resolved); ok {
				out[i] = append(out[i], b)
			}
		}
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
	var out []candidate
	for i, rule := range route.Spec.Rules {
		base := renderer.Rule{ListenerPort: port, Hostname: host}
		for _, f := range rule.Filters {
			switch f.Type {
			case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
				base.RequestHeaders = headerChanges(f.RequestHeaderModifier)
			case gatewayv1.HTTPRouteFilterRequestRedirect:
				base.Redirect = redirect(f.RequestRedirect)
			}
		}
		if base.Redirect == nil {
			base.Backends = weighted[i]
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for j, m := range matches {
			r := base
			pathType, path := gatewayv1.PathMatchPathPrefix, "/"
			if m.Path != nil {
				if m.Path.Type != nil {
					pathType = *m.Path.Type
				}
				if m.Path.Value != nil {
					path = *m.Path.Value
				}
			}
			r.PathType, r.Path = cloudPathType(pathType), path
			if m.Method != nil {
				r.Method = string(*m.Method)
			}
			for _, h := range m.Headers {
				name := http.CanonicalHeaderKey(string(h.Name))
				if _, dup := r.Headers[name]; !dup { // the first of a name wins
					if r.Headers == nil {
						r.Headers = map[string]string{}
					}
					r.Headers[name] = h.Value
				}
			}
			r.Name = ruleName(route, i, j, port, host)
			out = append(out, candidate{rule: r, route: route, ruleIndex: i, matchIndex: j, headers: len(r.Headers)})
		}
	}
	return out
}

func cloudPathType(t gatewayv1.PathMatchType) string {
	if t == gatewayv1.PathMatchExact {
		return "exact"
	}
	return "prefix"
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
		h := l.hostname()
		if l.refused != "" || h == "" || (l.spec.Protocol != gatewayv1.HTTPProtocolType && l.spec.Protocol != gatewayv1.HTTPSProtocolType) {
			continue
		}
		covered := slices.ContainsFunc(ls, func(o *listener) bool {
			return o != l && o.refused == "" && o.spec.Port == l.spec.Port && o.spec.Protocol == l.spec.Protocol &&
				(o.hostname() == "" || covers(o.hostname(), h))
		})
		if !covered {
			continue
		}
		port := int(l.spec.Port)
		out = append(out, candidate{listenerHost: h, rule: renderer.Rule{
			Name:         shorten(fmt.Sprintf("listener/%s:%d@%s", l.spec.Name, port, h)),
			ListenerPort: port, Hostname: h, FixedResponse: &renderer.FixedResponse{StatusCode: http.StatusNotFound},
		}})
	}
	return out
}

// precedence orders candidates as the Gateway API does: by listener, the
// most specific hostname first, each ending with its catch-all (if any);
// then the most specific host name; an exact path, then the longest
// prefix; a method; the most headers; then the oldest route, the first
// by namespace/name, and the first rule and match of a route.
func precedence(a, b candidate) int {
	if c := cmp.Or(compareHosts(a.listenerHost, b.listenerHost), compareBool(a.route == nil, b.route == nil)); c != 0 || a.route == nil {
		return cmp.Or(c, cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort))
	}
	return cmp.Or(
		compareHosts(a.rule.Hostname, b.rule.Hostname),
		cmp.Compare(pathRank(a.rule), pathRank(b.rule)),
		cmp.Compare(-len(a.rule.Path), -len(b.rule.Path)),
		cmp.Compare(methodRank(a.rule), methodRank(b.rule)),
		cmp.Compare(-a.headers, -b.headers),
		a.route.CreationTimestamp.Compare(b.route.CreationTimestamp.Time),
		cmp.Compare(a.route.Namespace+"/"+a.route.Name, b.route.Namespace+"/"+b.route.Name),
		cmp.Compare(a.ruleIndex, b.ruleIndex), cmp.Compare(a.matchIndex, b.matchIndex),
		cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort),
	)
}

func pathRank(r renderer.Rule) int {
	if r.PathType == "exact" {
		return 0
	}
	return 1
}

func methodRank(r renderer.Rule) int {
	if r.Method != "" {
		return 0
	}
	return 1
}

// ruleName names a cloud rule after where it comes from; a name longer
// than the cloud's 128 characters keeps its start and a hash of it all.
func ruleName(route *gatewayv1.HTTPRoute, rule, match, port int, host string) string {
	if host == "" {
		host = "any"
	}
	return shorten(fmt.Sprintf("%s/%s/%d.%d:%d@%s", route.Namespace, route.Name, rule, match, port, host))
}

// shorten keeps a rule name within the cloud's 128 characters: a longer
// one keeps its start and a hash of it all.
func shorten(name string) string {
	if len(name) <= 128 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:111] + "#" + hex.EncodeToString(sum[:8])
}

func headerChanges(f *gatewayv1.HTTPHeaderFilter) *renderer.HeaderChanges {
	if f == nil {
		return nil
	}
	out := &renderer.HeaderChanges{Remove: slices.Clone(f.Remove)}
	for _, h := range f.Set {
		if out.Set == nil {
			out.Set = map[string]string{}
		}
		out.Set[string(h.Name)] = h.Value
	}
	for _, h := range f.Add {
		if out.Add == nil {
			out.Add = map[string]string{}
		}
		out.Add[string(h.Name)] = h.Value
	}
	return out
}

func redirect(f *gatewayv1.HTTPRequestRedirectFilter) *renderer.HTTPRedirect {
	if f == nil {
		return nil
	}
	out := &renderer.HTTPRedirect{StatusCode: http.StatusFound}
	if f.StatusCode != nil {
		out.StatusCode = *f.StatusCode
	}
	if f.Scheme != nil {
		out.Scheme = strings.ToLower(*f.Scheme)
	}
	if f.Hostname != nil {
		out.Hostname = string(*f.Hostname)
	}
	if f.Port != nil {
		out.Port = int(*f.Port)
	}
	return out
}

// unsupportedIn names the first feature of route the Example load
// balancer does not have ("" for none): regular expression and query
// parameter matches, filters other than request header changes and
// redirects, a redirect's path, filters on a backend.
func unsupportedIn(route *gatewayv1.HTTPRoute) string {
	for i, rule := range route.Spec.Rules {
		at := fmt.Sprintf("spec.rules[%d]", i)
		for j, m := range rule.Matches {
			mat := fmt.Sprintf("%s.matches[%d]", at, j)
			if m.Path != nil && m.Path.Type != nil && *m.Path.Type == gatewayv1.PathMatchRegularExpression {
				return mat + ".path: RegularExpression path matches are not supported"
			}
			for _, h := range m.Headers {
				if h.Type != nil && *h.Type != gatewayv1.HeaderMatchExact {
					return mat + ".headers: only Exact header matches are supported"
				}
			}
			if len(m.QueryParams) > 0 {
				return mat + ".queryParams: query parameter matches are not supported"
			}
		}
		for j, f := range rule.Filters {
			switch {
			case f.Type == gatewayv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil && f.RequestRedirect.Path != nil:
				return fmt.Sprintf("%s.filters[%d].requestRedirect.path: redirect paths are not supported", at, j)
			case f.Type != gatewayv1.HTTPRouteFilterRequestHeaderModifier && f.Type != gatewayv1.HTTPRouteFilterRequestRedirect:
				return fmt.Sprintf("%s.filters[%d]: filter %s is not supported (supported: RequestHeaderModifier, RequestRedirect)", at, j, f.Type)
			}
		}
		for j, b := range rule.BackendRefs {
			if len(b.Filters) > 0 {
				return fmt.Sprintf("%s.backendRefs[%d].filters: backend filters are not supported", at, j)
			}
		}
	}
	return ""
}
