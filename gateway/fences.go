package gateway

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/lbmodel"
)

// A request for a claimed host name that none of its holder's rules match
// must not fall to another namespace's less specific rule (one without a
// host name, or a wildcard over it) on the same listener: that would hand
// the holder's users to the other namespace. Where, and only where, such
// a rule of another namespace exists, the host name's rules go on with
// copies of the holder's own less specific rules, specialised to it and in
// their order (its wildcards, then its rules without a host name), and
// end with a 404: the fence. A host name whose rules already match every
// request needs neither, nor does a Gateway one namespace uses, so the
// upstream conformance tests see no extra rule. They count in the rule
// budget like any other, and in shares (admission.go): the copies in
// their holder's, the 404 in those of the namespaces whose wider rules
// make it needed (none when one is the Gateway's namespace's).

// fences are the copies and fences the host names holder names need
// among cands (the admitted HTTP rules), per listener port and listener
// host name (a request is served by one listener's rules): those of the
// rules, and the held ones no rule names (a claim in its grace, or whose
// holder's routes are refused), which a wider rule of another namespace
// would otherwise serve. held is asked only where a fence may be needed;
// home is the Gateway's namespace.
func fences(cands []candidate, home string, holder func(string) string, held func() []string) []candidate {
	return fencesOf(cands, home, holder, held, nil)
}

// fencesOf are fences' of the host names only (all: nil). A host name's
// fences depend on its own rules, its holder and the rules that may
// widen, never on another name's: admission recounts only the names a
// route without such a rule brings (fenceCount).
func fencesOf(cands []candidate, home string, holder func(string) string, held func() []string, only map[string]bool) (out []candidate) {
	// Admission counts the rules at every route it admits: a look is
	// linear in the rules, and without a rule that may take another host
	// name's requests (of no host name, or of a wildcard) only a scan.
	if !slices.ContainsFunc(cands, func(c candidate) bool { return mayWiden(c.rule.Hostname) }) {
		return nil
	}
	type group struct {
		port         int
		listenerHost string
	}
	var order []group
	byGroup := map[group][]candidate{}
	for _, c := range cands {
		g := group{c.rule.ListenerPort, c.listenerHost}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
			byGroup[g] = nil
		}
		if only == nil || only[c.rule.Hostname] || mayWiden(c.rule.Hostname) {
			byGroup[g] = append(byGroup[g], c)
		}
	}
	named, freed := map[string]bool{}, map[string]bool{}
	var heldNow []string // read once, at the first group that may need it
	for _, g := range order {
		hosts, own, wide, names := hostsOf(byGroup[g], only)
		if len(wide) == 0 {
			continue // no rule of this group may take a host name's requests
		}
		if heldNow == nil {
			heldNow = heldAmong(held, holder, only)
		}
		for _, h := range heldNow {
			if _, ok := own[h]; !ok && (g.listenerHost == "" || covers(g.listenerHost, h)) {
				hosts = append(hosts, h)
			}
		}
		slices.Sort(hosts)
		for _, h := range hosts {
			out = fenceHost(out, named, freed, names, g.port, g.listenerHost, h, holder(h), home, own[h], wide)
		}
	}
	return out
}

// heldAmong are the held host names among only (all: nil): where only is
// set, a name is held when it has a holder.
func heldAmong(held func() []string, holder func(string) string, only map[string]bool) []string {
	if only == nil {
		return held()
	}
	var out []string
	for h := range only {
		if holder(h) != "" {
			out = append(out, h)
		}
	}
	return out
}

