package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// LoadBalancer is a Gateway's load balancer as decided: its cloud
// listeners and rules, what the engine renders and applies.
type LoadBalancer = lbmodel.LoadBalancer

// Rule is one of its cloud rules.
type Rule = lbmodel.Rule

// Certificates are what each HTTPS listener's certificateRefs resolved
// to, by listener name (a ListenerSet's listener by its ListenerID).
type Certificates map[gatewayv1.SectionName]ListenerCertificates

// ListenerCertificates are a listener's certificates: keys of
// LoadBalancer.Certificates, or why they cannot be served (a ResolvedRefs
// reason: InvalidCertificateRef, RefNotPermitted).
type ListenerCertificates struct {
	Keys       []string
	Unresolved *Reason
}

// Program is what the cloud builds of gw now: one cloud listener per port
// and transport of its accepted listeners (its ListenerSets' with them) (an HTTPS one serving the
// certificates of every HTTPS listener on its port, certs resolved; a TLS
// one passing TLS through), with t's rules on them. Pending are the
// accepted listeners not built, by name, with why: HTTPS whose
// certificates do not resolve; a ListenerSet's past the cloud's limits
// on listeners and certificates (PortUnavailable). Unreachable names the
// rules that lose a backend the cloud cannot reach: a Service without a
// node port (type ClusterIP) resolves, as the Gateway API asks, but gets
// no requests.
// A backend whose BackendTLSPolicy does not resolve is left out too.
func Program(gw *gatewayv1.Gateway, t Translation, certs Certificates) (lb LoadBalancer, pending map[gatewayv1.SectionName]Reason, unreachable []string) {
	lb = LoadBalancer{Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)}
	pending = map[gatewayv1.SectionName]Reason{}
	// The Gateway's listeners first, then the ListenerSets' oldest
	// first: on a shared cloud listener, the Gateway's certificates come
	// before any ListenerSet's.
	type entry struct {
		id gatewayv1.SectionName
		l  gatewayv1.Listener
		// set: a ListenerSet's (of namespace ns), built only within the
		// cloud's limits and its namespace's share of a port's
		// certificates.
		set bool
		ns  string
	}
	var entries []entry
	for _, l := range gw.Spec.Listeners {
		if _, refused := t.Refused[l.Name]; !refused {
			entries = append(entries, entry{id: l.Name, l: l})
		}
	}
	for _, sl := range t.SetListeners {
		entries = append(entries, entry{id: sl.ID, l: sl.Spec, set: true, ns: sl.Set.Namespace})
	}
	// shares counts the certificates each namespace's ListenerSets added,
	// by cloud listener (its index in lb.Listeners).
	shares := map[int]map[string]int{}
	for _, e := range entries {
		l := e.l
		var keys []string
		switch c := certs[e.id]; {
		case l.Protocol == gatewayv1.HTTPSProtocolType && c.Unresolved != nil:
			pending[e.id] = Reason{Reason: string(gatewayv1.ListenerReasonInvalid), Message: "its certificateRefs do not resolve: " + c.Unresolved.Message}
			continue
		case l.Protocol == gatewayv1.HTTPSProtocolType && len(c.Keys) == 0:
			pending[e.id] = Reason{Reason: string(gatewayv1.ListenerReasonInvalid), Message: "an HTTPS listener terminates TLS with its certificateRefs, and has none"}
			continue
		case l.Protocol == gatewayv1.HTTPSProtocolType:
			keys = c.Keys
		}
		protocol, p := cloudProtocol(l.Protocol), int(l.Port)
		i := slices.IndexFunc(lb.Listeners, func(cl lbmodel.Listener) bool { return cl.Port == p && cl.Protocol == protocol })
		tenant, added := e.set && e.ns != gw.Namespace, newKeys(lb, i, keys)
		if e.set {
			why := pastLimits(lb, i, len(added))
			if n := len(added); why == "" && tenant && shares[i][e.ns]+n > MaxTenantCertificates {
				why = fmt.Sprintf("the listeners of ListenerSets of a namespace other than the Gateway's add at most %d certificates to a port, "+
					"and those of %s before this one added %d, for the %d it would add (the Gateway's listeners first, then the oldest ListenerSet's)",
					MaxTenantCertificates, e.ns, shares[i][e.ns], n)
			}
			if why != "" {
				pending[e.id] = Reason{Reason: string(gatewayv1.ListenerReasonPortUnavailable), Message: why}
				continue
			}
		}
		if i < 0 {
			lb.Listeners = append(lb.Listeners, lbmodel.Listener{Protocol: protocol, Port: p})
			i = len(lb.Listeners) - 1
		}
		if tenant && len(added) > 0 {
			if shares[i] == nil {
				shares[i] = map[string]int{}
			}
			shares[i][e.ns] += len(added)
		}
		lb.Listeners[i].Certificates = append(lb.Listeners[i].Certificates, added...)
	}
	for _, r := range t.Rules {
		built := slices.ContainsFunc(lb.Listeners, func(cl lbmodel.Listener) bool {
			return cl.Port == r.ListenerPort && (cl.Protocol == "udp") == (r.ListenerProtocol == "udp")
		})
		if !built {
			continue
		}
		// A backend whose BackendTLSPolicy does not resolve is left out
		// (its policy's status says why): fail closed.
		r.Backends = slices.DeleteFunc(slices.Clone(r.Backends), func(b Backend) bool { return b.Closed != "" })
		if slices.ContainsFunc(r.Backends, func(b Backend) bool { return !b.Reaches() }) {
			unreachable = append(unreachable, r.Name)
			r.Backends = slices.DeleteFunc(slices.Clone(r.Backends), func(b Backend) bool { return !b.Reaches() })
		}
		lb.Rules = append(lb.Rules, r)
	}
	return lb, pending, unreachable
}

