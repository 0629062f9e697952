package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

var (
	_ datasource.DataSourceWithConfigure        = (*dataSource[struct{}])(nil)
	_ datasource.DataSourceWithConfigValidators = (*dataSource[struct{}])(nil)
)

// dataSource is a data source of model M. Every data source reads the
// same way: the configuration decoded into M, read completes it from the
// API, and M is the state. Each data_source_*.go gives the rest.
type dataSource[M any] struct {
	// name follows the provider's type name: "zones" is example_zones.
	name       string
	schema     schema.Schema
	validators []datasource.ConfigValidator
	// read fills m, holding the configuration, from the API; an error
	// in diags leaves the state unset.
	read func(ctx context.Context, data *providerData, m *M, diags *diag.Diagnostics)

	data *providerData
}

func (d *dataSource[M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

func (d *dataSource[M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.schema
}

func (d *dataSource[M]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

func (d *dataSource[M]) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return d.validators
}

func (d *dataSource[M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &m)) {
		return
	}
	if d.read(ctx, d.data, &m, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
