package preview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/renderer"
)

// listenerLines compare the listeners by protocol and port: added,
// removed, changed (with what changed).
func listenerLines(old, cur *renderer.Shape) []string {
	if cur == nil {
		return nil
	}
	before := map[string]renderer.ListenerShape{}
	if old != nil {
		for _, l := range old.Listeners {
			before[l.String()] = l
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range cur.Listeners {
		seen[l.String()] = true
		prev, ok := before[l.String()]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("listener %s added (%s)", l, l.Describe()))
		case !equalListeners(prev, l):
			out = append(out, fmt.Sprintf("listener %s changed: %s -> %s", l, prev.Describe(), l.Describe()))
		}
	}
	if old != nil {
		for _, l := range old.Listeners {
			if !seen[l.String()] {
				out = append(out, fmt.Sprintf("listener %s removed", l))
			}
		}
	}
	return out
}

// settingLines are the load balancer's other settings that change.
func settingLines(old, cur *renderer.Shape) []string {
	if old == nil || cur == nil {
		return nil
	}
	var out []string
	if old.Type != cur.Type {
		out = append(out, fmt.Sprintf("type %s -> %s", old.Type, cur.Type))
	}
	if old.Algorithm != cur.Algorithm {
		out = append(out, fmt.Sprintf("algorithm %s -> %s", old.Algorithm, cur.Algorithm))
	}
	if old.Name != cur.Name {
		out = append(out, fmt.Sprintf("cloud name %s -> %s", old.Name, cur.Name))
	}
	if !slices.Equal(old.SourceCIDRs, cur.SourceCIDRs) {
		out = append(out, fmt.Sprintf("allowed sources %s -> %s", cidrs(old.SourceCIDRs), cidrs(cur.SourceCIDRs)))
	}
	return out
}

func cidrs(c []string) string {
	if len(c) == 0 {
		return "anyone"
	}
	return strings.Join(c, ", ")
}

func equalListeners(a, b renderer.ListenerShape) bool {
	return a.Protocol == b.Protocol && a.Port == b.Port && a.TargetPort == b.TargetPort && a.Proxy == b.Proxy &&
		a.RedirectPort == b.RedirectPort && slices.Equal(a.Certificates, b.Certificates)
}

func equalShapes(a, b renderer.Shape) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Algorithm == b.Algorithm && a.Internal == b.Internal && a.IPFamily == b.IPFamily &&
		slices.Equal(a.SourceCIDRs, b.SourceCIDRs) && slices.EqualFunc(a.Listeners, b.Listeners, equalListeners)
}
