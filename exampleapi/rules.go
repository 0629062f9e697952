package exampleapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"
)

// Rules route what a load balancer's listeners get: on http and https
// listeners, HTTP requests (L7: host, path, method, headers); on tls
// listeners, TCP connections by the SNI name of their ClientHello (TLS
// passthrough); on tcp and udp listeners, every connection (or datagram)
// to the rule's backends. A listener with rules serves a request or
// connection by the rule of the lowest priority whose conditions all hold,
// and answers 404 (a tls connection is reset) when none does; a listener
// without rules forwards everything to the load balancer's targets, as
// before rules existed. This is what a Gateway API Gateway's routes render
// to: HTTPRoutes one rule per route rule and match, TLSRoutes one per
// host name, TCPRoutes and UDPRoutes one each, ordered by the controller.
// A rule may also answer an HTTP request itself (FixedResponse): a
// Gateway's controller ends each host-named listener's rules with a
// catch-all 404 for its host names, so a request for such a host that no
// route of that listener matches does not fall through to the rules of a
// wildcard or host-less listener on the same port.

// Limits of a load balancer's rules.
const (
	// MaxRules is the most rules of one load balancer, all listeners: a
	// Gateway shared by a thousand teams' routes, one host name each.
	MaxRules = 2000
	// MaxRulePriority is the highest priority (1 is the first looked at).
	MaxRulePriority = 50000
	// MaxRuleHostnames, MaxRuleHeaders, MaxRuleQueryParams and
	// MaxRuleBackends bound a rule's lists; MaxHeaderChanges bounds each
	// list of a header modifier.
	MaxRuleHostnames   = 16
	MaxRuleHeaders     = 16
	MaxRuleQueryParams = 16
	MaxRuleBackends    = 16
	MaxHeaderChanges   = 16
	// MaxBackendWeight is the highest backend weight (Gateway API's).
	MaxBackendWeight = 1000000
	// MaxSimulatedRequests is the most requests one SimulateRequests call
	// sends.
	MaxSimulatedRequests = 1000
)

// Path match types (Rule.PathType).
const (
	PathExact  = "exact"
	PathPrefix = "prefix"
	// PathRegex: Path is a regular expression of RE2's syntax (Go's
	// regexp) that the whole path must match, as if between ^ and $.
	PathRegex = "regex"
)

// PathTypes are the accepted Rule.PathType values.
var PathTypes = []string{PathExact, PathPrefix, PathRegex}

// RuleMethods are the accepted Rule.Method values.
var RuleMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// RedirectCodes are the accepted Redirect.StatusCode values.
var RedirectCodes = []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}

// StatusRange is the HTTP status codes from Min to Max, both included.
type StatusRange struct{ Min, Max int }

func (r StatusRange) String() string { return strconv.Itoa(r.Min) + "-" + strconv.Itoa(r.Max) }

// Contains tells whether code is in r.
func (r StatusRange) Contains(code int) bool { return code >= r.Min && code <= r.Max }

// FixedResponseCodes are the accepted FixedResponse.StatusCode values: a
// success or an error. A 3xx without a Location is no redirect, and
// Redirect makes those; a 1xx is no final answer.
var FixedResponseCodes = []StatusRange{{200, 299}, {400, 599}}

// IsFixedResponseCode tells whether code is one of FixedResponseCodes.
func IsFixedResponseCode(code int) bool {
	return slices.ContainsFunc(FixedResponseCodes, func(r StatusRange) bool { return r.Contains(code) })
}

