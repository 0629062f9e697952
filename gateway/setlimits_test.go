package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// listenerSet is ListenerSet ns/name, created age before t0, naming the
// Gateway infra/gw.
func listenerSet(ns, name string, age time.Duration, ls ...gatewayv1.ListenerEntry) *gatewayv1.ListenerSet {
	return &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))},
			Listeners: ls}}
}

// entry is a ListenerSet's listener (host "" for none).
func entry(name string, port int32, protocol gatewayv1.ProtocolType, host string) gatewayv1.ListenerEntry {
	e := gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol}
	if host != "" {
		e.Hostname = ptr.To(gatewayv1.Hostname(host))
	}
	return e
}

// openGateway is the shared Gateway (HTTP on 80, every namespace's
// routes) admitting every namespace's ListenerSets, with ls.
func openGateway(ls ...gatewayv1.Listener) *gatewayv1.Gateway {
	gw := sharedGateway()
	gw.Spec.Listeners = append(gw.Spec.Listeners, ls...)
	gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	return gw
}

// floods are sets ListenerSets of team-m (the oldest first, all newer
// than a day) of n HTTP listeners each, listener k of set i on port
// port(i, k) with host name host(i, k).
func floods(sets, n int, port func(i, k int) int32, host func(i, k int) string) []*gatewayv1.ListenerSet {
	var out []*gatewayv1.ListenerSet
	for i := range sets {
		var ls []gatewayv1.ListenerEntry
		for k := range n {
			ls = append(ls, entry(fmt.Sprintf("l%d", k), port(i, k), gatewayv1.HTTPProtocolType, host(i, k)))
		}
		out = append(out, listenerSet("team-m", fmt.Sprintf("m%02d", i), time.Duration(sets-i)*time.Minute, ls...))
	}
	return out
}

