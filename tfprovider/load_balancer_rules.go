package tfprovider

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The rules argument of example_load_balancer and of
// example_load_balancer_rule_set (exampleapi/rules.go): a map keyed by
// rule name, the API's identity of a rule, so a plan shows a changed rule,
// its priority included, as that rule updated in place. The two differ in
// how a rule is ordered only (load_balancer_rule_order.go). The schema,
// then the conversion to and from the API; ValidateConfig's checks are in
// resource_load_balancer_validate_rules.go.

func rulesAttribute() schema.MapNestedAttribute {
	return ruleMapAttribute(fmt.Sprintf("Routing rules of the listeners (what a Gateway API Gateway's routes render to), at most "+
		"%d with those of the load balancer's rule sets (`example_load_balancer_rule_set`), keyed by rule name: 1-128 "+
		"letters, digits and `._-/:@#*`, the rule's identity in the cloud, so a plan shows any change of a rule (its "+
		"`priority` too) as that rule updated in place. A listener with rules serves each request or connection by the "+
		"first rule whose conditions all hold: its numbered rules by lowest `priority`, then (`http` and `https` only) its "+
		"keyed rules by `order_key`; it answers `404` when no "+
		"rule matches (a `tls` connection is reset); a listener without rules forwards everything to the load "+
		"balancer's targets (`targets` or `target_pool_id`). The conditions: on `http` and `https` listeners (L7, "+
		"HTTPRoutes) `hostnames`, `path`, `method`, `headers` and `query_params`; on `tls` listeners (TLSRoutes) `hostnames` only, "+
		"matched against the SNI name; `tcp` and `udp` rules (TCPRoutes, UDPRoutes) have none, so the rule of lowest "+
		"priority takes every connection. The action: forwarding to `backends`; on `http` and `https` listeners, a "+
		"`redirect` or a `fixed_response` instead, the request's host or path `rewrite` and its `request_headers` "+
		"changed before forwarding, `response_headers` before answering, and each backend's `protocol` (`tcp`, `udp` and `tls` rules only forward, as the connections come). Unset (the default) means no rules.", exampleapi.MaxRules),
		byPriorityOrKey)
}

