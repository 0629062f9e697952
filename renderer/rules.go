package renderer

import (
	"github.com/zclconf/go-cty/cty"
)

// Rule is one rule of a load balancer's listener (the loadbalancer
// module's rules input; exampleapi.Rule in the cloud): what a Gateway's
// routes render to. On an http or https listener, one per HTTPRoute rule,
// match and host name, in the Gateway API's precedence (gateway.Rules);
// on a tls listener, one per TLSRoute and SNI host name; on a tcp or udp
// listener, the one rule of its route (no conditions).
type Rule struct {
	// Name is the rule's identity: the route, its rule and match, and the
	// host name, so a rule keeps its name when others come before it.
	Name         string
	ListenerPort int
	// ListenerProtocol is "udp" for a udp listener's rule ("" names the
	// listener of the TCP ports on ListenerPort: a port may have both).
	ListenerProtocol string
	Priority         int
	// Hostname is "" for any host.
	Hostname string
	// PathType is "exact" or "prefix" (with Path), or "" for any path.
	PathType, Path string
	Method         string
	Headers        map[string]string
	Backends       []RuleBackend
	Redirect       *HTTPRedirect
	RequestHeaders *HeaderChanges
	// FixedResponse answers the request with its status code, forwarding
	// nothing: a host-named listener's last rule (gateway.HTTP).
	FixedResponse *FixedResponse
}

// RuleBackend is where a rule forwards: a target pool, on Port of its
// targets (a Service's node port), with Weight.
type RuleBackend struct {
	TargetPoolID string
	Port, Weight int
}

// HTTPRedirect answers with StatusCode, the request's URL changed by the
// fields set.
type HTTPRedirect struct {
	Scheme, Hostname string
	Port, StatusCode int
}

// FixedResponse is the status code a rule answers with itself.
type FixedResponse struct {
	StatusCode int
}

// HeaderChanges change a request's headers before it is forwarded.
type HeaderChanges struct {
	Set, Add map[string]string
	Remove   []string
}

// value is the rule as the module takes it: what is unset is left out
// (the module's optional attributes read it as null).
func (r Rule) value() cty.Value {
	attrs := map[string]cty.Value{
		"name":          cty.StringVal(r.Name),
		"listener_port": cty.NumberIntVal(int64(r.ListenerPort)),
		"priority":      cty.NumberIntVal(int64(r.Priority)),
	}
	if r.ListenerProtocol != "" {
		attrs["listener_protocol"] = cty.StringVal(r.ListenerProtocol)
	}
	if r.Hostname != "" {
		attrs["hostnames"] = stringList([]string{r.Hostname})
	}
	if r.PathType != "" {
		attrs["path_type"], attrs["path"] = cty.StringVal(r.PathType), cty.StringVal(r.Path)
	}
	if r.Method != "" {
		attrs["method"] = cty.StringVal(r.Method)
	}
	if len(r.Headers) > 0 {
		attrs["headers"] = stringMap(r.Headers)
	}
	if len(r.Backends) > 0 {
		bs := make([]cty.Value, len(r.Backends))
		for i, b := range r.Backends {
			bs[i] = cty.ObjectVal(map[string]cty.Value{
				"target_pool_id": cty.StringVal(b.TargetPoolID),
				"port":           cty.NumberIntVal(int64(b.Port)),
				"weight":         cty.NumberIntVal(int64(b.Weight)),
			})
		}
		attrs["backends"] = cty.ListVal(bs)
	}
	if rd := r.Redirect; rd != nil {
		red := map[string]cty.Value{"status_code": cty.NumberIntVal(int64(rd.StatusCode))}
		if rd.Scheme != "" {
			red["scheme"] = cty.StringVal(rd.Scheme)
		}
		if rd.Hostname != "" {
			red["hostname"] = cty.StringVal(rd.Hostname)
		}
		if rd.Port != 0 {
			red["port"] = cty.NumberIntVal(int64(rd.Port))
		}
		attrs["redirect"] = cty.ObjectVal(red)
	}
	if f := r.FixedResponse; f != nil {
		attrs["fixed_response"] = cty.ObjectVal(map[string]cty.Value{"status_code": cty.NumberIntVal(int64(f.StatusCode))})
	}
	if h := r.RequestHeaders; h != nil {
		changes := map[string]cty.Value{}
		if len(h.Set) > 0 {
			changes["set"] = stringMap(h.Set)
		}
		if len(h.Add) > 0 {
			changes["add"] = stringMap(h.Add)
		}
		if len(h.Remove) > 0 {
			changes["remove"] = stringList(h.Remove)
		}
		attrs["request_headers"] = cty.ObjectVal(changes)
	}
	return cty.ObjectVal(attrs)
}

// rulesValue is the module's rules input: a tuple, as rules differ
// in the attributes they set.
func rulesValue(rules []Rule) cty.Value {
	vs := make([]cty.Value, len(rules))
	for i, r := range rules {
		vs[i] = r.value()
	}
	return cty.TupleVal(vs)
}
