package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// Decoding a nested object into its model, the two ways the provider
// needs: a plan being sent to the API, and a value that may not be there
// yet (configuration being validated, a prior plan or state).

// objectAs decodes o, from a plan being sent, into a T; false when o is
// null or unknown (nothing to send). A failure to decode is an error.
func objectAs[T any](ctx context.Context, o types.Object, diags *diag.Diagnostics) (T, bool) {
	var m T
	if !isKnown(o) {
		return m, false
	}
	diags.Append(o.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	return m, true
}

// knownAs decodes v into a T; false, and T's zero value (all null), when v
// is not a known object or does not decode: what is not known yet has
// nothing to check, and a prior it cannot read is no prior.
func knownAs[T any](ctx context.Context, v attr.Value) (T, bool) {
	var m T
	o, ok := v.(types.Object)
	if !ok || !isKnown(o) || o.As(ctx, &m, basetypes.ObjectAsOptions{}).HasError() {
		var none T
		return none, false
	}
	return m, true
}
