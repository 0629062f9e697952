package gateway

import (
	"fmt"
	"slices"
	"strings"
)

// The Gateway API's precedence among a listener's HTTP rules, written as
// a key per rule that sorts byte by byte as the precedence orders: a
// rule's place is then its own, not a number that shifts when another
// route comes in between (docs/adr/0028, where the cloud is to order a
// route's rules by it). Each field is fixed width, and the one
// string of varying length (the route's namespace/name) ends with a byte
// below every character a Kubernetes name may hold, so a shorter name
// sorts first as a string comparison would have it.

// Widths and bounds of the key's numeric fields.
const (
	orderMaxHost  = 999         // a host name's length (DNS: at most 253)
	orderMaxPath  = 9999        // a path's length (the cloud's rules take 1,024)
	orderMaxCount = 99          // header or query matches (the Gateway API: 16)
	orderMaxIndex = 9999        // a rule's or match's index in its route
	orderUnixBase = 62135596800 // seconds from year 1 to 1970: times before 1970 stay positive
)

// sortByPrecedence keys each rule of cands (its OrderKey: the cloud
// orders a listener's keyed rules by it) and orders cands by the keys,
// equal ones as they came (a stable sort).
func sortByPrecedence(cands []candidate) {
	for i := range cands {
		cands[i].rule.OrderKey = orderKey(cands[i])
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return strings.Compare(a.rule.OrderKey, b.rule.OrderKey) })
}

// orderKey is c's place among a listener's HTTP rules. First the listener
// it came through (a request belongs to the most specific listener
// matching its host); there a listener's own catch-all comes after its
// routes' rules. Then the rule's host name, a claimed name's fence after
// the rules of that name; then the route rules' precedence: the host name
// they were written for, an exact path before a regular expression
// before a prefix, a longer path first, a method before none, more header and query matches first, the
// older route, its namespace/name, the rule's and the match's index. The
// listener port decides between equals last.
func orderKey(c candidate) string {
	var b strings.Builder
	iso := c.from == nil && !c.fence
	writeHost(&b, c.listenerHost)
	writeFlag(&b, iso)
	if !iso {
		writeHost(&b, c.rule.Hostname)
		writeFlag(&b, c.fence)
		if !c.fence {
			writeHost(&b, c.written)
			fmt.Fprintf(&b, "%s%04d%d%02d%02d", pathRank(c.rule), orderMaxPath-min(len(c.rule.Path), orderMaxPath), methodRank(c.rule),
				orderMaxCount-min(len(c.rule.Headers), orderMaxCount), orderMaxCount-min(len(c.rule.QueryParams), orderMaxCount))
			t := c.from.created.Time
			fmt.Fprintf(&b, "%012d%09d%s/%s!", t.Unix()+orderUnixBase, t.Nanosecond(), c.from.namespace, c.from.name)
			fmt.Fprintf(&b, "%04d%04d", min(c.ruleIndex, orderMaxIndex), min(c.matchIndex, orderMaxIndex))
		}
	}
	fmt.Fprintf(&b, "%05d", c.rule.ListenerPort)
	return b.String()
}

// writeHost writes h's rank (hostRank): a name without a wildcard, then
// a wildcard, then any host; longer first.
func writeHost(b *strings.Builder, h string) {
	wildcard, length := hostRank(h)
	fmt.Fprintf(b, "%d%03d", wildcard, orderMaxHost+max(length, -orderMaxHost))
}

// writeFlag writes false before true.
func writeFlag(b *strings.Builder, v bool) {
	if v {
		b.WriteByte('1')
		return
	}
	b.WriteByte('0')
}