// decideSets translates and programs gw with its ListenerSets sets and
// team-a's route, older than any of them, on the Gateway's listener.
func decideSets(t *testing.T, gw *gatewayv1.Gateway, sets []*gatewayv1.ListenerSet, certs Certificates) (Translation, LoadBalancer, map[gatewayv1.SectionName]Reason) {
	t.Helper()
	shop := route("team-a", "shop", 48*time.Hour, "http", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	tr := Translate(gw, []*gatewayv1.HTTPRoute{shop}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	lb, pending, _ := Program(gw, tr, certs)
	for _, l := range lb.Listeners {
		for _, k := range l.Certificates {
			if lb.Certificates == nil {
				lb.Certificates = map[string]string{}
			}
			lb.Certificates[k] = "chain of " + k // as the controller reads them
		}
	}
	if p := httpParent(t, tr, "team-a", "shop"); p.Accepted.Reason != string(gatewayv1.RouteReasonAccepted) {
		t.Errorf("team-a's older route: %+v, want Accepted", p.Accepted)
	}
	if err := lb.Validate(); err != nil {
		t.Errorf("the load balancer the cloud would refuse, for every team: %v", err)
	}
	return tr, lb, pending
}

// refusedSetListeners are the refusals of the listeners of team-m's
// ListenerSets, by reason, each message checked to name no other
// namespace.
func refusedSetListeners(t *testing.T, tr Translation) (accepted int, refused map[string][]string) {
	t.Helper()
	refused = map[string][]string{}
	for k, st := range tr.ListenerSets {
		for _, l := range st.Listeners {
			if l.Refused == nil {
				accepted++
				continue
			}
			refused[l.Refused.Reason] = append(refused[l.Refused.Reason], l.Refused.Message)
			if strings.Contains(l.Refused.Message, "team-a") || strings.Contains(l.Refused.Message, "infra") {
				t.Errorf("%s's listener %s: %q names another namespace", k, l.Name, l.Refused.Message)
			}
		}
	}
	return accepted, refused
}

// The security review's attack: 33 ListenerSets of team-m, 64 HTTP
// listeners each on port 80 with host names of their own, each of which
// the Gateway's listener without a host name covers, so each would end
// with a catch-all (isolation): 2,112 rules, past the load balancer's
// budget. Their catch-alls count in team-m's share of the rules before
// any route, with their host names (one each): the oldest ListenerSets'
// listeners fill it, the others are refused (RuleBudgetExceeded, naming
// only team-m), team-a's older route keeps its rules, and the cloud
// takes the load balancer.
func TestListenerSetCatchAllsInTheirShare(t *testing.T) {
	sets := floods(33, 64, func(int, int) int32 { return 80 }, func(i, k int) string { return fmt.Sprintf("h%d-%d.m.example", i, k) })
	tr, lb, _ := decideSets(t, openGateway(), sets, nil)
	accepted, refused := refusedSetListeners(t, tr)
	if accepted != MaxTenantRules/2 {
		t.Errorf("%d of team-m's listeners accepted, want %d (a catch-all and a name each: its namespace's share)", accepted, MaxTenantRules/2)
	}
	msgs := refused[string(ReasonRuleBudgetExceeded)]
	if len(msgs) != 33*64-MaxTenantRules/2 {
		t.Fatalf("refused %d listeners RuleBudgetExceeded (all refusals: %d reasons), want %d", len(msgs), len(refused), 33*64-MaxTenantRules/2)
	}
	if !strings.Contains(msgs[0], "team-m") || !strings.Contains(msgs[0], fmt.Sprintf("at most %d", MaxTenantRules)) {
		t.Errorf("refusal %q, want team-m's share said", msgs[0])
	}
	if n := len(lb.Rules); n != MaxTenantRules/2+1 {
		t.Errorf("%d rules, want %d: team-m's catch-alls, and team-a's route", n, MaxTenantRules/2+1)
	}
	// The oldest ListenerSets keep theirs; the newest have none left.
	for _, name := range []string{"m00", "m01"} {
		if st := tr.ListenerSets[types.NamespacedName{Namespace: "team-m", Name: name}]; !st.IsAccepted() {
			t.Errorf("%s: %+v, want Accepted (the oldest first)", name, st.Accepted)
		}
	}
	if st := tr.ListenerSets[types.NamespacedName{Namespace: "team-m", Name: "m32"}]; st.Accepted.Reason != string(gatewayv1.ListenerSetReasonListenersNotValid) {
		t.Errorf("m32: %+v, want ListenersNotValid (none of its listeners fits)", st.Accepted)
	}
}

// 2 x 64 listeners on ports of their own would make 129 cloud listeners
// with the Gateway's: the cloud takes 100. The Gateway's listener is
// built first, then the oldest ListenerSets' listeners while they fit;
// the others are refused (PortUnavailable), and the load balancer is
// built.
func TestListenerSetListenersWithinTheCloudsLimit(t *testing.T) {
	sets := floods(2, 64, func(i, k int) int32 { return int32(1000 + 64*i + k) }, func(int, int) string { return "" })
	tr, lb, _ := decideSets(t, openGateway(), sets, nil)
	if len(lb.Listeners) != exampleapi.MaxListeners {
		t.Errorf("%d cloud listeners, want %d", len(lb.Listeners), exampleapi.MaxListeners)
	}
	accepted, refused := refusedSetListeners(t, tr)
	msgs := refused[string(gatewayv1.ListenerReasonPortUnavailable)]
	if accepted != exampleapi.MaxListeners-1 || len(msgs) != 128-accepted {
		t.Fatalf("%d accepted, refused %v, want %d accepted and the rest PortUnavailable", accepted, refused, exampleapi.MaxListeners-1)
	}
	if !strings.Contains(msgs[0], fmt.Sprintf("at most %d listeners", exampleapi.MaxListeners)) {
		t.Errorf("refusal %q, want the cloud's limit said", msgs[0])
	}
	st := tr.ListenerSets[types.NamespacedName{Namespace: "team-m", Name: "m01"}]
	if st.Listeners[34].Refused != nil || st.Listeners[35].Refused == nil {
		t.Errorf("m01: listener 34 %+v, 35 %+v: want the 99th set listener built and the 100th refused", st.Listeners[34].Refused, st.Listeners[35].Refused)
	}
}

// An HTTPS cloud listener serves at most 25 certificates: the Gateway's
// first, then the ListenerSets' listeners' of its port, oldest first, as
// they resolve; a listener whose certificates would go past them is not
// built (PortUnavailable), and one on a port of its own is. (The
// ListenerSet is of the Gateway's namespace, which has no share.)
func TestListenerSetCertificatesWithinTheCloudsLimit(t *testing.T) {
	https := httpListener("https", 443, "", gatewayv1.NamespacesFromAll)
	https.Protocol = gatewayv1.HTTPSProtocolType
	https.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "gw-cert"}}}
	gw := openGateway(https)
	certs := Certificates{"https": {Keys: []string{"infra/gw-cert"}}}
	var ls []gatewayv1.ListenerEntry
	for k := range 30 {
		e := entry(fmt.Sprintf("l%d", k), 443, gatewayv1.HTTPSProtocolType, fmt.Sprintf("h%d.m.example", k))
		if k == 29 {
			e.Port = 8443 // a cloud listener of its own
		}
		e.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(fmt.Sprintf("c%d", k))}}}
		ls = append(ls, e)
		certs[ListenerID(types.NamespacedName{Namespace: "infra", Name: "m"}, e.Name)] = ListenerCertificates{Keys: []string{fmt.Sprintf("infra/c%d", k)}}
	}
	_, lb, pending := decideSets(t, gw, []*gatewayv1.ListenerSet{listenerSet("infra", "m", time.Hour, ls...)}, certs)
	for _, l := range lb.Listeners {
		if l.Port == 443 && len(l.Certificates) != exampleapi.MaxListenerCertificates {
			t.Errorf("port 443 serves %d certificates, want %d", len(l.Certificates), exampleapi.MaxListenerCertificates)
		}
	}
	for k := range 30 {
		id := ListenerID(types.NamespacedName{Namespace: "infra", Name: "m"}, gatewayv1.SectionName(fmt.Sprintf("l%d", k)))
		switch p, fits := pending[id], k < exampleapi.MaxListenerCertificates-1 || k == 29; {
		case fits && p.Reason != "":
			t.Errorf("listener l%d pending %+v, want built", k, p)
		case !fits && p.Reason != string(gatewayv1.ListenerReasonPortUnavailable):
			t.Errorf("listener l%d: %+v, want PortUnavailable (past the certificates of port 443)", k, p)
		case !fits && !strings.Contains(p.Message, fmt.Sprintf("at most %d certificates", exampleapi.MaxListenerCertificates)):
			t.Errorf("listener l%d: %q, want the cloud's limit said", k, p.Message)
		}
	}
}

