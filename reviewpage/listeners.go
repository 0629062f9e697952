package reviewpage

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ListenerChange is one listener added, removed or changed between the
// applied rendering and the planned one.
type ListenerChange struct {
	// Key is "protocol/port".
	Key    string
	Action string // added, removed, changed
	// Details are "target_port: 30080 → 30081" for a changed listener.
	Details []string
}

// listenerChanges compares the listeners of the module calls in two
// renderings (the controller writes them as literals, so they evaluate
// without variables). An unparsable file yields an error, not a guess.
func listenerChanges(applied, planned map[string]string) ([]ListenerChange, error) {
	before, err := listenersOf(applied)
	if err != nil {
		return nil, fmt.Errorf("applied files: %w", err)
	}
	after, err := listenersOf(planned)
	if err != nil {
		return nil, fmt.Errorf("planned files: %w", err)
	}
	var out []ListenerChange
	keys := slices.Sorted(maps.Keys(after))
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, inBefore := before[k]
		a, inAfter := after[k]
		switch {
		case !inBefore:
			out = append(out, ListenerChange{Key: k, Action: "added"})
		case !inAfter:
			out = append(out, ListenerChange{Key: k, Action: "removed"})
		default:
			var details []string
			for _, attr := range slices.Sorted(maps.Keys(mergeKeys(a, b))) {
				if a[attr] != b[attr] {
					details = append(details, fmt.Sprintf("%s: %s → %s", attr, orNone(b[attr]), orNone(a[attr])))
				}
			}
			if len(details) > 0 {
				out = append(out, ListenerChange{Key: k, Action: "changed", Details: details})
			}
		}
	}
	return out, nil
}

func mergeKeys(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	maps.Copy(m, b)
	return m
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// listenersOf reads the listeners attribute of every module block: a list
// of objects with protocol and port (a Service's) or a map keyed
// "protocol/port" (a Gateway's), each listener's attributes as JSON.
func listenersOf(files map[string]string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".tf") {
			continue
		}
		f, diags := hclsyntax.ParseConfig([]byte(files[name]), name, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, diags
		}
		for _, block := range f.Body.(*hclsyntax.Body).Blocks {
			attr, ok := block.Body.Attributes["listeners"]
			if block.Type != "module" || !ok {
				continue
			}
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || !v.CanIterateElements() {
				continue // not a literal: nothing to compare
			}
			for it := v.ElementIterator(); it.Next(); {
				k, l := it.Element()
				if !l.Type().IsObjectType() && !l.Type().IsMapType() {
					continue
				}
				attrs := attributes(l)
				key := attrs["protocol"] + "/" + attrs["port"]
				if k.Type() == cty.String {
					key = k.AsString()
				}
				out[strings.Trim(key, `"`)] = attrs
			}
		}
	}
	return out, nil
}

// attributes are an object's attributes as JSON (strings unquoted).
func attributes(v cty.Value) map[string]string {
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			out[k.AsString()] = ""
			continue
		}
		if e.Type() == cty.String {
			out[k.AsString()] = e.AsString()
			continue
		}
		b, err := ctyjson.Marshal(e, e.Type())
		if err != nil {
			continue
		}
		out[k.AsString()] = string(b)
	}
	return out
}