// ruleMapAttribute is a rules attribute (desc), its rules ordered by
// order: a load balancer's and a rule set's differ only in that.
func ruleMapAttribute(desc string, order ruleOrder) schema.MapNestedAttribute {
	attrs := map[string]schema.Attribute{
		"listener_port": schema.Int64Attribute{
			Required: true,
			Description: "Port of the load balancer's listener (`listeners`) the rule routes, not an `http` one with " +
				"`redirect_to_https_port` (it forwards nothing).",
			Validators: []validator.Int64{int64validator.Between(1, 65535)},
		},
		"listener_protocol": schema.StringAttribute{
			Optional: true,
			Description: "Protocol of the listener on `listener_port` the rule routes, one of " + quoted(exampleapi.ListenerProtocols) +
				": needed only for the `udp` listener of a port that also has one of the TCP ports (`tcp`, `tls`, `http` or " +
				"`https`), which the rule routes when this is unset. Set, it must be the protocol of a listener on that port.",
			Validators: []validator.String{stringvalidator.OneOf(exampleapi.ListenerProtocols...)},
		},
		"hostnames": schema.ListAttribute{
			Optional:    true,
			ElementType: stringType,
			Description: fmt.Sprintf("Host names the request's `Host` (without its port, case-insensitively), or a `tls` "+
				"connection's SNI name, must be one of, at most %d lower-case DNS names (not on `tcp` and `udp` listeners); `*.example.com` matches names of one or more labels before "+
				"`.example.com`, not `example.com` itself. Unset: any host.", exampleapi.MaxRuleHostnames),
			Validators: []validator.List{listvalidator.SizeAtMost(exampleapi.MaxRuleHostnames),
				listvalidator.ValueStringsAre(stringvalidator.LengthAtMost(maxHostnameLen),
					stringvalidator.RegexMatches(hostnameRE, "must be a lower-case DNS name or a wildcard (*.example.com)"))},
		},
		"path_type": schema.StringAttribute{
			Optional: true,
			Description: "How `path` matches the request's path: `exact`; `prefix` by whole path elements (`/api` " +
				"matches `/api` and `/api/v1`, not `/apis`; `/` matches every path); or `regex`, a regular expression " +
				"of RE2's syntax the whole path must match (`/api/v[0-9]+` matches `/api/v2`, not `/api/v2/x`). " +
				"Required with `path`. `http` and `https` listeners only, as are `path`, `method`, `headers` and `query_params`.",
			Validators: []validator.String{stringvalidator.OneOf(exampleapi.PathTypes...)},
		},
		"path": schema.StringAttribute{
			Optional: true,
			Description: "Path to match (with `path_type`): starts with `/`, printable ASCII without spaces, `?`, `#`, " +
				"`//`, `/./` or `/../`, at most 1024 characters; for `regex`, a regular expression of RE2's syntax, " +
				"printable ASCII, at most 1024 characters. Unset: any path.",
		},
		"method": schema.StringAttribute{
			Optional:    true,
			Description: "HTTP method the request must have: one of " + quoted(exampleapi.RuleMethods) + ". Unset: any.",
			Validators:  []validator.String{stringvalidator.OneOf(exampleapi.RuleMethods...)},
		},
		"headers": headerMapAttribute(fmt.Sprintf("Headers the request must carry, name to exact value (names are "+
			"case-insensitive, so two names that differ only in case are an error), at most %d.", exampleapi.MaxRuleHeaders),
			exampleapi.MaxRuleHeaders),
		"query_params":   ruleQueryParamsAttribute(),
		"backends":       ruleBackendsAttribute(),
		"redirect":       ruleRedirectAttribute(),
		"fixed_response": ruleFixedResponseAttribute(),
		"rewrite":        ruleRewriteAttribute(),
		"request_headers": headerChangesAttribute("Changes to the request's headers before it is forwarded: `set`, then "+
			"`add`, then `remove` (`http` and `https` listeners only).", "the request"),
		"response_headers": headerChangesAttribute("Changes to the headers of the rule's answer before the client gets "+
			"it (the backend's response, the `redirect` or the `fixed_response`): `set`, then `add`, then `remove` (`http` "+
			"and `https` listeners only).", "the response"),
		"timeouts": ruleTimeoutsAttribute(),
		"retry":    ruleRetryAttribute(),
		"cors":     ruleCORSAttribute(),
		// Keeps a client on one target (load_balancer_rule_session.go).
		"session_persistence": ruleSessionAttribute(),
	}
	maps.Copy(attrs, order.attributes())
	return schema.MapNestedAttribute{
		Optional:    true,
		Description: desc,
		// The maximum is checked in ValidateConfig, naming the cloud's limit.
		Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(exampleapi.RuleNameRE,
			"must be a rule name: 1-128 letters, digits and ._-/:@#*"))},
		NestedObject: schema.NestedAttributeObject{Attributes: attrs},
	}
}

func ruleBackendsAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional: true,
		Description: fmt.Sprintf("Where the rule forwards the requests it matches, at most %d, shared by `weight` (100 "+
			"requests at weights 80 and 20 are 80 and 20). A rule without backends, `redirect` or `fixed_response`, or "+
			"whose backends all weigh 0, answers `500`; one whose weighted backends' pools all have no targets answers "+
			"`503`. Not with `redirect` or `fixed_response`.", exampleapi.MaxRuleBackends),
		Validators: []validator.List{listvalidator.SizeAtMost(exampleapi.MaxRuleBackends)},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"target_pool_id": schema.StringAttribute{
				Required: true,
				Description: "Id (`tp-...`) of a target pool (`example_target_pool`) of the load balancer's region; " +
					"while a rule forwards to it, the pool cannot be deleted.",
				Validators: []validator.String{idValidator("tp-")},
			},
			"port": schema.Int64Attribute{
				Required: true,
				Description: "Port on the pool's targets the requests go to: 1-65535 for a pool of instances, such as a " +
					"Service's node port; `0` for a pool of `target_type = \"ip\"`, whose targets carry their ports. The " +
					"cloud checks which at apply.",
				Validators: []validator.Int64{int64validator.Between(0, 65535)},
			},
			"weight": schema.Int64Attribute{
				Optional: true,
				Computed: true,
				Default:  int64default.StaticInt64(1),
				Description: fmt.Sprintf("Share of the requests, 0-%d; a backend of weight 0 gets none. Defaults to `1`.",
					exampleapi.MaxBackendWeight),
				Validators: []validator.Int64{int64validator.Between(0, exampleapi.MaxBackendWeight)},
			},
			"protocol": schema.StringAttribute{
				Optional: true,
				Description: "How the load balancer speaks to the pool's targets, whatever the client spoke: `http` " +
					"(HTTP/1.1, what a WebSocket's upgrade needs) or `h2c` (HTTP/2 without TLS, by prior knowledge: a " +
					"Service port of `appProtocol` `kubernetes.io/h2c`; an upgrade to it fails with `502`). `http` and " +
					"`https` listeners only. Unset: `http`.",
				Validators: []validator.String{stringvalidator.OneOf(exampleapi.BackendProtocols...)},
			},
			"tls": backendTLSAttribute(),
		}},
	}
}

func ruleRedirectAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Answer the requests the rule matches with a redirect to the request's URL with the fields set " +
			"here replaced, instead of forwarding them (not with non-empty `backends`, nor with `fixed_response`; `http` " +
			"and `https` listeners only).",
		Attributes: map[string]schema.Attribute{
			"scheme": schema.StringAttribute{
				Optional:    true,
				Description: "`http` or `https`. Unset: the request's.",
				Validators:  []validator.String{stringvalidator.OneOf("http", "https")},
			},
			"hostname": schema.StringAttribute{
				Optional:    true,
				Description: "Host name of the `Location` (a lower-case DNS name, no wildcard). Unset: the request's.",
				Validators: []validator.String{stringvalidator.LengthAtMost(maxHostnameLen),
					stringvalidator.RegexMatches(exactHostnameRE, "must be a lower-case DNS name (no wildcard)")},
			},
			"port": schema.Int64Attribute{
				Optional: true,
				Description: "Port of the `Location` (1-65535). Unset: the well-known port of `scheme` when it is set, else " +
					"the listener's. A scheme's well-known port is left out of the `Location`.",
				Validators: []validator.Int64{int64validator.Between(1, 65535)},
			},
			"path":        newPathAttribute("Path of the `Location`, in place of the request's."),
			"path_prefix": newPathPrefixAttribute("`Location`"),
			"status_code": schema.Int64Attribute{
				Required:    true,
				Description: "`301` (moved permanently), `302` (found), `303` (see other), `307` (temporary redirect) or `308` (permanent redirect).",
				Validators:  []validator.Int64{int64validator.OneOf(redirectCodes()...)},
			},
		},
	}
}

func ruleFixedResponseAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Answer the requests the rule matches with this status code, from the load balancer itself, " +
			"instead of forwarding them: e.g. a last rule for a listener's host names answering `404`, so that their " +
			"requests no other rule matches do not fall through to a wildcard rule after it. Not with non-empty " +
			"`backends`, `redirect` or `request_headers` (nothing is forwarded); `http` and `https` listeners only.",
		Attributes: map[string]schema.Attribute{
			"status_code": schema.Int64Attribute{
				Required: true,
				Description: "The answer's status code: " + fixedResponseCodeList("`", " or ") + " (a `3xx` is a " +
					"`redirect`'s).",
				Validators: []validator.Int64{fixedResponseCodeValidator{}},
			},
		},
	}
}

func ruleRewriteAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Change the request's host or path before it is forwarded (not with `redirect` or " +
			"`fixed_response`; `http` and `https` listeners only). What is unset is kept.",
		Attributes: map[string]schema.Attribute{
			"hostname": schema.StringAttribute{
				Optional:    true,
				Description: "`Host` the request is forwarded with (a lower-case DNS name, no wildcard).",
				Validators: []validator.String{stringvalidator.LengthAtMost(maxHostnameLen),
					stringvalidator.RegexMatches(exactHostnameRE, "must be a lower-case DNS name (no wildcard)")},
			},
			"path":        newPathAttribute("Path the request is forwarded with, in place of its own."),
			"path_prefix": newPathPrefixAttribute("forwarded request"),
		},
	}
}

// newPathAttribute is the path a redirect or rewrite puts in place of
// the request's.
func newPathAttribute(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional:    true,
		Description: desc + " A normalized absolute path, as the rule's `path`.",
		Validators:  []validator.String{rulePathValidator},
	}
}

// newPathPrefixAttribute is the prefix a redirect or rewrite puts in
// place of what the rule's prefix matched, in the path of what (the
// Location, the forwarded request); path is the alternative.
func newPathPrefixAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional: true,
		Description: "Prefix of the path of the " + what + ", in place of what the rule's `path` matched (the rule's " +
			"`path_type` must be `prefix`): `/v2` for `/v1` makes `/v1/items` `/v2/items`, `/` makes it `/items`. Not with `path`.",
		Validators: []validator.String{rulePathValidator,
			stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("path"))},
	}
}

// headerChangesAttribute is a header modifier (set, add, remove) of what
// (the request, the response).
func headerChangesAttribute(desc, what string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:    true,
		Description: desc,
		Attributes: map[string]schema.Attribute{
			"set": headerMapAttribute(fmt.Sprintf("Headers to set, name to value, replacing any %s has (at most %d).",
				what, exampleapi.MaxHeaderChanges), exampleapi.MaxHeaderChanges),
			"add": headerMapAttribute(fmt.Sprintf("Headers to add, name to value, appended (`, `-joined) to any %s "+
				"has (at most %d).", what, exampleapi.MaxHeaderChanges), exampleapi.MaxHeaderChanges),
			"remove": schema.ListAttribute{
				Optional:    true,
				ElementType: stringType,
				Description: fmt.Sprintf("Names of headers to remove (at most %d).", exampleapi.MaxHeaderChanges),
				Validators: []validator.List{listvalidator.SizeAtMost(exampleapi.MaxHeaderChanges),
					listvalidator.ValueStringsAre(headerNameValidator)},
			},
		},
	}
}

// ruleQueryParamsAttribute is the query parameters a rule matches: names
// are case-sensitive, so a map keeps them apart.
func ruleQueryParamsAttribute() schema.MapAttribute {
	return schema.MapAttribute{
		Optional:    true,
		ElementType: stringType,
		Description: fmt.Sprintf("Query parameters the request must carry, name to exact value: the first value of the "+
			"name in the request's query must be this one (names are case-sensitive; `%%`-escapes in the query are decoded "+
			"first), at most %d. Values are 1-%d characters.", exampleapi.MaxRuleQueryParams, exampleapi.MaxQueryParamValueLen),
		Validators: []validator.Map{
			mapvalidator.SizeAtMost(exampleapi.MaxRuleQueryParams),
			mapvalidator.KeysAre(queryParamNameValidator),
			mapvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, exampleapi.MaxQueryParamValueLen),
				stringvalidator.RegexMatches(noControlRE, "must not contain control characters")),
		},
	}
}