// Rule is one routing rule of a listener. Its conditions (host names,
// path, method, headers, query parameters) must all hold; an empty one holds for every
// request. Its action is a redirect, a fixed response, or forwarding to
// its weighted backends; a rule with none of them (or whose backends all
// weigh 0) answers 500. On a tls listener the only condition is Hostnames
// (the SNI name), on tcp and udp listeners there is none, and the rules of
// all three only forward (Backends).
type Rule struct {
	// Name identifies the rule, unique per load balancer (1-128
	// characters: letters, digits and ._-/:@#*), so a change of its
	// priority is that rule moving, not every rule after it changing.
	Name string `json:"name"`
	// ListenerPort is the port of the listener it routes.
	ListenerPort int `json:"listener_port"`
	// ListenerProtocol names the listener on ListenerPort when the port
	// has two: a udp one and one of the TCP ports (tcp, tls, http or
	// https). Empty: the port's listener, the TCP one when it has both.
	// Set, it must be the protocol of a listener on the port.
	ListenerProtocol string `json:"listener_protocol,omitempty"`
	// Priority orders the listener's rules, 1 to MaxRulePriority, unique
	// per listener (tcp/53 and udp/53 are two): the lowest that matches
	// serves the request. A rule of the load balancer has a Priority or,
	// on an http or https listener, an OrderKey instead; a rule set's
	// rule has only an OrderKey (rulesets.go).
	Priority int `json:"priority,omitempty"`
	// OrderKey places the rule after the listener's numbered rules, among
	// its keyed ones by byte order (CheckOrderKey): 1 to MaxOrderKeyLen
	// printable ASCII characters without spaces.
	OrderKey string `json:"order_key,omitempty"`
	// Hostnames match the request's Host (without its port, case
	// insensitive), or a tls connection's SNI name: a name matches itself,
	// "*.example.com" matches every name with one or more labels before
	// ".example.com". Empty: any.
	Hostnames []string `json:"hostnames,omitempty"`
	// PathType (exact, prefix or regex) and Path match the request's path
	// (http and https only, as are Method, Headers, QueryParams, Redirect,
	// FixedResponse, RequestHeaders, ResponseHeaders and Rewrite). A prefix
	// matches whole path elements: "/api" matches "/api" and "/api/v1",
	// not "/apis"; a regex the whole path ("/api/v[0-9]+" matches
	// "/api/v2", not "/api/v2/x"). Empty: any path.
	PathType string `json:"path_type,omitempty"`
	Path     string `json:"path,omitempty"`
	// Method matches the request's method exactly. Empty: any.
	Method string `json:"method,omitempty"`
	// Headers must all be present with exactly these values (names are
	// case insensitive).
	Headers []HeaderMatch `json:"headers,omitempty"`
	// QueryParams must all be in the request's query, each name's first
	// value exactly this one (names are case sensitive).
	QueryParams []QueryParamMatch `json:"query_params,omitempty"`
	// Backends share the matched requests by weight.
	Backends []RuleBackend `json:"backends,omitempty"`
	// Redirect answers the request with a redirect instead (exclusive
	// with Backends and FixedResponse).
	Redirect *Redirect `json:"redirect,omitempty"`
	// FixedResponse answers the request with its status code instead:
	// the load balancer forwards nothing, so it is exclusive with
	// Backends, Redirect, RequestHeaders and Rewrite.
	FixedResponse *FixedResponse `json:"fixed_response,omitempty"`
	// RequestHeaders change the request's headers before it is
	// forwarded.
	RequestHeaders *HeaderModifier `json:"request_headers,omitempty"`
	// ResponseHeaders change the headers of the rule's answer before the
	// client gets it: the backend's response, the redirect or the fixed
	// response.
	ResponseHeaders *HeaderModifier `json:"response_headers,omitempty"`
	// Rewrite changes the request's host or path before it is forwarded
	// (exclusive with Redirect and FixedResponse).
	Rewrite *Rewrite `json:"rewrite,omitempty"`
	// Timeouts bound how long the load balancer waits for the answer of
	// a request it forwards; Retry sends it again on a failed try. Both
	// forward, so neither goes with Redirect or FixedResponse.
	Timeouts *Timeouts `json:"timeouts,omitempty"`
	Retry    *Retry    `json:"retry,omitempty"`
	// CORS answers browsers' cross-origin requests (cors.go).
	CORS *CORS `json:"cors,omitempty"`
	// SessionPersistence keeps a client on one target (session.go).
	SessionPersistence *SessionPersistence `json:"session_persistence,omitempty"`
}

// HeaderMatch is a header a request must carry with this exact value.
type HeaderMatch struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// QueryParamMatch is a query parameter a request must carry with this
// exact value: a header match's shape, its name compared as written.
type QueryParamMatch HeaderMatch