// A namespace other than the Gateway's adds at most MaxTenantCertificates
// to a port, oldest listener first: past them its listener is pending
// (PortUnavailable) in words that name only its namespace, a certificate
// the port serves already takes no place, and another team's listener of
// the port is built.
func TestTenantShareOfCertificates(t *testing.T) {
	gw := openGateway()
	m := types.NamespacedName{Namespace: "team-m", Name: "m"}
	var ls []gatewayv1.ListenerEntry
	certs := Certificates{}
	for k := range MaxTenantCertificates + 1 {
		e := entry(fmt.Sprintf("l%d", k), 443, gatewayv1.HTTPSProtocolType, fmt.Sprintf("h%d.m.example", k))
		e.TLS = &gatewayv1.ListenerTLSConfig{}
		ls = append(ls, e)
		certs[ListenerID(m, e.Name)] = ListenerCertificates{Keys: []string{fmt.Sprintf("team-m/c%d", k)}}
	}
	again := entry("again", 443, gatewayv1.HTTPSProtocolType, "again.m.example")
	again.TLS = &gatewayv1.ListenerTLSConfig{}
	ls = append(ls, again)
	certs[ListenerID(m, "again")] = ListenerCertificates{Keys: []string{"team-m/c0"}} // served already
	shop := entry("shop", 443, gatewayv1.HTTPSProtocolType, "shop.b.example")
	shop.TLS = &gatewayv1.ListenerTLSConfig{}
	b := types.NamespacedName{Namespace: "team-b", Name: "b"}
	certs[ListenerID(b, "shop")] = ListenerCertificates{Keys: []string{"team-b/shop"}}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "m", 2*time.Hour, ls...), listenerSet("team-b", "b", time.Hour, shop)}
	_, lb, pending := decideSets(t, gw, sets, certs)
	last := ListenerID(m, gatewayv1.SectionName(fmt.Sprintf("l%d", MaxTenantCertificates)))
	for id, p := range pending {
		if id != last {
			t.Errorf("%s pending %+v, want built", id, p)
		}
	}
	p := pending[last]
	if p.Reason != string(gatewayv1.ListenerReasonPortUnavailable) ||
		!strings.Contains(p.Message, fmt.Sprintf("at most %d certificates to a port, and those of team-m before this one added %d, for the 1", MaxTenantCertificates, MaxTenantCertificates)) ||
		strings.Contains(p.Message, "team-b") || strings.Contains(p.Message, "infra") {
		t.Errorf("%s: %+v, want PortUnavailable for team-m's share, naming no other namespace", last, p)
	}
	for _, l := range lb.Listeners {
		if l.Port == 443 && (len(l.Certificates) != MaxTenantCertificates+1 || !slices.Contains(l.Certificates, "team-b/shop")) {
			t.Errorf("port 443 serves %q, want team-m's %d and team-b's", l.Certificates, MaxTenantCertificates)
		}
	}
}