// headerMapAttribute is a map of header names to values; ValidateConfig
// rejects names equal but for case.
func headerMapAttribute(desc string, limit int) schema.MapAttribute {
	return schema.MapAttribute{
		Optional:    true,
		ElementType: stringType,
		Description: desc,
		Validators: []validator.Map{
			mapvalidator.SizeAtMost(limit),
			mapvalidator.KeysAre(headerNameValidator),
			mapvalidator.ValueStringsAre(stringvalidator.LengthAtMost(maxHeaderValueLen),
				stringvalidator.RegexMatches(noControlRE, "must not contain control characters")),
		},
	}
}

func redirectCodes() []int64 {
	out := make([]int64, len(exampleapi.RedirectCodes))
	for i, c := range exampleapi.RedirectCodes {
		out[i] = int64(c)
	}
	return out
}

// ruleModel is a rule of either resource (ruleAs): a rule set's has no
// priority, read as null.
type ruleModel struct {
	Priority types.Int64 `tfsdk:"priority"`
	keyedRuleModel
}

// keyedRuleModel is a rule set's rule: every attribute of a rule but
// priority.
type keyedRuleModel struct {
	ListenerPort     types.Int64  `tfsdk:"listener_port"`
	ListenerProtocol types.String `tfsdk:"listener_protocol"`
	OrderKey         types.String `tfsdk:"order_key"`
	Hostnames        types.List   `tfsdk:"hostnames"`
	PathType         types.String `tfsdk:"path_type"`
	Path             types.String `tfsdk:"path"`
	Method           types.String `tfsdk:"method"`
	Headers          types.Map    `tfsdk:"headers"`
	QueryParams      types.Map    `tfsdk:"query_params"`
	Backends         types.List   `tfsdk:"backends"`
	Redirect         types.Object `tfsdk:"redirect"`
	FixedResponse    types.Object `tfsdk:"fixed_response"`
	RequestHeaders   types.Object `tfsdk:"request_headers"`
	ResponseHeaders  types.Object `tfsdk:"response_headers"`
	Rewrite          types.Object `tfsdk:"rewrite"`
	Timeouts         types.Object `tfsdk:"timeouts"`
	Retry            types.Object `tfsdk:"retry"`
	CORS             types.Object `tfsdk:"cors"`
	Session          types.Object `tfsdk:"session_persistence"`
}

type ruleBackendModel struct {
	TargetPoolID types.String `tfsdk:"target_pool_id"`
	Port         types.Int64  `tfsdk:"port"`
	Weight       types.Int64  `tfsdk:"weight"`
	Protocol     types.String `tfsdk:"protocol"`
	TLS          types.Object `tfsdk:"tls"`
}

type ruleRedirectModel struct {
	Scheme     types.String `tfsdk:"scheme"`
	Hostname   types.String `tfsdk:"hostname"`
	Port       types.Int64  `tfsdk:"port"`
	Path       types.String `tfsdk:"path"`
	PathPrefix types.String `tfsdk:"path_prefix"`
	StatusCode types.Int64  `tfsdk:"status_code"`
}

type ruleRewriteModel struct {
	Hostname   types.String `tfsdk:"hostname"`
	Path       types.String `tfsdk:"path"`
	PathPrefix types.String `tfsdk:"path_prefix"`
}

type ruleFixedResponseModel struct {
	StatusCode types.Int64 `tfsdk:"status_code"`
}

type headerChangesModel struct {
	Set    types.Map  `tfsdk:"set"`
	Add    types.Map  `tfsdk:"add"`
	Remove types.List `tfsdk:"remove"`
}

var (
	// The rule's object types, as its schema builds them.
	ruleType              = objectType(rulesAttribute())
	keyedRuleType         = objectType(ruleMapAttribute("", byKey))
	ruleBackendType       = objectType(ruleBackendsAttribute())
	ruleRedirectType      = objectType(ruleRedirectAttribute())
	ruleRewriteType       = objectType(ruleRewriteAttribute())
	ruleFixedResponseType = objectType(ruleFixedResponseAttribute())
	headerChangesType     = objectType(headerChangesAttribute("", ""))
)

