package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The API's checks of rules (simulator/rules.go), made at plan time:
// single values by the schema's validators, the rest by validateRules.

const (
	maxHostnameLen    = 253
	maxHeaderValueLen = 4096
)

var (
	// hostnameRE is a lower-case RFC 1123 name, or one with a leading "*."
	// label; exactHostnameRE is one without.
	hostnameRE      = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	exactHostnameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// noControlRE: header values without control characters.
	noControlRE = regexp.MustCompile(`^\P{Cc}*$`)

	// headerNameValidator accepts an HTTP header name (RFC 9110 token).
	headerNameValidator = stringvalidator.RegexMatches(tokenRE, "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)")
	// queryParamNameValidator accepts a query parameter name: a token, as
	// Gateway API's.
	queryParamNameValidator = stringvalidator.RegexMatches(tokenRE,
		"must be a query parameter name (letters, digits and !#$%&'*+-.^_`|~)")
	tokenRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

	// rulePathValidator is the API's check of a rule's path.
	rulePathValidator = stringCheck{
		description: "must be a normalized absolute path of printable ASCII",
		summary:     "Invalid rule path",
		check: func(p string) error {
			if err := exampleapi.CheckPath(p); err != nil {
				return sentence(fmt.Errorf("the path %w", err))
			}
			return nil
		},
	}
)

// fixedResponseCodeValidator is the API's check of a fixed response's
// status_code: one of exampleapi.FixedResponseCodes.
type fixedResponseCodeValidator struct{}

func (fixedResponseCodeValidator) Description(context.Context) string {
	return "must be in " + fixedResponseCodeList("", " or ")
}