// MaxTenantCertificates is the most certificates the ListenerSets'
// listeners of one namespace other than the Gateway's may add to one
// cloud listener of its load balancer: the cloud serves at most
// exampleapi.MaxListenerCertificates on a port, so without a share one
// team's older listeners could take every place of the port from the
// others'. The Gateway's namespace has them all.
const MaxTenantCertificates = 5

// newKeys are those of keys lb's cloud listener i (-1: a new one) does
// not serve yet, each once.
func newKeys(lb LoadBalancer, i int, keys []string) []string {
	var have, out []string
	if i >= 0 {
		have = lb.Listeners[i].Certificates
	}
	for _, k := range keys {
		if !slices.Contains(have, k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// pastLimits is why a listener that would add added certificates is not
// built on lb's cloud listener i (-1: a new one) ("" when it is): the
// cloud refuses a load balancer past its listeners, or a cloud listener
// past its certificates, whole. Translate keeps the ListenerSets'
// listeners within the listeners (setlimits.go); this holds the
// certificates as their certificateRefs resolved.
func pastLimits(lb LoadBalancer, i, added int) string {
	if i < 0 && len(lb.Listeners) >= exampleapi.MaxListeners {
		return fmt.Sprintf("the Example load balancer takes at most %d listeners (one per port and protocol), "+
			"all of them taken by the listeners before this one (the Gateway's first, then the oldest ListenerSet's)", exampleapi.MaxListeners)
	}
	var have []string
	if i >= 0 {
		have = lb.Listeners[i].Certificates
	}
	n := len(have) + added
	if n > len(have) && n > exampleapi.MaxListenerCertificates {
		return fmt.Sprintf("the Example load balancer's HTTPS listener on its port serves at most %d certificates, and with this one's it would serve %d "+
			"(the Gateway's listeners' first, then the oldest ListenerSet's)", exampleapi.MaxListenerCertificates, n)
	}
	return ""
}

// cloudProtocol is the cloud listener protocol of a Gateway listener's.
func cloudProtocol(p gatewayv1.ProtocolType) string {
	switch p {
	case gatewayv1.HTTPSProtocolType:
		return "https"
	case gatewayv1.TLSProtocolType:
		return "tls"
	case gatewayv1.TCPProtocolType:
		return "tcp"
	case gatewayv1.UDPProtocolType:
		return "udp"
	}
	return "http"
}