// rulesToAPI converts the rules (of either resource) of a known plan,
// each named by its key, ordered by listener port and protocol, priority,
// order key and name: requests, and the API's rules[i] in errors, do not
// depend on map iteration. None is nil.
func rulesToAPI(ctx context.Context, rules types.Map, diags *diag.Diagnostics) []exampleapi.Rule {
	if rules.IsNull() || rules.IsUnknown() {
		return nil
	}
	var out []exampleapi.Rule
	for name, v := range rules.Elements() {
		if r, ok := ruleAs(ctx, v, diags); ok {
			out = append(out, r.toAPI(ctx, name, diags))
		}
	}
	slices.SortFunc(out, compareRules)
	return out
}

func compareRules(a, b exampleapi.Rule) int {
	return cmp.Or(cmp.Compare(a.ListenerPort, b.ListenerPort), cmp.Compare(a.ListenerProtocol, b.ListenerProtocol),
		cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.OrderKey, b.OrderKey), cmp.Compare(a.Name, b.Name))
}

func (r ruleModel) toAPI(ctx context.Context, name string, diags *diag.Diagnostics) exampleapi.Rule {
	out := exampleapi.Rule{
		Name:             name,
		ListenerPort:     int(r.ListenerPort.ValueInt64()),
		ListenerProtocol: r.ListenerProtocol.ValueString(),
		Priority:         int(r.Priority.ValueInt64()),
		OrderKey:         r.OrderKey.ValueString(),
		Hostnames:        listStrings(ctx, r.Hostnames, diags),
		PathType:         r.PathType.ValueString(),
		Path:             r.Path.ValueString(),
		Method:           r.Method.ValueString(),
		Headers:          headersToAPI(ctx, r.Headers, diags),
	}
	for _, p := range headersToAPI(ctx, r.QueryParams, diags) {
		out.QueryParams = append(out.QueryParams, exampleapi.QueryParamMatch(p))
	}
	if isKnown(r.Backends) {
		var bs []ruleBackendModel
		diags.Append(r.Backends.ElementsAs(ctx, &bs, false)...)
		for _, b := range bs {
			out.Backends = append(out.Backends, exampleapi.RuleBackend{TargetPoolID: b.TargetPoolID.ValueString(),
				Port: int(b.Port.ValueInt64()), Weight: int(b.Weight.ValueInt64()), Protocol: b.Protocol.ValueString(),
				TLS: backendTLSToAPI(ctx, b.TLS, diags)})
		}
	}
	if rd, ok := objectAs[ruleRedirectModel](ctx, r.Redirect, diags); ok {
		out.Redirect = &exampleapi.Redirect{Scheme: rd.Scheme.ValueString(), Hostname: rd.Hostname.ValueString(),
			Port: int(rd.Port.ValueInt64()), Path: rd.Path.ValueString(), PathPrefix: rd.PathPrefix.ValueString(),
			StatusCode: int(rd.StatusCode.ValueInt64())}
	}
	if rw, ok := objectAs[ruleRewriteModel](ctx, r.Rewrite, diags); ok {
		out.Rewrite = &exampleapi.Rewrite{Hostname: rw.Hostname.ValueString(), Path: rw.Path.ValueString(),
			PathPrefix: rw.PathPrefix.ValueString()}
	}
	if fr, ok := objectAs[ruleFixedResponseModel](ctx, r.FixedResponse, diags); ok {
		out.FixedResponse = &exampleapi.FixedResponse{StatusCode: int(fr.StatusCode.ValueInt64())}
	}
	out.RequestHeaders = headerChangesToAPI(ctx, r.RequestHeaders, diags)
	out.ResponseHeaders = headerChangesToAPI(ctx, r.ResponseHeaders, diags)
	out.Timeouts, out.Retry = timeoutsToAPI(ctx, r.Timeouts, diags), retryToAPI(ctx, r.Retry, diags)
	out.CORS, out.SessionPersistence = corsToAPI(ctx, r.CORS, diags), sessionToAPI(ctx, r.Session, diags)
	return out
}