func (v fixedResponseCodeValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (fixedResponseCodeValidator) ValidateInt64(_ context.Context, req validator.Int64Request, resp *validator.Int64Response) {
	if !isKnown(req.ConfigValue) || exampleapi.IsFixedResponseCode(int(req.ConfigValue.ValueInt64())) {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid fixed response status code",
		fmt.Sprintf("%d is not a fixed response code: it must be in %s. A 3xx is a redirect's: use redirect instead.",
			req.ConfigValue.ValueInt64(), fixedResponseCodeList("", " or ")))
}

// fixedResponseCodeList writes exampleapi.FixedResponseCodes as "200-299
// or 400-599", each code between quote.
func fixedResponseCodeList(quote, sep string) string {
	rs := make([]string, len(exampleapi.FixedResponseCodes))
	for i, r := range exampleapi.FixedResponseCodes {
		rs[i] = fmt.Sprintf("%s%d%s-%s%d%s", quote, r.Min, quote, quote, r.Max, quote)
	}
	return strings.Join(rs, sep)
}

// validateRules checks the rules of a load balancer (validateEachRule):
// each one's priority or order key (validateRuleOrder), its listener and
// what it allows (validateRuleListener, validateL4Rule), and priorities
// unique per listener among its numbered rules. Unknown values skip the
// checks that need them.
func validateRules(ctx context.Context, rules types.Map, listeners types.Map, resp *resource.ValidateConfigResponse) {
	byPort, complete := listenersByPort(ctx, listeners)
	priorities := map[listenerPriority]string{} // rule name
	validateEachRule(ctx, rules, resp, func(name string, rp path.Path, r ruleModel) {
		validateRuleOrder(name, rp, r, resp)
		if !isKnown(r.ListenerPort) || r.ListenerProtocol.IsUnknown() {
			return
		}
		port := r.ListenerPort.ValueInt64()
		// Without the listeners, only rules naming the listener alike are
		// known to share it.
		key := listenerPriority{listener: fmt.Sprintf("%d %s", port, r.ListenerProtocol.ValueString())}
		on := fmt.Sprintf("listener port %d", port)
		if complete {
			l, found := validateRuleListener(name, rp, port, r.ListenerProtocol.ValueString(), byPort[port], resp)
			if !found {
				return
			}
			key.listener = listenerKey(l.Protocol.ValueString(), port)
			on = fmt.Sprintf("listener %q", key.listener)
			validateL4Rule(ctx, name, rp, r, key.listener, l.Protocol.ValueString(), resp)
		}
		if isKnown(r.Priority) {
			key.priority = r.Priority.ValueInt64()
			if other, dup := priorities[key]; dup {
				resp.Diagnostics.AddAttributeError(rp.AtName("priority"), "Rule priority already in use",
					fmt.Sprintf("Rules %q and %q both have priority %d on %s: priorities are unique per listener, as "+
						"they order its rules.", other, name, key.priority, on))
			}
			priorities[key] = name
		}
	})
}

// validateEachRule checks the rules of either resource: their count
// against the cloud's limit (before the rules: they are not worth
// checking then), then each known rule in name order, by check (what its
// resource knows of it) and alone (validateRule).
func validateEachRule(ctx context.Context, rules types.Map, resp *resource.ValidateConfigResponse,
	check func(name string, rp path.Path, r ruleModel)) {
	if !isKnown(rules) {
		return
	}
	if n := len(rules.Elements()); n > exampleapi.MaxRules {
		resp.Diagnostics.AddAttributeError(path.Root("rules"), "Too many rules",
			fmt.Sprintf("rules has %d entries; the Example cloud allows at most %d rules per load balancer.", n, exampleapi.MaxRules))
		return
	}
	for _, name := range slices.Sorted(maps.Keys(rules.Elements())) {
		r, ok := knownRule(ctx, rules.Elements()[name])
		if !ok {
			continue
		}
		rp := path.Root("rules").AtMapKey(name)
		check(name, rp, r)
		validateRule(ctx, name, rp, r, resp)
	}
}

// listenerPriority is a priority on a listener ("<protocol>/<port>").
type listenerPriority struct {
	listener string
	priority int64
}

// listenersByPort is the configured listeners by port. complete is false
// when one is unknown: the rules' listeners cannot be checked then.
func listenersByPort(ctx context.Context, listeners types.Map) (byPort map[int64][]listenerModel, complete bool) {
	if !isKnown(listeners) {
		return nil, false
	}
	byPort = map[int64][]listenerModel{}
	for _, key := range slices.Sorted(maps.Keys(listeners.Elements())) {
		l, ok := knownAs[listenerModel](ctx, listeners.Elements()[key])
		if !ok || !isKnown(l.Protocol) || !isKnown(l.Port) || l.RedirectToHTTPSPort.IsUnknown() {
			return nil, false
		}
		byPort[l.Port.ValueInt64()] = append(byPort[l.Port.ValueInt64()], l)
	}
	return byPort, true
}

// validateRuleListener finds the listener of ls (those on port) the rule
// routes, as the API does: the one of protocol, or for "" the port's
// listener of the TCP ports, else its udp one. It must forward (no
// redirect_to_https_port). found is false when there is none.
func validateRuleListener(name string, rp path.Path, port int64, protocol string, ls []listenerModel,
	resp *resource.ValidateConfigResponse) (l listenerModel, found bool) {
	if protocol != "" && !slices.Contains(exampleapi.ListenerProtocols, protocol) {
		return l, false // the attribute's validator says so
	}
	i := slices.IndexFunc(ls, func(l listenerModel) bool {
		p := l.Protocol.ValueString()
		return p == protocol || protocol == "" && p != exampleapi.ProtocolUDP
	})
	if i < 0 && protocol == "" && len(ls) > 0 {
		i = 0
	}
	switch {
	case len(ls) == 0:
		resp.Diagnostics.AddAttributeError(rp.AtName("listener_port"), "No listener for the rule",
			fmt.Sprintf("Rule %q has listener_port = %d, but listeners has no listener on port %d. A rule routes the "+
				"requests or connections of a listener of this load balancer.", name, port, port))
		return l, false
	case i < 0:
		have := make([]string, len(ls))
		for k, l := range ls {
			have[k] = listenerKey(l.Protocol.ValueString(), port)
		}
		slices.Sort(have)
		resp.Diagnostics.AddAttributeError(rp.AtName("listener_protocol"), "No such listener for the rule",
			fmt.Sprintf("Rule %q has listener_port = %d and listener_protocol = %q, but port %d has only %s. Set "+
				"listener_protocol to one of them, or leave it unset for the listener of the TCP ports.",
				name, port, protocol, port, strings.Join(have, " and ")))
		return l, false
	case !ls[i].RedirectToHTTPSPort.IsNull():
		resp.Diagnostics.AddAttributeError(rp.AtName("listener_port"), "Rule on a redirecting listener",
			fmt.Sprintf("Rule %q has listener_port = %d, and listener %q redirects every request to https "+
				"(redirect_to_https_port): it has no requests to route. Put the rule on the https listener.",
				name, port, listenerKey(exampleapi.ProtocolHTTP, port)))
	}
	return ls[i], true
}

// validateL4Rule checks a rule of a tcp, udp or tls listener (key) against
// what it sees: connections, not HTTP requests. A tls listener matches
// only hostnames, against the SNI name; tcp and udp rules have no
// conditions; none of them can redirect, answer with a fixed response,
// change headers, time or retry requests, or choose their backends'
// protocol, nor be ordered by an order key.
func validateL4Rule(ctx context.Context, name string, rp path.Path, r ruleModel, key, proto string, resp *resource.ValidateConfigResponse) {
	if proto == exampleapi.ProtocolHTTP || proto == exampleapi.ProtocolHTTPS {
		return
	}
	if !r.OrderKey.IsNull() {
		resp.Diagnostics.AddAttributeError(rp.AtName("order_key"), "Rule order_key not allowed on a "+proto+" listener",
			fmt.Sprintf("Rule %q routes listener %q, whose rules are ordered by priority only: order_key orders the "+
				"rules of http and https listeners. Set priority instead.", name, key))
	}
	why := "tcp and udp rules have no conditions: the rule of lowest priority takes every connection"
	if proto == exampleapi.ProtocolTLS {
		why = "a tls listener passes TLS through and matches only hostnames, against the SNI name"
	}
	condition := func(attr string, set bool) {
		if set {
			resp.Diagnostics.AddAttributeError(rp.AtName(attr), "Rule condition not allowed on a "+proto+" listener",
				fmt.Sprintf("Rule %q routes listener %q, so it takes no %s: %s.", name, key, attr, why))
		}
	}
	condition("hostnames", proto != exampleapi.ProtocolTLS && isKnown(r.Hostnames) && len(r.Hostnames.Elements()) > 0)
	// One error for the pair: path needs path_type and the reverse.
	condition("path_type", !r.PathType.IsNull())
	condition("path", !r.Path.IsNull() && r.PathType.IsNull())
	condition("method", !r.Method.IsNull())
	condition("headers", isKnown(r.Headers) && len(r.Headers.Elements()) > 0)
	condition("query_params", isKnown(r.QueryParams) && len(r.QueryParams.Elements()) > 0)
	action := func(attr string, v types.Object) {
		if !v.IsNull() {
			resp.Diagnostics.AddAttributeError(rp.AtName(attr), "Rule action not allowed on a "+proto+" listener",
				fmt.Sprintf("Rule %q routes listener %q, which forwards connections to backends: it takes no %s "+
					"(http and https listeners only).", name, key, attr))
		}
	}
	action("redirect", r.Redirect)
	action("fixed_response", r.FixedResponse)
	action("request_headers", r.RequestHeaders)
	action("response_headers", r.ResponseHeaders)
	action("rewrite", r.Rewrite)
	action("timeouts", r.Timeouts)
	action("retry", r.Retry)
	action("cors", r.CORS)
	action("session_persistence", r.Session)
	validateL4BackendProtocols(ctx, name, rp.AtName("backends"), r.Backends, key, proto, resp)
}

// validateL4BackendProtocols rejects a backend protocol or TLS on a tcp,
// udp or tls listener's rule: it forwards connections as they come.
func validateL4BackendProtocols(ctx context.Context, name string, bp path.Path, backends types.List, key, proto string,
	resp *resource.ValidateConfigResponse) {
	if !isKnown(backends) {
		return
	}
	for k, v := range backends.Elements() {
		b, ok := knownAs[ruleBackendModel](ctx, v)
		if !ok {
			continue
		}
		for _, a := range []struct {
			attr, what string
			set        bool
		}{{"protocol", "protocol", !b.Protocol.IsNull()}, {"tls", "TLS", !b.TLS.IsNull()}} {
			if a.set {
				resp.Diagnostics.AddAttributeError(bp.AtListIndex(k).AtName(a.attr), "Backend "+a.what+" not allowed on a "+proto+" listener",
					fmt.Sprintf("Rule %q routes listener %q, which forwards connections as they come: its backends take no "+
						"%s (http and https listeners only).", name, key, a.attr))
			}
		}
	}
}

// validateRulePath checks a rule's path as its path_type reads it: a
// regular expression, or a path (either, while path_type is unknown).
func validateRulePath(name string, pp path.Path, pathType types.String, p string, resp *resource.ValidateConfigResponse) {
	if pathType.IsUnknown() {
		return
	}
	if pathType.ValueString() == exampleapi.PathRegex {
		if err := exampleapi.CheckPathRegex(p); err != nil {
			resp.Diagnostics.AddAttributeError(pp, "Invalid rule path", fmt.Sprintf("Rule %q's regex path %s.", name, err))
		}
		return
	}
	if err := exampleapi.CheckPath(p); err != nil {
		resp.Diagnostics.AddAttributeError(pp, "Invalid rule path", fmt.Sprintf("Rule %q's path %s.", name, err))
	}
}

// validateRule checks one rule: path with path_type, one action (backends,
// a redirect or a fixed response), distinct backends, and header names
// unique ignoring case.
func validateRule(ctx context.Context, name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	switch {
	case isKnown(r.Path) && r.PathType.IsNull():
		resp.Diagnostics.AddAttributeError(rp.AtName("path_type"), "Missing rule path type",
			fmt.Sprintf("Rule %q has a path, so it needs path_type: one of %s.", name, strings.Join(exampleapi.PathTypes, ", ")))
	case isKnown(r.PathType) && r.Path.IsNull():
		resp.Diagnostics.AddAttributeError(rp.AtName("path"), "Missing rule path",
			fmt.Sprintf("Rule %q has path_type %q, so it needs a path such as \"/api\".", name, r.PathType.ValueString()))
	case isKnown(r.Path):
		validateRulePath(name, rp.AtName("path"), r.PathType, r.Path.ValueString(), resp)
	}
	if !r.Redirect.IsNull() && isKnown(r.Backends) && len(r.Backends.Elements()) > 0 {
		resp.Diagnostics.AddAttributeError(rp.AtName("redirect"), "Conflicting rule redirect and backends",
			fmt.Sprintf("Rule %q has a redirect and %d backends: a rule either redirects or forwards. Remove one.",
				name, len(r.Backends.Elements())))
	}
	if isKnown(r.Redirect) && isKnown(r.Rewrite) {
		resp.Diagnostics.AddAttributeError(rp.AtName("rewrite"), "Conflicting rule redirect and rewrite",
			fmt.Sprintf("Rule %q has a redirect and a rewrite: a rule either redirects or forwards (rewritten). Remove one.", name))
	}
	validatePathPrefix(name, rp.AtName("redirect"), r.Redirect, r.PathType, resp)
	validatePathPrefix(name, rp.AtName("rewrite"), r.Rewrite, r.PathType, resp)
	validateFixedResponse(name, rp, r, resp)
	validateTimeoutsAndRetry(ctx, name, rp, r, resp)
	validateSession(ctx, name, rp, r, resp)
	validateRuleBackends(ctx, name, rp.AtName("backends"), r.Backends, resp)
	validateHeaderNames(name, rp.AtName("headers"), r.Headers, resp)
	validateHeaderChanges(ctx, name, rp.AtName("request_headers"), r.RequestHeaders, resp)
	validateHeaderChanges(ctx, name, rp.AtName("response_headers"), r.ResponseHeaders, resp)
}

// validateHeaderChanges rejects names of a header modifier's set or add
// that are one header name.
func validateHeaderChanges(ctx context.Context, name string, hp path.Path, changes types.Object, resp *resource.ValidateConfigResponse) {
	if hc, ok := knownAs[headerChangesModel](ctx, changes); ok {
		validateHeaderNames(name, hp.AtName("set"), hc.Set, resp)
		validateHeaderNames(name, hp.AtName("add"), hc.Add, resp)
	}
}

// validatePathPrefix rejects a path_prefix of the redirect or rewrite
// obj (at op) on a rule whose path_type is not prefix: it replaces what
// the prefix matched.
func validatePathPrefix(name string, op path.Path, obj types.Object, pathType types.String,
	resp *resource.ValidateConfigResponse) {
	if !isKnown(obj) || pathType.IsUnknown() || pathType.ValueString() == exampleapi.PathPrefix {
		return
	}
	if p, ok := obj.Attributes()["path_prefix"]; !ok || p.IsNull() {
		return
	}
	have := "unset"
	if !pathType.IsNull() {
		have = strconv.Quote(pathType.ValueString())
	}
	resp.Diagnostics.AddAttributeError(op.AtName("path_prefix"), "Rule path_prefix without a prefix match",
		fmt.Sprintf("Rule %q has a path_prefix, which replaces what the rule's path prefix matched, but its path_type is "+
			"%s: set path_type = \"prefix\" (and path), or use path to replace the whole path.", name, have))
}

// validateFixedResponse rejects a fixed response with anything else to
// do: the load balancer answers the request itself, so there is nothing
// to forward, redirect, rewrite or change the headers of. One error, on
// fixed_response, names the first of them. What is unknown (it may be
// null at apply time) conflicts with nothing yet.
func validateFixedResponse(name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	if !isKnown(r.FixedResponse) {
		return
	}
	other := ""
	switch {
	case isKnown(r.Backends) && len(r.Backends.Elements()) > 0:
		other = fmt.Sprintf("%d backends", len(r.Backends.Elements()))
	case isKnown(r.Redirect):
		other = "a redirect"
	case isKnown(r.RequestHeaders):
		other = "request_headers"
	case isKnown(r.Rewrite):
		other = "a rewrite"
	default:
		return
	}
	resp.Diagnostics.AddAttributeError(rp.AtName("fixed_response"), "Conflicting rule fixed_response",
		fmt.Sprintf("Rule %q has a fixed_response and %s: a rule with a fixed_response answers the request itself and "+
			"forwards nothing, so it takes no backends, redirect, request_headers or rewrite. Remove one.", name, other))
}

// validateRuleBackends rejects two backends on one pool and port: the
// API wants one with the sum of their weights.
func validateRuleBackends(ctx context.Context, name string, bp path.Path, backends types.List, resp *resource.ValidateConfigResponse) {
	if !isKnown(backends) {
		return
	}
	seen := map[string]int{}
	for k, v := range backends.Elements() {
		b, ok := knownAs[ruleBackendModel](ctx, v)
		if !ok {
			continue
		}
		if !b.TLS.IsNull() && b.Protocol.ValueString() == exampleapi.BackendH2C {
			resp.Diagnostics.AddAttributeError(bp.AtListIndex(k).AtName("tls"), "Conflicting backend tls and protocol",
				fmt.Sprintf("Rule %q has backends[%d] with tls and protocol = \"h2c\", HTTP/2 in cleartext: a backend over TLS "+
					"is spoken to in HTTP/1.1. Remove one.", name, k))
		}
		if !isKnown(b.TargetPoolID) || !isKnown(b.Port) {
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
