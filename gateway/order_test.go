package gateway

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// precedenceSpec is the Gateway API's precedence as a comparison, the
// way the specification reads: by listener, the most specific host name
// first, each ending with its catch-all; then the most specific host
// name, each claimed one ending with its copies and fence (fences.go); an
// exact path, then the longest prefix; a method; the most headers; the
// most query parameters; then the oldest route, the first by
// namespace/name, and the first rule and match of a route. orderKey must
// sort as it compares.
func precedenceSpec(a, b candidate) int {
	aIso, bIso := a.from == nil && !a.fence, b.from == nil && !b.fence
	if c := cmp.Or(compareHosts(a.listenerHost, b.listenerHost), compareBool(aIso, bIso)); c != 0 || aIso {
		return cmp.Or(c, cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort))
	}
	if c := cmp.Or(compareHosts(a.rule.Hostname, b.rule.Hostname), compareBool(a.fence, b.fence)); c != 0 || a.fence {
		return cmp.Or(c, cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort))
	}
	return cmp.Or(
		compareHosts(a.written, b.written),
		cmp.Compare(pathRank(a.rule), pathRank(b.rule)),
		cmp.Compare(-len(a.rule.Path), -len(b.rule.Path)),
		cmp.Compare(methodRank(a.rule), methodRank(b.rule)),
		cmp.Compare(-len(a.rule.Headers), -len(b.rule.Headers)),
		cmp.Compare(-len(a.rule.QueryParams), -len(b.rule.QueryParams)),
		a.from.created.Compare(b.from.created.Time),
		cmp.Compare(a.from.namespace+"/"+a.from.name, b.from.namespace+"/"+b.from.name),
		cmp.Compare(a.ruleIndex, b.ruleIndex), cmp.Compare(a.matchIndex, b.matchIndex),
		cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort),
	)
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// TestOrderKeySortsAsThePrecedence: random rules of every kind (routes',
// listeners' catch-alls, fences), many of them equal in some fields,
// sorted by their keys and by the specification's comparison, come out
// in the same order, equal ones included (both sorts are stable).
func TestOrderKeySortsAsThePrecedence(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 57))
	hosts := []string{"", "*.example.com", "*.a.example.com", "a.example.com", "b.example.com", "long-name.a.example.com"}
	names := [][2]string{{"a", "b"}, {"a", "bc"}, {"a", "b-x"}, {"a", "b.c"}, {"ab", "c"}, {"team-1", "shop"}, {"team-1", "shop-2"}}
	times := []time.Time{{}, time.Unix(0, 0), time.Unix(-86400, 5), time.Unix(1_700_000_000, 0), time.Unix(1_700_000_000, 1)}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	// Half the rounds vary only what decides between equals (the route,
	// its age, the rule's index), so those fields are compared often.
	narrow := false
	random := func() candidate {
		if narrow {
			n := names[r.IntN(len(names))]
			return candidate{listenerHost: hosts[1], written: hosts[3], rule: lbmodel.Rule{ListenerPort: 80, Hostname: hosts[3], PathType: "prefix", Path: "/"},
				from:      &origin{namespace: n[0], name: n[1], created: metav1.NewTime(times[r.IntN(3)])},
				ruleIndex: r.IntN(2), matchIndex: r.IntN(2)}
		}
		c := candidate{listenerHost: pick(hosts), written: pick(hosts)}
		c.rule = lbmodel.Rule{ListenerPort: []int{80, 8080}[r.IntN(2)], Hostname: pick(hosts), PathType: []string{"exact", "prefix"}[r.IntN(2)],
			Path: "/" + strings.Repeat("p", r.IntN(4)), Method: []string{"", "GET"}[r.IntN(2)]}
		c.rule.Headers, c.rule.QueryParams = matches(r.IntN(3)), matches(r.IntN(3))
		switch r.IntN(4) {
		case 0: // a listener's catch-all
		case 1:
			c.fence = true
		default:
			n := names[r.IntN(len(names))]
			c.from = &origin{namespace: n[0], name: n[1], created: metav1.NewTime(times[r.IntN(len(times))])}
			c.ruleIndex, c.matchIndex = r.IntN(3), r.IntN(3)
		}
		return c
	}
	for round := range 300 {
		narrow = round%2 == 1
		cands := make([]candidate, 2+r.IntN(40))
		for i := range cands {
			cands[i] = random()
		}
		want := slices.Clone(cands)
		slices.SortStableFunc(want, precedenceSpec)
		got := slices.Clone(cands)
		sortByPrecedence(got)
		for i := range want {
			if orderKey(got[i]) != orderKey(want[i]) || !same(got[i], want[i]) {
				t.Fatalf("round %d: place %d is %+v (key %q), the specification puts %+v (key %q) there",
					round, i, got[i], orderKey(got[i]), want[i], orderKey(want[i]))
			}
		}
		for i := 1; i < len(got); i++ {
			if (precedenceSpec(got[i-1], got[i]) == 0) != (orderKey(got[i-1]) == orderKey(got[i])) {
				t.Fatalf("round %d: %+v and %+v are equal to one and not the other", round, got[i-1], got[i])
			}
		}
	}
}

// matches are n header or query matches.
func matches(n int) map[string]string {
	out := map[string]string{}
	for i := range n {
		out[string(rune('a'+i))] = "v"
	}
	return out
}

// same tells whether two candidates are the one value (by what the
// precedence reads and where each came from).
func same(a, b candidate) bool {
	return a.listenerHost == b.listenerHost && a.written == b.written && a.fence == b.fence && a.from == b.from &&
		a.ruleIndex == b.ruleIndex && a.matchIndex == b.matchIndex && a.rule.Hostname == b.rule.Hostname &&
		a.rule.Path == b.rule.Path && a.rule.PathType == b.rule.PathType && a.rule.Method == b.rule.Method &&
		len(a.rule.Headers) == len(b.rule.Headers) && len(a.rule.QueryParams) == len(b.rule.QueryParams) &&
		a.rule.ListenerPort == b.rule.ListenerPort
}