// headerChangesToAPI is a header modifier as the API's; null or unknown
// is nil.
func headerChangesToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.HeaderModifier {
	hc, ok := objectAs[headerChangesModel](ctx, o, diags)
	if !ok {
		return nil
	}
	return &exampleapi.HeaderModifier{Set: headersToAPI(ctx, hc.Set, diags), Add: headersToAPI(ctx, hc.Add, diags),
		Remove: listStrings(ctx, hc.Remove, diags)}
}

// headersToAPI is a map of header names to values as the API's list,
// sorted by name; null or empty is nil.
func headersToAPI(ctx context.Context, m types.Map, diags *diag.Diagnostics) []exampleapi.HeaderMatch {
	vals := knownStringMap(ctx, m, diags)
	var out []exampleapi.HeaderMatch
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, exampleapi.HeaderMatch{Name: name, Value: vals[name]})
	}
	return out
}

// listStrings decodes a list of strings in its order; null or unknown is nil.
func listStrings(ctx context.Context, l types.List, diags *diag.Diagnostics) []string {
	if !isKnown(l) {
		return nil
	}
	var out []string
	diags.Append(l.ElementsAs(ctx, &out, false)...)
	return out
}

func isKnown(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }

// isEmptyList tells whether l is a known empty list.
func isEmptyList(l types.List) bool { return isKnown(l) && len(l.Elements()) == 0 }

// rulesFromAPI is the rules attribute of the API's rules, keyed by name,
// ordered by order (a load balancer's or a rule set's). What the API
// leaves out reads as null, unless prior (plan or state) has it empty at
// the same place: the API cannot tell a configured [] or {} from none,
// and reading it back as null would be a diff.
func rulesFromAPI(ctx context.Context, rules []exampleapi.Rule, prior types.Map, order ruleOrder, diags *diag.Diagnostics) types.Map {
	t := order.objectType()
	if len(rules) == 0 {
		if isKnown(prior) && len(prior.Elements()) == 0 {
			return types.MapValueMust(t, map[string]attr.Value{})
		}
		return types.MapNull(t)
	}
	elems := make(map[string]attr.Value, len(rules))
	for _, r := range rules {
		elems[r.Name] = ruleFromAPI(ctx, r, priorRule(ctx, prior, r.Name), order, diags)
	}
	m, d := types.MapValue(t, elems)
	diags.Append(d...)
	return m
}

// priorRule is prior's rule name, or a rule of nulls.
func priorRule(ctx context.Context, prior types.Map, name string) ruleModel {
	r, _ := knownRule(ctx, prior.Elements()[name])
	return r
}