// A certificateRef that does not resolve takes no place: an older
// ListenerSet naming, beside the Gateway's certificate, 24 Secrets it
// cannot have does not keep another team's listener of the port from
// being built.
func TestUnresolvedCertificatesTakeNoPlace(t *testing.T) {
	https := httpListener("https", 443, "", gatewayv1.NamespacesFromAll)
	https.Protocol = gatewayv1.HTTPSProtocolType
	https.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "gw-cert"}}}
	gw := openGateway(https)
	greedy := entry("greedy", 443, gatewayv1.HTTPSProtocolType, "greedy.m.example")
	greedy.TLS = &gatewayv1.ListenerTLSConfig{}
	for k := range exampleapi.MaxListenerCertificates - 1 {
		greedy.TLS.CertificateRefs = append(greedy.TLS.CertificateRefs, gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(fmt.Sprintf("c%d", k)),
			Namespace: ptr.To(gatewayv1.Namespace("team-a"))})
	}
	shop := entry("shop", 443, gatewayv1.HTTPSProtocolType, "shop.b.example")
	shop.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "shop"}}}
	greedyID := ListenerID(types.NamespacedName{Namespace: "team-m", Name: "m"}, "greedy")
	shopID := ListenerID(types.NamespacedName{Namespace: "team-b", Name: "b"}, "shop")
	certs := Certificates{"https": {Keys: []string{"infra/gw-cert"}},
		greedyID: {Unresolved: &Reason{Reason: string(gatewayv1.ListenerReasonRefNotPermitted), Message: "not permitted"}},
		shopID:   {Keys: []string{"team-b/shop"}}}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "m", 2*time.Hour, greedy), listenerSet("team-b", "b", time.Hour, shop)}
	tr, lb, pending := decideSets(t, gw, sets, certs)
	if st := tr.ListenerSets[types.NamespacedName{Namespace: "team-b", Name: "b"}]; st.Listeners[0].Refused != nil {
		t.Errorf("team-b's listener refused: %+v", *st.Listeners[0].Refused)
	}
	if p, ok := pending[shopID]; ok {
		t.Errorf("team-b's listener pending %+v, want built", p)
	}
	if p := pending[greedyID]; p.Reason != string(gatewayv1.ListenerReasonInvalid) {
		t.Errorf("team-m's listener: %+v, want not built (its certificates do not resolve)", p)
	}
	i := slices.IndexFunc(lb.Listeners, func(l lbmodel.Listener) bool { return l.Port == 443 })
	if i < 0 || !slices.Equal(lb.Listeners[i].Certificates, []string{"infra/gw-cert", "team-b/shop"}) {
		t.Errorf("listeners %+v, want port 443 serving the Gateway's certificate and team-b's", lb.Listeners)
	}
}