// RuleBackend is where a rule forwards: a target pool of the load
// balancer's region, on Port of its targets (a Service's node port). A
// pool of target type ip has Port 0: its targets carry their ports.
type RuleBackend struct {
	TargetPoolID string `json:"target_pool_id"`
	Port         int    `json:"port"`
	// Weight is its share, 0 to MaxBackendWeight: a backend of weight 0
	// gets nothing.
	Weight int `json:"weight"`
	// Protocol is how the load balancer speaks to the targets, one of
	// BackendProtocols (http and https listeners only): empty is
	// BackendHTTP. Whatever the client spoke, the request is forwarded
	// in it.
	Protocol string `json:"protocol,omitempty"`
	// TLS, when set, re-encrypts to the targets (protocol http only: the
	// request goes in HTTP/1.1 over TLS) and verifies their certificate
	// (backendtls.go).
	TLS *BackendTLS `json:"tls,omitempty"`
}

// Backend protocols (RuleBackend.Protocol).
const (
	// BackendHTTP is HTTP/1.1, the default: what a WebSocket's upgrade
	// needs.
	BackendHTTP = "http"
	// BackendH2C is HTTP/2 over cleartext with prior knowledge (a
	// Service port of appProtocol kubernetes.io/h2c): no upgrade, so no
	// WebSocket.
	BackendH2C = "h2c"
)

// BackendProtocols are the accepted RuleBackend.Protocol values.
var BackendProtocols = []string{BackendHTTP, BackendH2C}

// Redirect answers a request with StatusCode (301, 302, 303, 307 or 308)
// and a Location of the request's URL with the fields set here replaced.
type Redirect struct {
	// Scheme is http or https; empty keeps the request's.
	Scheme string `json:"scheme,omitempty"`
	// Hostname replaces the request's host name; empty keeps it.
	Hostname string `json:"hostname,omitempty"`
	// Port replaces the port; 0 is the scheme's well-known port when
	// Scheme is set, else the listener's. A scheme's own port is left
	// out of the Location (as Gateway API asks).
	Port int `json:"port,omitempty"`
	// Path replaces the request's path, or PathPrefix the part of it the
	// rule's prefix matched (exclusive); empty keeps it.
	Path       string `json:"path,omitempty"`
	PathPrefix string `json:"path_prefix,omitempty"`
	StatusCode int    `json:"status_code"`
}

// Rewrite changes a request before it is forwarded: Hostname replaces
// its Host, Path its path or PathPrefix the part of it the rule's prefix
// matched (exclusive). What is empty is kept.
type Rewrite struct {
	Hostname   string `json:"hostname,omitempty"`
	Path       string `json:"path,omitempty"`
	PathPrefix string `json:"path_prefix,omitempty"`
}

// FixedResponse answers a request with StatusCode, one of
// FixedResponseCodes (e.g. a 404 for a host whose listener has no route
// for the request).
type FixedResponse struct {
	StatusCode int `json:"status_code"`
}

// Timeouts of a forwarded request, in milliseconds, each
// MinTimeoutMS-MaxTimeoutMS or 0 (none). Past one, the load balancer
// answers 504 and closes the connection of the try under way.
type Timeouts struct {
	// RequestMS bounds the whole request, from its headers to the end of
	// the answer, retries and their backoff included.
	RequestMS int `json:"request_ms,omitempty"`
	// BackendRequestMS bounds each try to a backend: at most RequestMS.
	BackendRequestMS int `json:"backend_request_ms,omitempty"`
}

// Retry sends a request to the rule's backends again (a target picked
// anew) when a try answers one of StatusCodes or its target does not
// answer at all (a connection refused or cut), at most Attempts times
// more, waiting BackoffMS before each; the client gets the last try's
// answer. Only a replayable request is retried: a body of at most
// MaxRetryBodyBytes, no upgrade (WebSocket).
type Retry struct {
	Attempts    int   `json:"attempts"`
	StatusCodes []int `json:"status_codes,omitempty"`
	BackoffMS   int   `json:"backoff_ms,omitempty"`
}

