package lbmodel

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Rule is one rule of a load balancer's listener (the loadbalancer
// module's rules input; exampleapi.Rule in the cloud): what a Gateway's
// routes become. On an http or https listener, one per HTTPRoute rule,
// match and host name, in the Gateway API's precedence (gateway.Rules);
// on a tls listener, one per TLSRoute and SNI host name; on a tcp or udp
// listener, the one rule of its route (no conditions).
type Rule struct {
	// Name is the rule's identity: the route, its rule and match, and the
	// host name, so a rule keeps its name when others come before it.
	Name         string `json:"name"`
	ListenerPort int    `json:"listenerPort"`
	// ListenerProtocol is "udp" for a udp listener's rule ("" names the
	// listener of the TCP ports on ListenerPort: a port may have both).
	ListenerProtocol string `json:"listenerProtocol,omitempty"`
	// Priority orders the rule among its listener's, or on an http or
	// https listener OrderKey does instead (docs/adr/0028): a rule has
	// one of them.
	Priority int    `json:"priority,omitempty"`
	OrderKey string `json:"orderKey,omitempty"`
	// Hostname is "" for any host.
	Hostname string `json:"hostname,omitempty"`
	// PathType is "exact" or "prefix" (with Path), or "" for any path.
	PathType string            `json:"pathType,omitempty"`
	Path     string            `json:"path,omitempty"`
	Method   string            `json:"method,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	// QueryParams are by name as written (names are case sensitive).
	QueryParams     map[string]string `json:"queryParams,omitempty"`
	Backends        []Backend         `json:"backends,omitempty"`
	Redirect        *HTTPRedirect     `json:"redirect,omitempty"`
	RequestHeaders  *HeaderChanges    `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderChanges    `json:"responseHeaders,omitempty"`
	Rewrite         *URLRewrite       `json:"rewrite,omitempty"`
	// FixedResponse answers the request with its status code, forwarding
	// nothing: a host-named listener's last rule (gateway.HTTP).
	FixedResponse *FixedResponse `json:"fixedResponse,omitempty"`
	// Timeouts and Retry bound and repeat what the rule forwards.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	Retry    *Retry    `json:"retry,omitempty"`
	// CORS answers browsers' cross-origin requests (a CORS filter), as
	// the cloud takes it.
	CORS *exampleapi.CORS `json:"cors,omitempty"`
	// SessionPersistence keeps a client on one target (a rule's
	// sessionPersistence), as the cloud takes it.
	SessionPersistence *exampleapi.SessionPersistence `json:"sessionPersistence,omitempty"`
	// Route is the route of a Gateway whose rule set holds the rule
	// (docs/adr/0028): an HTTP or GRPC route's. Nil: the load
	// balancer's own (a listener's catch-all, a claimed host name's
	// fence, an L4 route's numbered rule, a Service's rules).
	Route *RouteRef `json:"route,omitempty"`
}

// RouteRef names a Gateway API route: its kind (HTTPRoute, GRPCRoute),
// namespace and name.
type RouteRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Key is r as one string: kind/namespace/name.
func (r RouteRef) Key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// Timeouts of a forwarded request in milliseconds, 0 for none: the whole
// request's (retries included), and each try's to a backend.
type Timeouts struct {
	RequestMS        int `json:"requestMs,omitempty"`
	BackendRequestMS int `json:"backendRequestMs,omitempty"`
}

// Retry sends a request again, at most Attempts times more, when a try
// answers one of StatusCodes (or none), BackoffMS apart.
type Retry struct {
	Attempts    int   `json:"attempts"`
	StatusCodes []int `json:"statusCodes,omitempty"`
	BackoffMS   int   `json:"backoffMs,omitempty"`
}