// fenceHost adds to out the copies and fence host name h of holder ns
// needs on the listener of port and listenerHost, its rules there own,
// the rules that may widen there wide; named are the copies and fences
// made so far, names the group's rules', freed the host names given a
// 404 the Gateway's rule makes needed, free; home is the Gateway's
// namespace.
func fenceHost(out []candidate, named, freed, names map[string]bool, port int, listenerHost, h, ns, home string, own, wide []candidate) []candidate {
	wider := func(c candidate) bool {
		return c.rule.Hostname != h && (c.rule.Hostname == "" || covers(c.rule.Hostname, h))
	}
	switch {
	case ns == "",
		!slices.ContainsFunc(wide, func(c candidate) bool { return c.from.namespace != ns && wider(c) }),
		slices.ContainsFunc(own, func(c candidate) bool { return catchAll(c.rule) }):
		return out
	}
	var copies []candidate
	for _, c := range wide {
		if c.from.namespace != ns || !wider(c) {
			continue
		}
		name := ruleName(c.from.namespace, c.from.name, c.ruleID, c.matchIndex, port, h)
		if named[name] || names[name] {
			continue
		}
		c.rule.Hostname, c.rule.Name = h, name
		copies = append(copies, c)
	}
	sortByPrecedence(copies)
	for _, c := range copies {
		out, named[c.rule.Name] = append(out, c), true
		if catchAll(c.rule) {
			return out
		}
	}
	f := fence(port, listenerHost, h)
	switch f.chargedTo = chargedFor(wide, ns, home, wider); {
	case f.chargedTo != nil, ns == home:
	case freed[h]:
		// The Gateway's rules fence the name on another listener too: its
		// holder pays for every 404 but the first (a name beneath the
		// platform's catch-alls on nine ports costs ten, not one).
		f.chargedTo = []string{ns}
	default:
		freed[h] = true
	}
	named[f.rule.Name] = true
	return append(out, f)
}

// chargedFor are the namespaces whose shares count the 404 closing a
// host name of holder ns: those whose rules wider than it make the 404
// needed (they would take its requests), none when one is home, the
// Gateway's (whose share is the whole budget).
func chargedFor(wide []candidate, ns, home string, wider func(candidate) bool) []string {
	var out []string
	for _, c := range wide {
		switch o := c.from.namespace; {
		case o == ns || !wider(c):
		case o == home:
			return nil
		case !slices.Contains(out, o):
			out = append(out, o)
		}
	}
	return out
}

// hostsOf sorts a group's rules: its host names (of only; all: nil);
// each one's own rules; the rules that may take another host name's
// requests (of no host name, or of a wildcard), in their order; and
// every rule's name.
func hostsOf(cs []candidate, only map[string]bool) (hosts []string, own map[string][]candidate, wide []candidate, names map[string]bool) {
	own, names = map[string][]candidate{}, make(map[string]bool, len(cs))
	for _, c := range cs {
		names[c.rule.Name] = true
		h := c.rule.Hostname
		if mayWiden(h) {
			wide = append(wide, c)
		}
		if h == "" || only != nil && !only[h] {
			continue
		}
		if _, ok := own[h]; !ok {
			hosts = append(hosts, h)
		}
		own[h] = append(own[h], c)
	}
	return hosts, own, wide, names
}

// mayWiden tells whether a rule of host name h may take requests for
// another host name: it has none, or a wildcard.
func mayWiden(h string) bool { return h == "" || strings.HasPrefix(h, "*") }

// fence is the 404 closing host name h's rules on listener port (of the
// listener of hostname listenerHost).
func fence(port int, listenerHost, h string) candidate {
	name := fmt.Sprintf("hostname:%d@%s", port, h)
	if listenerHost != "" {
		name += "/" + listenerHost
	}
	return candidate{fence: true, listenerHost: listenerHost, written: h, rule: lbmodel.Rule{Name: shorten(name), ListenerPort: port,
		Hostname: h, FixedResponse: &lbmodel.FixedResponse{StatusCode: http.StatusNotFound}}}
}

// catchAll tells whether r matches every request for its host name.
func catchAll(r lbmodel.Rule) bool {
	return (r.PathType == "" || r.PathType == "prefix" && r.Path == "/") && r.Method == "" && len(r.Headers) == 0 && len(r.QueryParams) == 0
}
