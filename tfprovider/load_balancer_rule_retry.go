package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule's timeouts and retry (exampleapi.Timeouts, exampleapi.Retry):
// their schema and conversion to and from the API.

func ruleTimeoutsAttribute() schema.SingleNestedAttribute {
	ms := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{
			Optional: true,
			Description: fmt.Sprintf("%s, in milliseconds: %d-%d (an hour), or `0` (or unset) for none. Past it the load balancer "+
				"answers `504` and closes the connection of the try under way.", desc, exampleapi.MinTimeoutMS, exampleapi.MaxTimeoutMS),
			Validators: []validator.Int64{int64validator.Between(0, exampleapi.MaxTimeoutMS)},
		}
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "How long the load balancer waits for the answer of a request it forwards (not with `redirect` or " +
			"`fixed_response`; `http` and `https` listeners only).",
		Attributes: map[string]schema.Attribute{
			"request_ms": ms("The whole request's timeout, from its headers to the end of the answer, retries and their backoff included"),
			"backend_request_ms": ms("Each try's timeout, from sending it to a target to the end of its answer: at most " +
				"`request_ms` when both are set"),
		},
	}
}

func ruleRetryAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: fmt.Sprintf("Send a request again, to a target picked anew, when a try answers one of `status_codes` or "+
			"its target does not answer (a connection refused or reset); the client gets the last try's answer. Only a "+
			"replayable request is retried: a body of at most %d KiB, no upgrade (WebSocket). Not with `redirect` or "+
			"`fixed_response`; `http` and `https` listeners only.", exampleapi.MaxRetryBodyBytes>>10),
		Attributes: map[string]schema.Attribute{
			"attempts": schema.Int64Attribute{
				Required:    true,
				Description: fmt.Sprintf("Tries after the first, 1-%d.", exampleapi.MaxRetryAttempts),
				Validators:  []validator.Int64{int64validator.Between(1, exampleapi.MaxRetryAttempts)},
			},
			"status_codes": schema.ListAttribute{
				Optional:    true,
				ElementType: types.Int64Type,
				Description: fmt.Sprintf("Status codes of a try's answer that are retried, distinct, each in %s (a server's errors: "+
					"a timed-out try is `504`). Unset: only a target that does not answer.", exampleapi.RetryCodes),
				Validators: []validator.List{listvalidator.UniqueValues(), listvalidator.ValueInt64sAre(
					int64validator.Between(int64(exampleapi.RetryCodes.Min), int64(exampleapi.RetryCodes.Max)))},
			},
			"backoff_ms": schema.Int64Attribute{
				Optional: true,
				Description: fmt.Sprintf("Wait before each retry, in milliseconds: 0-%d (a minute). Unset: none.",
					exampleapi.MaxRetryBackoffMS),
				Validators: []validator.Int64{int64validator.Between(0, exampleapi.MaxRetryBackoffMS)},
			},
		},
	}
}

type ruleTimeoutsModel struct {
	RequestMS        types.Int64 `tfsdk:"request_ms"`
	BackendRequestMS types.Int64 `tfsdk:"backend_request_ms"`
}

type ruleRetryModel struct {
	Attempts    types.Int64 `tfsdk:"attempts"`
	StatusCodes types.List  `tfsdk:"status_codes"`
	BackoffMS   types.Int64 `tfsdk:"backoff_ms"`
}

var (
	ruleTimeoutsType = objectType(ruleTimeoutsAttribute())
	ruleRetryType    = objectType(ruleRetryAttribute())
)

// timeoutsToAPI is o as the API's timeouts; null or unknown is nil.
func timeoutsToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.Timeouts {
	t, ok := objectAs[ruleTimeoutsModel](ctx, o, diags)
	if !ok {
		return nil
	}
	return &exampleapi.Timeouts{RequestMS: int(t.RequestMS.ValueInt64()), BackendRequestMS: int(t.BackendRequestMS.ValueInt64())}
}