// Limits of timeouts and retries.
const (
	MinTimeoutMS      = 1
	MaxTimeoutMS      = 3600000 // an hour
	MaxRetryAttempts  = 10
	MaxRetryBackoffMS = 60000 // a minute
	// MaxRetryBodyBytes is the largest request body the load balancer
	// keeps to send again; a longer one is sent once.
	MaxRetryBodyBytes = 64 << 10
)

// RetryCodes are the status codes a Retry may name: a server's errors.
var RetryCodes = StatusRange{500, 599}

// HeaderModifier changes a request's (or a response's) headers: Set replaces (or adds) a
// header, Add appends a value, Remove drops a header.
type HeaderModifier struct {
	Set    []HeaderMatch `json:"set,omitempty"`
	Add    []HeaderMatch `json:"add,omitempty"`
	Remove []string      `json:"remove,omitempty"`
}

// SimulatedRequest is Count identical requests to a listener of a load
// balancer, or Count connections to a tcp, tls or udp listener: the
// simulator routes them by the listener's rules, so tests see which
// backend would answer. A real cloud has no such endpoint.
type SimulatedRequest struct {
	ListenerPort int `json:"listener_port"`
	// Protocol picks the listener on ListenerPort: "udp" its udp
	// listener; empty its listener of the TCP ports, or its only
	// listener. Any other value must be the protocol of the port's
	// listener of the TCP ports.
	Protocol string `json:"protocol,omitempty"`
	// Host is the Host header (a port in it is ignored); for a tls
	// listener, the SNI server name of the ClientHello. tcp and udp
	// listeners ignore it.
	Host string `json:"host"`
	// Path is the request's path, "/" when empty. http and https only,
	// as are Query, Method and Headers: a tcp, tls or udp connection has
	// none.
	Path string `json:"path,omitempty"`
	// Query is the request's query string, without its '?'
	// ("animal=whale&color=blue").
	Query string `json:"query,omitempty"`
	// Method is GET when empty.
	Method  string            `json:"method,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Count is 1 when 0, at most MaxSimulatedRequests.
	Count int `json:"count,omitempty"`
}

// RequestOutcome is how the load balancer answered simulated requests
// (or connections).
type RequestOutcome struct {
	// Status is 200 (forwarded), the redirect's code, the fixed
	// response's code, 404 (no rule matched; for a tls connection, no
	// rule's host name is its SNI name, and it is reset), 500 (the rule
	// has no backend with weight) or 503 (its backends' pools have no
	// targets; or, on a listener without rules, the load balancer has no
	// targets). Rule tells a fixed response's 404 from no rule matching.
	Status int `json:"status"`
	// RulePriority is the priority of the rule that matched (0: none, the
	// listener has no rules, or the rule is keyed).
	RulePriority int `json:"rule_priority,omitempty"`
	// Rule names the rule that matched, and RuleSet its rule set ("": the
	// load balancer's own rules).
	Rule    string `json:"rule,omitempty"`
	RuleSet string `json:"rule_set,omitempty"`
	// Location is the redirect's.
	Location string `json:"location,omitempty"`
	// Backends counts the requests (or connections) each backend got, by
	// "<target pool id>:<port>"; a listener without rules counts its
	// load balancer's own targets as "targets".
	Backends map[string]int `json:"backends,omitempty"`
	// RequestHeaders are the headers as forwarded (names in canonical
	// form, values of one header joined with ", "); empty for tcp, tls
	// and udp.
	RequestHeaders map[string]string `json:"request_headers,omitempty"`
	// RequestHost and RequestPath are the Host and path as forwarded,
	// when the rule rewrites them.
	RequestHost string `json:"request_host,omitempty"`
	RequestPath string `json:"request_path,omitempty"`
}

// SimulateRequests sends simulated requests to a load balancer's listener
// (the simulator's own endpoint).
func (c *Client) SimulateRequests(ctx context.Context, lbID string, in SimulatedRequest) (*RequestOutcome, error) {
	return call[RequestOutcome](ctx, c.t, request{op: "SimulateRequests", method: http.MethodPost,
		path: loadBalancers.item(lbID) + "/http-requests", in: in})
}
