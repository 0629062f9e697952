package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule's CORS (exampleapi.CORS): its schema and conversion to and from
// the API; the cloud's own check refuses the rest at apply.

func ruleCORSAttribute() schema.SingleNestedAttribute {
	list := func(desc string, max int) schema.ListAttribute {
		return schema.ListAttribute{Optional: true, ElementType: types.StringType, Description: desc,
			Validators: []validator.List{listvalidator.SizeAtMost(max), listvalidator.UniqueValues()}}
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Answer browsers' cross-origin requests (`http` and `https` listeners only): a preflight (`OPTIONS` with " +
			"`Origin` and `Access-Control-Request-Method`) from an allowed origin is answered by the load balancer, `204` with " +
			"the `Access-Control-Allow-*` headers, and not forwarded; the rule's other answers to an allowed origin carry " +
			"`Access-Control-Allow-Origin` (the request's origin), `-Credentials` and `-Expose-Headers`. Another origin gets none.",
		Attributes: map[string]schema.Attribute{
			"allow_origins": schema.ListAttribute{Required: true, ElementType: types.StringType,
				Description: fmt.Sprintf("Origins allowed, 1-%d: `*`, an origin (`https://www.example.com`, a port allowed), or one "+
					"whose host begins with `*.` (one or more labels).", exampleapi.MaxCORSOrigins),
				Validators: []validator.List{listvalidator.SizeBetween(1, exampleapi.MaxCORSOrigins), listvalidator.UniqueValues()}},
			"allow_methods": list("Methods a preflight is told are allowed, or `[\"*\"]` for the one it asks.", exampleapi.MaxCORSMethods),
			"allow_headers": list("Request headers a preflight is told are allowed, or `[\"*\"]` for those it asks.", exampleapi.MaxCORSHeaders),
			"expose_headers": list("Response headers a browser may show the page (`Access-Control-Expose-Headers`).",
				exampleapi.MaxCORSHeaders),
			"allow_credentials": schema.BoolAttribute{Optional: true,
				Description: "Send `Access-Control-Allow-Credentials: true`. Unset: `false`."},
			"max_age_seconds": schema.Int64Attribute{Optional: true,
				Description: fmt.Sprintf("How long a browser may keep a preflight's answer, 1-%d seconds. Unset: %d.",
					exampleapi.MaxCORSMaxAgeSeconds, exampleapi.DefaultCORSMaxAgeSeconds),
				Validators: []validator.Int64{int64validator.Between(1, exampleapi.MaxCORSMaxAgeSeconds)}},
		},
	}
}

type ruleCORSModel struct {
	AllowOrigins     types.List  `tfsdk:"allow_origins"`
	AllowMethods     types.List  `tfsdk:"allow_methods"`
	AllowHeaders     types.List  `tfsdk:"allow_headers"`
	ExposeHeaders    types.List  `tfsdk:"expose_headers"`
	AllowCredentials types.Bool  `tfsdk:"allow_credentials"`
	MaxAgeSeconds    types.Int64 `tfsdk:"max_age_seconds"`
}

var ruleCORSType = objectType(ruleCORSAttribute())

// corsToAPI is o as the API's CORS; null or unknown is nil.
func corsToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.CORS {
	m, ok := objectAs[ruleCORSModel](ctx, o, diags)
	if !ok {
		return nil
	}
	return &exampleapi.CORS{AllowOrigins: listStrings(ctx, m.AllowOrigins, diags), AllowMethods: listStrings(ctx, m.AllowMethods, diags),
		AllowHeaders: listStrings(ctx, m.AllowHeaders, diags), ExposeHeaders: listStrings(ctx, m.ExposeHeaders, diags),
		AllowCredentials: m.AllowCredentials.ValueBool(), MaxAgeSeconds: int(m.MaxAgeSeconds.ValueInt64())}
}

// corsFromAPI is the cors attribute of the API's; what it leaves out
// (false, none) reads as null, or as prior has it.
func corsFromAPI(c *exampleapi.CORS, prior types.Object, diags *diag.Diagnostics) types.Object {
	if c == nil {
		return types.ObjectNull(ruleCORSType.AttrTypes)
	}
	was, _ := knownAs[ruleCORSModel](context.Background(), prior)
	creds := types.BoolNull()
	if c.AllowCredentials || isKnown(was.AllowCredentials) {
		creds = types.BoolValue(c.AllowCredentials)
	}
	return objectValue(ruleCORSType, map[string]attr.Value{"allow_origins": stringList(c.AllowOrigins),
		"allow_methods": optionalStringList(c.AllowMethods, was.AllowMethods), "allow_headers": optionalStringList(c.AllowHeaders, was.AllowHeaders),
		"expose_headers": optionalStringList(c.ExposeHeaders, was.ExposeHeaders), "allow_credentials": creds,
		"max_age_seconds": optionalInt(c.MaxAgeSeconds)}, diags)
}