// retryToAPI is o as the API's retry; null or unknown is nil.
func retryToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.Retry {
	r, ok := objectAs[ruleRetryModel](ctx, o, diags)
	if !ok {
		return nil
	}
	out := &exampleapi.Retry{Attempts: int(r.Attempts.ValueInt64()), BackoffMS: int(r.BackoffMS.ValueInt64())}
	if isKnown(r.StatusCodes) {
		var codes []int64
		diags.Append(r.StatusCodes.ElementsAs(ctx, &codes, false)...)
		for _, c := range codes {
			out.StatusCodes = append(out.StatusCodes, int(c))
		}
	}
	return out
}

// timeoutsFromAPI is the timeouts attribute of the API's; what it leaves
// out (0, none) reads as null, or as 0 where prior has 0.
func timeoutsFromAPI(t *exampleapi.Timeouts, prior types.Object, diags *diag.Diagnostics) types.Object {
	if t == nil {
		return types.ObjectNull(ruleTimeoutsType.AttrTypes)
	}
	was, _ := knownAs[ruleTimeoutsModel](context.Background(), prior)
	return objectValue(ruleTimeoutsType, map[string]attr.Value{"request_ms": msFromAPI(t.RequestMS, was.RequestMS),
		"backend_request_ms": msFromAPI(t.BackendRequestMS, was.BackendRequestMS)}, diags)
}

// msFromAPI is a duration the API leaves out when 0 (none): null, or 0
// where prior says 0.
func msFromAPI(ms int, prior types.Int64) types.Int64 {
	if ms == 0 && isKnown(prior) && prior.ValueInt64() == 0 {
		return types.Int64Value(0)
	}
	return optionalInt(ms)
}

// retryFromAPI is the retry attribute of the API's; no status codes read
// as null unless prior has them an empty list.
func retryFromAPI(r *exampleapi.Retry, prior types.Object, diags *diag.Diagnostics) types.Object {
	if r == nil {
		return types.ObjectNull(ruleRetryType.AttrTypes)
	}
	codes := types.ListNull(types.Int64Type)
	was, _ := knownAs[ruleRetryModel](context.Background(), prior)
	if len(r.StatusCodes) > 0 || isEmptyList(was.StatusCodes) {
		elems := make([]attr.Value, len(r.StatusCodes))
		for i, c := range r.StatusCodes {
			elems[i] = types.Int64Value(int64(c))
		}
		var d diag.Diagnostics
		codes, d = types.ListValue(types.Int64Type, elems)
		diags.Append(d...)
	}
	return objectValue(ruleRetryType, map[string]attr.Value{"attempts": types.Int64Value(int64(r.Attempts)),
		"status_codes": codes, "backoff_ms": msFromAPI(r.BackoffMS, was.BackoffMS)}, diags)
}

// validateTimeoutsAndRetry checks what ValidateConfig can of a rule's
// timeouts and retry beyond their attributes: they bound and repeat what
// the rule forwards (no redirect, no fixed_response), and a try's
// timeout is within the request's.
func validateTimeoutsAndRetry(ctx context.Context, name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	answer := "" // what answers the rule's requests instead of forwarding them
	switch {
	case isKnown(r.Redirect):
		answer = "a redirect"
	case isKnown(r.FixedResponse):
		answer = "a fixed_response"
	}
	for _, a := range []struct {
		attr string
		v    types.Object
	}{{"timeouts", r.Timeouts}, {"retry", r.Retry}} {
		if answer == "" || !isKnown(a.v) {
			continue
		}
		resp.Diagnostics.AddAttributeError(rp.AtName(a.attr), "Conflicting rule "+a.attr,
			fmt.Sprintf("Rule %q has %s and %s: %s bound and repeat what a rule forwards, and this rule forwards nothing. "+
				"Remove one.", name, a.attr, answer, "timeouts and retry"))
	}
	t, ok := knownAs[ruleTimeoutsModel](ctx, r.Timeouts)
	if !ok || !isKnown(t.RequestMS) || !isKnown(t.BackendRequestMS) {
		return
	}
	if req, try := t.RequestMS.ValueInt64(), t.BackendRequestMS.ValueInt64(); req != 0 && try > req {
		resp.Diagnostics.AddAttributeError(rp.AtName("timeouts").AtName("backend_request_ms"), "Backend timeout past the request's",
			fmt.Sprintf("Rule %q has backend_request_ms = %d, longer than request_ms = %d: the request's timeout covers each of "+
				"its tries, so a try's must be at most request_ms.", name, try, req))
	}
}
