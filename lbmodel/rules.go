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
	Priority         int    `json:"priority"`
	// Hostname is "" for any host.
	Hostname string `json:"hostname,omitempty"`
	// PathType is "exact" or "prefix" (with Path), or "" for any path.
	PathType       string            `json:"pathType,omitempty"`
	Path           string            `json:"path,omitempty"`
	Method         string            `json:"method,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Backends       []Backend         `json:"backends,omitempty"`
	Redirect       *HTTPRedirect     `json:"redirect,omitempty"`
	RequestHeaders *HeaderChanges    `json:"requestHeaders,omitempty"`
	// FixedResponse answers the request with its status code, forwarding
	// nothing: a host-named listener's last rule (gateway.HTTP).
	FixedResponse *FixedResponse `json:"fixedResponse,omitempty"`
}

// HTTPRedirect answers with StatusCode, the request's URL changed by the
// fields set.
type HTTPRedirect struct {
	Scheme     string `json:"scheme,omitempty"`
	Hostname   string `json:"hostname,omitempty"`
	Port       int    `json:"port,omitempty"`
	StatusCode int    `json:"statusCode"`
}

// FixedResponse is the status code a rule answers with itself.
type FixedResponse struct {
	StatusCode int `json:"statusCode"`
}

// HeaderChanges change a request's headers before it is forwarded.
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
		if !b.Reaches() {
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
		PathType: r.PathType, Path: r.Path, Method: r.Method, Headers: headerList(r.Headers)}
	if r.Hostname != "" {
		out.Hostnames = []string{r.Hostname}
	}
	for _, b := range r.Backends {
		if b.Reaches() {
			out.Backends = append(out.Backends, exampleapi.RuleBackend{TargetPoolID: b.TargetPoolID, Port: b.Port, Weight: b.Weight})
		}
	}
	if rd := r.Redirect; rd != nil {
		out.Redirect = &exampleapi.Redirect{Scheme: rd.Scheme, Hostname: rd.Hostname, Port: rd.Port, StatusCode: rd.StatusCode}
	}
	if f := r.FixedResponse; f != nil {
		out.FixedResponse = &exampleapi.FixedResponse{StatusCode: f.StatusCode}
	}
	if h := r.RequestHeaders; h != nil {
		out.RequestHeaders = &exampleapi.HeaderModifier{Set: headerList(h.Set), Add: headerList(h.Add), Remove: h.Remove}
	}
	return out
}

func headerList(m map[string]string) []exampleapi.HeaderMatch {
	var out []exampleapi.HeaderMatch
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, exampleapi.HeaderMatch{Name: name, Value: m[name]})
	}
	return out
}
