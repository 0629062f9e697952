package gateway

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The fences counted as routes are admitted (fenceCount: only the host
// names a route brings, when it brings no rule that may widen and moves
// none) are those a whole recount of the admitted rules finds, all and
// the copies of each namespace's rules: on random Gateways of routes of
// several parentRefs (sections),
// ListenerSets, TLS routes, consent, held names, long rule names, and
// ownership None. (A differential test written by a reviewing helper;
// it found the count going stale when a route's second parentRef moved a
// wildcard rule to a more specific listener.)
func TestFencesCountedAsNeeded(t *testing.T) {
	for _, multi := range []bool{false, true} {
		t.Run(fmt.Sprintf("multi=%t", multi), func(t *testing.T) {
			scenario, done := watchFences(t)
			defer done()
			rnd := rand.New(rand.NewPCG(11, 13))
			hosts := []string{"a.example", "b.example", "*.example", "c.a.example", "*.a.example", "d.example", "x.b.a.example", "*.b.a.example"}
			sections := []string{"http", "a", "alt", "wild", ""}
			for iter := range 3000 {
				gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("a", 80, "*.a.example", gatewayv1.NamespacesFromAll),
					httpListener("alt", 8080, "", gatewayv1.NamespacesFromAll), httpListener("wild", 80, "*.example", gatewayv1.NamespacesFromAll),
					l4Listener("tls", 443, gatewayv1.TLSProtocolType))
				gw.Spec.Listeners[4].AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
				gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
				if rnd.IntN(8) == 0 {
					gw.Annotations = map[string]string{OwnershipAnnotation: string(OwnershipNone)}
				}
				claims := Claims{Hosts: map[string]HostClaim{}}
				for _, h := range hosts {
					if rnd.IntN(4) == 0 {
						claims.Hosts[h] = HostClaim{Namespace: fmt.Sprintf("team-%d", rnd.IntN(3)), Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
					}
				}
				var sets []*gatewayv1.ListenerSet
				if rnd.IntN(2) == 0 {
					e := entry("s", 80, gatewayv1.HTTPProtocolType, hosts[rnd.IntN(len(hosts))])
					e.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
					sets = append(sets, listenerSet(fmt.Sprintf("team-%d", rnd.IntN(3)), "set", 10*time.Hour, e))
				}
				var routes []*gatewayv1.HTTPRoute
				for i := range 2 + rnd.IntN(8) {
					var hs []string
					for _, h := range hosts {
						if rnd.IntN(4) == 0 {
							hs = append(hs, h)
						}
					}
					var ms []gatewayv1.HTTPRouteMatch
					for k := range rnd.IntN(3) {
						ms = append(ms, prefix(fmt.Sprintf("/p%d", k)))
					}
					name := fmt.Sprintf("r%d", i)
					if rnd.IntN(3) == 0 {
						name += "-a-very-long-route-name-that-pushes-the-rule-name-past-the-clouds-one-hundred-and-twenty-eight-characters-xxxxxxxxxxxxxxxxxxxxxxx"
					}
					r := route(fmt.Sprintf("team-%d", rnd.IntN(3)), name, time.Duration(rnd.IntN(100))*time.Minute, sections[rnd.IntN(len(sections))], hs, rule(ms, to("svc-a", 1)))
					moreParents(rnd, r, sections, sets, multi)
					routes = append(routes, r)
				}
				var l4 []L4Route
				if rnd.IntN(2) == 0 {
					l4 = append(l4, l4Route(KindTLSRoute, fmt.Sprintf("team-%d", rnd.IntN(3)), "tls", time.Duration(rnd.IntN(100))*time.Minute, "tls",
						[]string{hosts[rnd.IntN(len(hosts))]}, "svc-a"))
				}
				cns := rnd.IntN(4)
				consent := func(_ RouteKey, owner, _ string) bool { return owner == fmt.Sprintf("team-%d", cns) }
				*scenario = describe(iter, claims, sets, routes, l4)
				Translate(gw, routes, l4, nil, services, Boundary{ListenerSets: sets, Claims: claims, Now: t0, Grace: grace, Consent: consent})
			}
		})
	}
}

// watchFences has each admission's fence count compared with a whole
// recount; done reports the miscounts, the first with *scenario then.
func watchFences(t *testing.T) (scenario *string, done func()) {
	bad, checked, first := 0, 0, ""
	scenario = new(string)
	testHookFenced = func(counted, need fenceCounts) {
		checked++
		if counted.all != need.all || !maps.Equal(counted.copies, need.copies) || !maps.Equal(counted.notFound, need.notFound) {
			bad++
			if first == "" {
				first = fmt.Sprintf("counted %+v need %+v: %s", counted, need, *scenario)
			}
		}
	}
	return scenario, func() {
		testHookFenced = nil
		t.Logf("%d of %d admissions miscounted; first: %s", bad, checked, first)
		if bad > 0 {
			t.Fail()
		}
	}
}

// describe is a random Gateway's routes, for a miscount's message.
func describe(iter int, claims Claims, sets []*gatewayv1.ListenerSet, routes []*gatewayv1.HTTPRoute, l4 []L4Route) string {
	s := fmt.Sprintf("iter %d\nclaims %v\n", iter, claims.Hosts)
	for _, st := range sets {
		s += fmt.Sprintf("set %s/%s port %d host %v\n", st.Namespace, st.Name, st.Spec.Listeners[0].Port, ptr.Deref(st.Spec.Listeners[0].Hostname, ""))
	}
	for _, r := range routes {
		var refs []string
		for _, p := range r.Spec.ParentRefs {
			ref := string(ptr.Deref(p.Kind, "Gateway"))
			if p.SectionName != nil {
				ref += "/" + string(*p.SectionName)
			}
			refs = append(refs, ref)
		}
		matches := -1
		if len(r.Spec.Rules) > 0 {
			matches = len(r.Spec.Rules[0].Matches)
		}
		s += fmt.Sprintf("route %s/%s created %s refs %v hosts %v matches %d\n", r.Namespace, r.Name, r.CreationTimestamp.Format("15:04"), refs, r.Spec.Hostnames, matches)
	}
	for _, r := range l4 {
		s += fmt.Sprintf("tls %s/%s created %s hosts %v\n", r.Namespace, r.Name, r.CreationTimestamp.Format("15:04"), r.Hostnames)
	}
	return s
}

// moreParents gives r at random a second parentRef, of a random section
// (when second), and one to the first of sets.
func moreParents(rnd *rand.Rand, r *gatewayv1.HTTPRoute, sections []string, sets []*gatewayv1.ListenerSet, second bool) {
	if second && rnd.IntN(2) == 0 {
		ref := r.Spec.ParentRefs[0]
		ref.SectionName = nil
		if s := sections[rnd.IntN(len(sections))]; s != "" {
			ref.SectionName = ptr.To(gatewayv1.SectionName(s))
		}
		r.Spec.ParentRefs = append(r.Spec.ParentRefs, ref)
	}
	if len(sets) > 0 && rnd.IntN(3) == 0 {
		r.Spec.ParentRefs = append(r.Spec.ParentRefs, gatewayv1.ParentReference{Kind: ptr.To(KindListenerSet), Name: "set",
			Namespace: ptr.To(gatewayv1.Namespace(sets[0].Namespace))})
	}
}
