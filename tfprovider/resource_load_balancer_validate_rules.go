package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The API's checks of rules (simulator/rules.go), made at plan time:
// single values by the schema's validators, the rest by validateRules.

const (
	maxHostnameLen    = 253
	maxHeaderValueLen = 4096
	maxPathLen        = 1024
)

var (
	// ruleNameRE is a rule's name, its key in the rules map.
	ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9._\-/:@#*]{1,128}$`)
	// hostnameRE is a lower-case RFC 1123 name, or one with a leading "*."
	// label; exactHostnameRE is one without.
	hostnameRE      = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	exactHostnameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// noControlRE: header values without control characters.
	noControlRE = regexp.MustCompile(`^\P{Cc}*$`)

	// headerNameValidator accepts an HTTP header name (RFC 9110 token).
	headerNameValidator = stringvalidator.RegexMatches(regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"),
		"must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)")

	// rulePathValidator is the API's check of a rule's path.
	rulePathValidator = stringCheck{
		description: "must be a normalized absolute path of printable ASCII",
		summary:     "Invalid rule path",
		check:       func(p string) error { return sentence(checkRulePath(p)) },
	}
)

func checkRulePath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q must start with /", p)
	case len(p) > maxPathLen:
		return fmt.Errorf("the path is longer than %d characters", maxPathLen)
	case strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r > '~' || r == '?' || r == '#' }):
		return fmt.Errorf("%q must be printable ASCII without spaces, '?' or '#'", p)
	case strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../"):
		return fmt.Errorf("%q is not a normalized path (no //, /./ or /../)", p)
	}
	return nil
}

// validateRules checks the rule count against the cloud's limit (before
// the rules: they are not worth checking then), each rule's listener,
// priorities unique per listener, and each rule alone (validateRule).
// Unknown values skip the checks that need them.
func validateRules(ctx context.Context, rules types.Map, listeners types.Map, resp *resource.ValidateConfigResponse) {
	if !isKnown(rules) {
		return
	}
	if n := len(rules.Elements()); n > exampleapi.MaxRules {
		resp.Diagnostics.AddAttributeError(path.Root("rules"), "Too many rules",
			fmt.Sprintf("rules has %d entries; the Example cloud allows at most %d rules per load balancer.", n, exampleapi.MaxRules))
		return
	}
	byPort, complete := listenersByPort(ctx, listeners)
	priorities := map[[2]int64]string{} // listener port, priority: rule name
	for _, name := range slices.Sorted(maps.Keys(rules.Elements())) {
		obj, ok := rules.Elements()[name].(types.Object)
		if !ok || !isKnown(obj) {
			continue
		}
		var r ruleModel
		if d := obj.As(ctx, &r, basetypes.ObjectAsOptions{}); d.HasError() {
			continue
		}
		rp := path.Root("rules").AtMapKey(name)
		if !isKnown(r.ListenerPort) {
			validateRule(ctx, name, rp, r, resp)
			continue
		}
		port := r.ListenerPort.ValueInt64()
		if complete {
			validateRuleListener(name, rp, port, byPort[port], resp)
		}
		if isKnown(r.Priority) {
			key := [2]int64{port, r.Priority.ValueInt64()}
			if other, dup := priorities[key]; dup {
				resp.Diagnostics.AddAttributeError(rp.AtName("priority"), "Rule priority already in use",
					fmt.Sprintf("Rules %q and %q both have priority %d on listener port %d: priorities are unique per "+
						"listener, as they order its rules.", other, name, key[1], port))
			}
			priorities[key] = name
		}
		validateRule(ctx, name, rp, r, resp)
	}
}

// listenersByPort is the configured listeners by port. complete is false
// when one is unknown: the rules' listeners cannot be checked then.
func listenersByPort(ctx context.Context, listeners types.Map) (byPort map[int64][]listenerModel, complete bool) {
	if !isKnown(listeners) {
		return nil, false
	}
	byPort = map[int64][]listenerModel{}
	for _, key := range slices.Sorted(maps.Keys(listeners.Elements())) {
		obj, ok := listeners.Elements()[key].(types.Object)
		if !ok || !isKnown(obj) {
			return nil, false
		}
		var l listenerModel
		if d := obj.As(ctx, &l, basetypes.ObjectAsOptions{}); d.HasError() || !isKnown(l.Protocol) || !isKnown(l.Port) ||
			l.RedirectToHTTPSPort.IsUnknown() {
			return nil, false
		}
		byPort[l.Port.ValueInt64()] = append(byPort[l.Port.ValueInt64()], l)
	}
	return byPort, true
}