// ruleFromAPI is rule r as order has it: a keyed rule of a load balancer
// has a null priority, a rule set's none at all.
func ruleFromAPI(ctx context.Context, r exampleapi.Rule, prior ruleModel, order ruleOrder, diags *diag.Diagnostics) attr.Value {
	headers := func(hs []exampleapi.HeaderMatch, was types.Map) types.Map {
		vals := make(map[string]string, len(hs))
		for _, h := range hs {
			vals[h.Name] = h.Value
		}
		return stringMap(vals, was, diags)
	}
	backends := types.ListNull(ruleBackendType)
	if len(r.Backends) > 0 || isEmptyList(prior.Backends) {
		elems := make([]attr.Value, len(r.Backends))
		for i, b := range r.Backends {
			elems[i] = objectValue(ruleBackendType, map[string]attr.Value{"target_pool_id": types.StringValue(b.TargetPoolID),
				"port": types.Int64Value(int64(b.Port)), "weight": types.Int64Value(int64(b.Weight)),
				"protocol": optionalString(b.Protocol), "tls": backendTLSFromAPI(b.TLS, prior.Backends, i, diags)}, diags)
		}
		var d diag.Diagnostics
		backends, d = types.ListValue(ruleBackendType, elems)
		diags.Append(d...)
	}
	redirect := types.ObjectNull(ruleRedirectType.AttrTypes)
	if rd := r.Redirect; rd != nil {
		redirect = objectValue(ruleRedirectType, map[string]attr.Value{"scheme": optionalString(rd.Scheme),
			"hostname": optionalString(rd.Hostname), "port": optionalInt(rd.Port), "path": optionalString(rd.Path),
			"path_prefix": optionalString(rd.PathPrefix), "status_code": types.Int64Value(int64(rd.StatusCode))}, diags)
	}
	rewrite := types.ObjectNull(ruleRewriteType.AttrTypes)
	if rw := r.Rewrite; rw != nil {
		rewrite = objectValue(ruleRewriteType, map[string]attr.Value{"hostname": optionalString(rw.Hostname),
			"path": optionalString(rw.Path), "path_prefix": optionalString(rw.PathPrefix)}, diags)
	}
	fixed := types.ObjectNull(ruleFixedResponseType.AttrTypes)
	if fr := r.FixedResponse; fr != nil {
		fixed = objectValue(ruleFixedResponseType, map[string]attr.Value{"status_code": types.Int64Value(int64(fr.StatusCode))}, diags)
	}
	changes := func(hc *exampleapi.HeaderModifier, was types.Object) types.Object {
		if hc == nil {
			return types.ObjectNull(headerChangesType.AttrTypes)
		}
		p, _ := knownAs[headerChangesModel](ctx, was)
		return objectValue(headerChangesType, map[string]attr.Value{"set": headers(hc.Set, p.Set),
			"add": headers(hc.Add, p.Add), "remove": optionalStringList(hc.Remove, p.Remove)}, diags)
	}
	params := make([]exampleapi.HeaderMatch, len(r.QueryParams))
	for i, p := range r.QueryParams {
		params[i] = exampleapi.HeaderMatch(p)
	}
	attrs := map[string]attr.Value{
		"listener_port": types.Int64Value(int64(r.ListenerPort)), "listener_protocol": optionalString(r.ListenerProtocol),
		"order_key": optionalString(r.OrderKey), "hostnames": optionalStringList(r.Hostnames, prior.Hostnames),
		"path_type": optionalString(r.PathType), "path": optionalString(r.Path), "method": optionalString(r.Method),
		"headers": headers(r.Headers, prior.Headers), "query_params": headers(params, prior.QueryParams), "backends": backends,
		"redirect": redirect, "fixed_response": fixed, "request_headers": changes(r.RequestHeaders, prior.RequestHeaders),
		"response_headers": changes(r.ResponseHeaders, prior.ResponseHeaders), "rewrite": rewrite,
		"timeouts": timeoutsFromAPI(r.Timeouts, prior.Timeouts, diags), "retry": retryFromAPI(r.Retry, prior.Retry, diags),
		"cors": corsFromAPI(r.CORS, prior.CORS, diags), "session_persistence": sessionFromAPI(r.SessionPersistence, diags),
	}
	if order == byPriorityOrKey {
		attrs["priority"] = optionalInt(r.Priority)
	}
	return objectValue(order.objectType(), attrs, diags)
}

func objectValue(t types.ObjectType, attrs map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	v, d := types.ObjectValue(t.AttrTypes, attrs)
	diags.Append(d...)
	return v
}

// optionalInt maps the API's "absent" (0) to null.
func optionalInt(n int) types.Int64 {
	if n == 0 {
		return types.Int64Null()
	}
	return types.Int64Value(int64(n))
}

// optionalStringList is stringSet for lists: null when empty, unless
// prior is an empty list.
func optionalStringList(vals []string, prior types.List) types.List {
	if len(vals) == 0 && !isEmptyList(prior) {
		return types.ListNull(types.StringType)
	}
	return stringList(vals)
}
