// Package tfprovider is the Terraform provider for the Example cloud
// (source address example.com/example/example), built on
// terraform-plugin-framework and the exampleapi client.
package tfprovider

import (
	"context"
	"net/http"

	"github.com/hashicorp/go-cleanhttp"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Address is the provider's source address; Version the release this
// source tree builds. The mirror layout and lock file depend on both.
const (
	Address = "example.com/example/example"
	Version = "0.1.0"
)

// Environment variables read when the provider block leaves a field unset.
const (
	EnvEndpoint = "EXAMPLE_ENDPOINT"
	EnvRegion   = "EXAMPLE_REGION"
	EnvToken    = "EXAMPLE_TOKEN"
)

var (
	_ provider.Provider                       = (*exampleProvider)(nil)
	_ provider.ProviderWithEphemeralResources = (*exampleProvider)(nil)
)

type exampleProvider struct {
	version string
	// getenv answers the environment fallbacks: os.Getenv, except in a
	// provider served in-process (ServeInProcess), whose terraform process
	// has an environment of its own.
	getenv func(string) string
	// transport is the HTTP connection pool of every API client the
	// provider configures. Terraform configures the provider once per
	// process; served in-process, that is once per terraform command, and
	// a pool per configuration would keep each one's idle connections
	// (and their goroutines) open after the command ended.
	transport *http.Transport
}

func newExampleProvider(version string, getenv func(string) string) *exampleProvider {
	return &exampleProvider{version: version, getenv: getenv, transport: cleanhttp.DefaultPooledTransport()}
}

// New returns the provider factory providerserver wants.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return newExampleProvider(version, lookupEnv) }
}

// providerModel is the provider block.
type providerModel struct {
	Endpoint       types.String `tfsdk:"endpoint"`
	Region         types.String `tfsdk:"region"`
	Token          types.String `tfsdk:"token"`
	RequestTimeout types.String `tfsdk:"request_timeout"`
	MaxRetries     types.Int64  `tfsdk:"max_retries"`
}

func (p *exampleProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "example"
	resp.Version = p.version
}

func (p *exampleProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The Example provider manages load balancers, target pools, certificates, reserved addresses and routes of " +
			"the Example cloud and reads its instances, networks, zones, certificates and addresses.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				Optional: true,
				Description: "Base URL of the Example control API, e.g. `http://127.0.0.1:8440`. " +
					"Defaults to the `" + EnvEndpoint + "` environment variable; one of the two is required.",
				Validators: []validator.String{endpointValidator},
			},
			"region": schema.StringAttribute{
				Optional: true,
				Description: "Region used by resources and data sources that do not set their own `region`, " +
					"e.g. `ex-west-1`. Defaults to the `" + EnvRegion + "` environment variable.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"token": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				Description: "Read-write API token, sent as a bearer token and never logged. " +
					"Defaults to the `" + EnvToken + "` environment variable; one of the two is required.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"request_timeout": schema.StringAttribute{
				Optional: true,
				Description: "Time limit of one HTTP attempt, as a Go duration such as `30s` or `2m`. " +
					"Defaults to `" + defaultRequestTimeout.String() + "`.",
				Validators: []validator.String{durationValidator},
			},
			"max_retries": schema.Int64Attribute{
				Optional: true,
				Description: "Retries of a failed request (connection errors, 429 and 5xx answers) with " +
					"exponential backoff honouring `Retry-After`, 0-100; `0` disables retries. Defaults to `8`.",
				Validators: []validator.Int64{int64validator.Between(0, 100)},
			},
		},
	}
}

func (p *exampleProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.hasUnknown() {
		// Values from other resources are only known at apply time; Terraform
		// configures the provider again then. Until that, resources keep
		// their state and data sources report that they must wait.
		if req.ClientCapabilities.DeferralAllowed {
			resp.Deferred = &provider.Deferred{Reason: provider.DeferredReasonProviderConfigUnknown}
		}
		tflog.Info(ctx, "provider configuration has unknown values; not configuring the API client yet")
		return
	}
	s, diags := resolveSettings(cfg, p.getenv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, err := newProviderData(s, p.version, req.TerraformVersion, p.transport)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the Example API client", err.Error())
		return
	}
	tflog.Debug(ctx, "configured Example API client", map[string]any{
		"endpoint": s.Endpoint, "region": s.Region, "request_timeout": s.RequestTimeout.String(), "max_retries": s.MaxRetries,
	})
	resp.ResourceData = data
	resp.DataSourceData = data
}

func (p *exampleProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewLoadBalancerResource,
		NewTargetPoolResource,
		NewRouteResource,
		NewCertificateResource,
		NewAddressResource,
		NewRuleSetResource,
	}
}

// EphemeralResources: private keys for write-only arguments.
func (p *exampleProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{p.newPrivateKeysResource}
}

func (p *exampleProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewInstanceDataSource,
		NewInstancesDataSource,
		NewZonesDataSource,
		NewNetworkDataSource,
		NewCertificatesDataSource,
		NewAddressDataSource,
	}
}