// validateRuleListener checks that port is an http or https listener's,
// one that forwards (no redirect_to_https_port); ls are the listeners on
// port.
func validateRuleListener(name string, rp path.Path, port int64, ls []listenerModel, resp *resource.ValidateConfigResponse) {
	i := slices.IndexFunc(ls, func(l listenerModel) bool {
		p := l.Protocol.ValueString()
		return p == exampleapi.ProtocolHTTP || p == exampleapi.ProtocolHTTPS
	})
	at := rp.AtName("listener_port")
	switch {
	case len(ls) == 0:
		resp.Diagnostics.AddAttributeError(at, "No listener for the rule",
			fmt.Sprintf("Rule %q has listener_port = %d, but listeners has no listener on port %d. A rule routes the "+
				"requests of an http or https listener of this load balancer.", name, port, port))
	case i < 0:
		resp.Diagnostics.AddAttributeError(at, "Rule on a listener that is not http or https",
			fmt.Sprintf("Rule %q has listener_port = %d, and listener %q is not http or https: rules route HTTP requests.",
				name, port, listenerKey(ls[0].Protocol.ValueString(), port)))
	case !ls[i].RedirectToHTTPSPort.IsNull():
		resp.Diagnostics.AddAttributeError(at, "Rule on a redirecting listener",
			fmt.Sprintf("Rule %q has listener_port = %d, and listener %q redirects every request to https "+
				"(redirect_to_https_port): it has no requests to route. Put the rule on the https listener.",
				name, port, listenerKey(exampleapi.ProtocolHTTP, port)))
	}
}

// validateRule checks one rule: path with path_type, backends or a
// redirect, distinct backends, and header names unique ignoring case.
func validateRule(ctx context.Context, name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	switch {
	case isKnown(r.Path) && r.PathType.IsNull():
		resp.Diagnostics.AddAttributeError(rp.AtName("path_type"), "Missing rule path type",
			fmt.Sprintf("Rule %q has a path, so it needs path_type: one of %s.", name, strings.Join(exampleapi.PathTypes, ", ")))
	case isKnown(r.PathType) && r.Path.IsNull():
		resp.Diagnostics.AddAttributeError(rp.AtName("path"), "Missing rule path",
			fmt.Sprintf("Rule %q has path_type %q, so it needs a path such as \"/api\".", name, r.PathType.ValueString()))
	}
	if !r.Redirect.IsNull() && isKnown(r.Backends) && len(r.Backends.Elements()) > 0 {
		resp.Diagnostics.AddAttributeError(rp.AtName("redirect"), "Conflicting rule redirect and backends",
			fmt.Sprintf("Rule %q has a redirect and %d backends: a rule either redirects or forwards. Remove one.",
				name, len(r.Backends.Elements())))
	}
	validateRuleBackends(ctx, name, rp.AtName("backends"), r.Backends, resp)
	validateHeaderNames(name, rp.AtName("headers"), r.Headers, resp)
	if isKnown(r.RequestHeaders) {
		var hc headerChangesModel
		if d := r.RequestHeaders.As(ctx, &hc, basetypes.ObjectAsOptions{}); !d.HasError() {
			validateHeaderNames(name, rp.AtName("request_headers").AtName("set"), hc.Set, resp)
			validateHeaderNames(name, rp.AtName("request_headers").AtName("add"), hc.Add, resp)
		}
	}
}

// validateRuleBackends rejects two backends on one pool and port: the
// API wants one with the sum of their weights.
func validateRuleBackends(ctx context.Context, name string, bp path.Path, backends types.List, resp *resource.ValidateConfigResponse) {
	if !isKnown(backends) {
		return
	}
	seen := map[string]int{}
	for k, v := range backends.Elements() {
		obj, ok := v.(types.Object)
		if !ok || !isKnown(obj) {
			continue
		}
		var b ruleBackendModel
		if d := obj.As(ctx, &b, basetypes.ObjectAsOptions{}); d.HasError() || !isKnown(b.TargetPoolID) || !isKnown(b.Port) {
			continue
		}
		at := fmt.Sprintf("%s:%d", b.TargetPoolID.ValueString(), b.Port.ValueInt64())
		if j, dup := seen[at]; dup {
			resp.Diagnostics.AddAttributeError(bp.AtListIndex(k), "Duplicate rule backend",
				fmt.Sprintf("Rule %q has backends[%d] and backends[%d] both on %s port %d: give one backend the sum of "+
					"their weights.", name, j, k, b.TargetPoolID.ValueString(), b.Port.ValueInt64()))
		}
		seen[at] = k
	}
}

// validateHeaderNames rejects names of a header map that are one header
// name, as HTTP compares them ignoring case.
func validateHeaderNames(name string, hp path.Path, headers types.Map, resp *resource.ValidateConfigResponse) {
	if !isKnown(headers) {
		return
	}
	seen := map[string]string{}
	for _, h := range slices.Sorted(maps.Keys(headers.Elements())) {
		c := strings.ToLower(h)
		if other, dup := seen[c]; dup {
			resp.Diagnostics.AddAttributeError(hp.AtMapKey(h), "Duplicate header name",
				fmt.Sprintf("Rule %q names headers %q and %q, which are one header: header names are case-insensitive.",
					name, other, h))
		}
		seen[c] = h
	}
}
