package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// resourceBase is the plugin-framework glue every resource shares: its
// type name and the provider data Configure hands it.
type resourceBase struct {
	// name follows the provider's type name: "route" is example_route.
	name string
	data *providerData
}

func (b *resourceBase) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.name
}

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// decoding is one read of a plan, state or configuration into a model or
// a value.
type decoding func(context.Context) diag.Diagnostics

// get decodes all of from (a tfsdk.Plan, State or Config) into a model.
func get(from interface {
	Get(context.Context, any) diag.Diagnostics
}, into any) decoding {
	return func(ctx context.Context) diag.Diagnostics { return from.Get(ctx, into) }
}

// getAttribute decodes one attribute of from.
func getAttribute(from interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}, p path.Path, into any) decoding {
	return func(ctx context.Context) diag.Diagnostics { return from.GetAttribute(ctx, p, into) }
}

// loadConfigured starts an operation that calls the API: once the provider
// has its client, it makes each decoding. False means diags holds why and
// the operation stops.
func loadConfigured(ctx context.Context, data *providerData, diags *diag.Diagnostics, decodings ...decoding) bool {
	if data == nil {
		notConfigured(diags)
		return false
	}
	for _, decode := range decodings {
		diags.Append(decode(ctx)...)
	}
	return !diags.HasError()
}