// HTTPRedirect answers with StatusCode, the request's URL changed by the
// fields set: Path replaces the path, PathPrefix what the rule's prefix
// matched.
type HTTPRedirect struct {
	Scheme     string `json:"scheme,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	Port       int    `json:"port,omitempty"`
	Path       string `json:"path,omitempty"`
	PathPrefix string `json:"pathPrefix,omitempty"`
	StatusCode int    `json:"statusCode"`
}

// URLRewrite changes the request's host and path before it is
// forwarded, as HTTPRedirect its Location.
type URLRewrite struct {
	Hostname   string `json:"hostname,omitempty"`
	Path       string `json:"path,omitempty"`
	PathPrefix string `json:"pathPrefix,omitempty"`
}

// FixedResponse is the status code a rule answers with itself.
type FixedResponse struct {
	StatusCode int `json:"statusCode"`
}

// HeaderChanges change a request's headers before it is forwarded, or a
// response's before it is answered.
type HeaderChanges struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// undecidedPool stands, in Validate, for the target pool of a backend
// whose pool is not chosen yet: the front-end fills in its id after the
// translation, and the check reads only its form.
const undecidedPool = "tp-every-node"

// Validate is the cloud's own check of the rule (exampleapi.CheckRule),
// on the rule as the cloud gets it (Cloud).
func (r Rule) Validate() error {
	c := r.Cloud()
	// Cloud keeps the backends that reach something, in order: each
	// Service port's pods stand for a pool of their own.
	var pods []ServicePort
	k := 0
	for _, b := range r.Backends {
		if !b.Forwards() {
			continue
		}
		undecided := undecidedPool
		if b.Pods != nil {
			i := slices.Index(pods, *b.Pods)
			if i < 0 {
				i, pods = len(pods), append(pods, *b.Pods)
			}
			undecided = fmt.Sprintf("%s-pods-%d", undecidedPool, i)
		}
		c.Backends[k].TargetPoolID = cmp.Or(c.Backends[k].TargetPoolID, undecided)
		k++
	}
	return exampleapi.CheckRule(c)
}

// Cloud is r as the cloud gets it (the loadbalancer module's and the
// provider's conversion): maps become lists sorted by name, and a
// backend that reaches nothing (no node port, no pods) is left out.
func (r Rule) Cloud() exampleapi.Rule {
	out := exampleapi.Rule{Name: r.Name, ListenerPort: r.ListenerPort, ListenerProtocol: r.ListenerProtocol, Priority: r.Priority,
		OrderKey: r.OrderKey, PathType: r.PathType, Path: r.Path, Method: r.Method, Headers: headerList(r.Headers)}
	if r.Hostname != "" {
		out.Hostnames = []string{r.Hostname}
	}
	for _, p := range headerList(r.QueryParams) {
		out.QueryParams = append(out.QueryParams, exampleapi.QueryParamMatch(p))
	}
	for _, b := range r.Backends {
		if b.Forwards() {
			out.Backends = append(out.Backends, exampleapi.RuleBackend{TargetPoolID: b.TargetPoolID, Port: b.Port, Weight: b.Weight,
				Protocol: b.Protocol, TLS: b.TLS})
		}
	}
	if rd := r.Redirect; rd != nil {
		out.Redirect = &exampleapi.Redirect{Scheme: rd.Scheme, Hostname: rd.Hostname, Port: rd.Port, Path: rd.Path,
			PathPrefix: rd.PathPrefix, StatusCode: rd.StatusCode}
	}
	if rw := r.Rewrite; rw != nil {
		out.Rewrite = &exampleapi.Rewrite{Hostname: rw.Hostname, Path: rw.Path, PathPrefix: rw.PathPrefix}
	}
	if f := r.FixedResponse; f != nil {
		out.FixedResponse = &exampleapi.FixedResponse{StatusCode: f.StatusCode}
	}
	out.RequestHeaders, out.ResponseHeaders = r.RequestHeaders.cloud(), r.ResponseHeaders.cloud()
	out.CORS, out.SessionPersistence = r.CORS, r.SessionPersistence
	if t := r.Timeouts; t != nil {
		out.Timeouts = &exampleapi.Timeouts{RequestMS: t.RequestMS, BackendRequestMS: t.BackendRequestMS}
	}
	if rt := r.Retry; rt != nil {
		out.Retry = &exampleapi.Retry{Attempts: rt.Attempts, StatusCodes: slices.Clone(rt.StatusCodes), BackoffMS: rt.BackoffMS}
	}
	return out
}

// cloud is h as the cloud gets it; nil is none.
func (h *HeaderChanges) cloud() *exampleapi.HeaderModifier {
	if h == nil {
		return nil
	}
	return &exampleapi.HeaderModifier{Set: headerList(h.Set), Add: headerList(h.Add), Remove: h.Remove}
}

func headerList(m map[string]string) []exampleapi.HeaderMatch {
	var out []exampleapi.HeaderMatch
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, exampleapi.HeaderMatch{Name: name, Value: m[name]})
	}
	return out
}