// A listener's catch-alls are those it causes, its own and the other
// listeners' its host name covers: a listener without a host name beside
// 250 listeners of team-x's would give each a catch-all, past team-m's
// share, so it is refused and team-x's listeners keep no catch-all. The
// Gateway's namespace's ListenerSets have the whole budget.
func TestListenerSetCatchAllsTheyCause(t *testing.T) {
	gw := openGateway()
	gw.Spec.Listeners[0].Hostname = ptr.To(gatewayv1.Hostname("shop.example"))
	var xs []gatewayv1.ListenerEntry
	for k := range 250 {
		xs = append(xs, entry(fmt.Sprintf("x%d", k), 80, gatewayv1.HTTPProtocolType, fmt.Sprintf("h%d.x.example", k)))
	}
	wide := []gatewayv1.ListenerEntry{entry("any", 80, gatewayv1.HTTPProtocolType, "")}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-x", "x", 2*time.Hour, xs...), listenerSet("team-m", "any", time.Hour, wide...)}
	tr, lb, _ := decideSets(t, gw, sets, nil)
	st := tr.ListenerSets[types.NamespacedName{Namespace: "team-m", Name: "any"}]
	if r := st.Listeners[0].Refused; r == nil || r.Reason != string(ReasonRuleBudgetExceeded) || !strings.Contains(r.Message, "team-m") ||
		strings.Contains(r.Message, "team-x") {
		t.Errorf("team-m's listener: %+v, want RuleBudgetExceeded naming team-m's share only", r)
	}
	if n := len(lb.Rules); n != 1 {
		t.Errorf("%d rules, want team-a's route's alone", n)
	}

	// Of the Gateway's namespace, it is built, with the 201 catch-alls
	// (its own, and those of the 200 listeners of team-x's whose names
	// fit in team-x's share).
	sets[1] = listenerSet("infra", "any", time.Hour, wide...)
	tr, lb, _ = decideSets(t, gw, sets, nil)
	if st := tr.ListenerSets[types.NamespacedName{Namespace: "infra", Name: "any"}]; st.Listeners[0].Refused != nil {
		t.Errorf("infra's listener: %+v, want built", st.Listeners[0].Refused)
	}
	if n := len(lb.Rules); n != 1+201 {
		t.Errorf("%d rules, want %d", n, 1+201)
	}
}

// A namespace's listeners' catch-alls and host names and its routes'
// rules share its rules: team-m's 75 listeners (a catch-all and a name
// each) leave 50 for its routes.
func TestListenerSetCatchAllsAndRoutesShare(t *testing.T) {
	sets := floods(1, 75, func(int, int) int32 { return 80 }, func(_, k int) string { return fmt.Sprintf("h%d.m.example", k) })
	gw := openGateway()
	fits := hostsAndPaths("team-m", "fits", 2*time.Hour, 1, 50)
	over := hostsAndPaths("team-m", "over", time.Hour, 1, 1)
	tr := Translate(gw, []*gatewayv1.HTTPRoute{fits, over}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	if p := httpParent(t, tr, "team-m", "fits"); p.Accepted.Reason != string(gatewayv1.RouteReasonAccepted) {
		t.Errorf("team-m/fits: %+v, want Accepted", p.Accepted)
	}
	p := httpParent(t, tr, "team-m", "over")
	if p.Accepted.Reason != string(ReasonRuleBudgetExceeded) || !strings.Contains(p.Accepted.Message, "hold 200, for the 1 it would add") {
		t.Errorf("team-m/over: %+v, want RuleBudgetExceeded, its share full", p.Accepted)
	}
}

// Program builds no ListenerSet listener past the cloud's limits, whatever
// the translation decided: one whose certificates would go past its
// port's is pending (PortUnavailable), and the load balancer is built.
func TestProgramWithinTheCloudsLimits(t *testing.T) {
	gw := openGateway()
	set := types.NamespacedName{Namespace: "infra", Name: "m"} // the Gateway's namespace: no share
	tr := Translation{}
	certs := Certificates{}
	for k := range 2 {
		id := ListenerID(set, gatewayv1.SectionName(fmt.Sprintf("l%d", k)))
		tr.SetListeners = append(tr.SetListeners, SetListener{ID: id, Set: set,
			Spec: gatewayv1.Listener{Name: gatewayv1.SectionName(fmt.Sprintf("l%d", k)), Port: 443, Protocol: gatewayv1.HTTPSProtocolType}})
		for c := range 20 {
			certs[id] = ListenerCertificates{Keys: append(certs[id].Keys, fmt.Sprintf("infra/c%d-%d", k, c))}
		}
	}
	lb, pending, _ := Program(gw, tr, certs)
	lb.Certificates = map[string]string{}
	for _, l := range lb.Listeners {
		for _, c := range l.Certificates {
			lb.Certificates[c] = "chain"
		}
	}
	if err := lb.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if p, ok := pending[ListenerID(set, "l1")]; !ok || p.Reason != string(gatewayv1.ListenerReasonPortUnavailable) {
		t.Errorf("l1: pending %+v, %v, want PortUnavailable", p, ok)
	}
	if _, ok := pending[ListenerID(set, "l0")]; ok {
		t.Error("l0 pending, want built")
	}
}
