package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule's session persistence (exampleapi.SessionPersistence): its
// schema, its conversion to and from the API, and ValidateConfig's check
// of it, which is the cloud's own.

func ruleSessionAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Keep each client on one target (`http` and `https` listeners only; not with `redirect` or " +
			"`fixed_response`): the rule's first answer to a client carries a session token naming the target it came " +
			"from, chosen by the backends' weights, and the requests that bring it back go to that target while it is a " +
			"healthy target of one of the rule's backends with weight. The token is opaque and signed by the load " +
			"balancer: it shows no address, and one changed, expired or of another rule gets a new choice and a new token, " +
			"never an error.",
		Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{Optional: true,
				Description: "How the client carries the token: `cookie` (a `Set-Cookie` of the rule's `path`, or `/`, " +
					"`HttpOnly`, `SameSite=Lax`, `Secure` on an `https` listener) or `header` (a response header the client sends back as a request header). Unset: `cookie`.",
				Validators: []validator.String{stringvalidator.OneOf(exampleapi.SessionTypes...)}},
			"name": schema.StringAttribute{Optional: true,
				Description: fmt.Sprintf("Name of the cookie or header: an HTTP token (RFC 9110) of 1-%d characters, not a "+
					"header the exchange owns (`Host`, `Cookie`, `Set-Cookie`...). Unset: `%s`.",
					exampleapi.MaxSessionNameLen, exampleapi.DefaultSessionName),
				Validators: []validator.String{stringvalidator.LengthBetween(1, exampleapi.MaxSessionNameLen),
					stringvalidator.RegexMatches(tokenRE, "must be a cookie or header name (letters, digits and !#$%&'*+-.^_`|~)")}},
			"absolute_timeout_seconds": schema.Int64Attribute{Optional: true,
				Description: fmt.Sprintf("A session ends this long after its token was issued, 1-%d seconds (30 days). "+
					"Unset: never.", exampleapi.MaxSessionTimeoutSeconds),
				Validators: []validator.Int64{int64validator.Between(1, exampleapi.MaxSessionTimeoutSeconds)}},
			"lifetime": schema.StringAttribute{Optional: true,
				Description: "The cookie's (type `cookie` only): `session`, gone when the browser closes, or `permanent`, " +
					"kept `absolute_timeout_seconds` (its `Max-Age`; required then). Unset: `session`.",
				Validators: []validator.String{stringvalidator.OneOf(exampleapi.SessionLifetimes...)}},
		},
	}
}

type ruleSessionModel struct {
	Type                   types.String `tfsdk:"type"`
	Name                   types.String `tfsdk:"name"`
	AbsoluteTimeoutSeconds types.Int64  `tfsdk:"absolute_timeout_seconds"`
	Lifetime               types.String `tfsdk:"lifetime"`
}

var ruleSessionType = objectType(ruleSessionAttribute())

// sessionToAPI is o as the API's session persistence; null or unknown
// is nil.
func sessionToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.SessionPersistence {
	m, ok := objectAs[ruleSessionModel](ctx, o, diags)
	if !ok {
		return nil
	}
	return &exampleapi.SessionPersistence{Type: m.Type.ValueString(), Name: m.Name.ValueString(),
		AbsoluteTimeoutSeconds: int(m.AbsoluteTimeoutSeconds.ValueInt64()), Lifetime: m.Lifetime.ValueString()}
}

// sessionFromAPI is the session_persistence attribute of the API's: what
// it leaves to the cloud's defaults reads as null.
func sessionFromAPI(s *exampleapi.SessionPersistence, diags *diag.Diagnostics) types.Object {
	if s == nil {
		return types.ObjectNull(ruleSessionType.AttrTypes)
	}
	return objectValue(ruleSessionType, map[string]attr.Value{"type": optionalString(s.Type), "name": optionalString(s.Name),
		"absolute_timeout_seconds": optionalInt(s.AbsoluteTimeoutSeconds), "lifetime": optionalString(s.Lifetime)}, diags)
}

// validateSession checks rule r's session_persistence, once its values
// are known and each valid on its own, as the cloud will: how they go
// together, and with the rule's redirect or fixed response (which exclude
// it), by the cloud's check of a rule holding them, its refusal reported
// at the field it names.
func validateSession(ctx context.Context, name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	m, ok := knownAs[ruleSessionModel](ctx, r.Session)
	if !ok || m.Type.IsUnknown() || m.Name.IsUnknown() || m.AbsoluteTimeoutSeconds.IsUnknown() || m.Lifetime.IsUnknown() {
		return
	}
	var diags diag.Diagnostics
	sp := sessionToAPI(ctx, r.Session, &diags)
	if (sp.Type != "" && !slices.Contains(exampleapi.SessionTypes, sp.Type)) ||
		(sp.Lifetime != "" && !slices.Contains(exampleapi.SessionLifetimes, sp.Lifetime)) ||
		(!m.Name.IsNull() && (len(sp.Name) > exampleapi.MaxSessionNameLen || !tokenRE.MatchString(sp.Name))) ||
		(!m.AbsoluteTimeoutSeconds.IsNull() && (sp.AbsoluteTimeoutSeconds < 1 || sp.AbsoluteTimeoutSeconds > exampleapi.MaxSessionTimeoutSeconds)) {
		return // a value wrong on its own: its attribute's validator says so
	}
	rule := exampleapi.Rule{SessionPersistence: sp}
	switch {
	case isKnown(r.Redirect):
		rule.Redirect = &exampleapi.Redirect{StatusCode: exampleapi.RedirectCodes[0]}
	case isKnown(r.FixedResponse):
		rule.FixedResponse = &exampleapi.FixedResponse{StatusCode: exampleapi.FixedResponseCodes[0].Min}
	}
	var re *exampleapi.RuleError
	if err := exampleapi.CheckRule(rule); errors.As(err, &re) {
		at := rp
		for _, f := range strings.Split(re.Field, ".") {
			at = at.AtName(f)
		}
		resp.Diagnostics.AddAttributeError(at, "Invalid rule session persistence", fmt.Sprintf("Rule %q: %s: %s.", name, re.Field, re.Reason))
	}
}
