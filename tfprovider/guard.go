package tfprovider

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// guarded recovers a panic in any RPC of the provider server it wraps
// (the handler runs on a gRPC goroutine, where an unrecovered panic ends
// the process: in-process, the controller). The RPC then fails with an
// error that terraform reports as a plugin error.
//
// Only the unary RPCs of tfprotov6.ProviderServer are wrapped; the
// optional streaming interfaces (list resources, actions, state stores)
// are not offered, which the Example provider does not implement anyway.
type guarded struct {
	next    tfprotov6.ProviderServer
	onPanic func(rpc string, value any, stack []byte)
}

var _ tfprotov6.ProviderServer = (*guarded)(nil)

func guard[Req, Resp any](g *guarded, rpc string, ctx context.Context, req *Req, call func(context.Context, *Req) (*Resp, error)) (resp *Resp, err error) {
	defer func() {
		if v := recover(); v != nil {
			g.onPanic(rpc, v, debug.Stack())
			resp, err = nil, fmt.Errorf("the Example provider panicked in %s: %v (this is a bug in the provider; the controller replaces the provider server)", rpc, v)
		}
	}()
	return call(ctx, req)
}

func (g *guarded) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return guard(g, "GetMetadata", ctx, req, g.next.GetMetadata)
}

func (g *guarded) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return guard(g, "GetProviderSchema", ctx, req, g.next.GetProviderSchema)
}

func (g *guarded) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return guard(g, "GetResourceIdentitySchemas", ctx, req, g.next.GetResourceIdentitySchemas)
}

func (g *guarded) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return guard(g, "ValidateProviderConfig", ctx, req, g.next.ValidateProviderConfig)
}

func (g *guarded) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return guard(g, "ConfigureProvider", ctx, req, g.next.ConfigureProvider)
}

func (g *guarded) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return guard(g, "StopProvider", ctx, req, g.next.StopProvider)
}

func (g *guarded) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return guard(g, "ValidateResourceConfig", ctx, req, g.next.ValidateResourceConfig)
}

func (g *guarded) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return guard(g, "UpgradeResourceState", ctx, req, g.next.UpgradeResourceState)
}

func (g *guarded) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return guard(g, "ReadResource", ctx, req, g.next.ReadResource)
}

func (g *guarded) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return guard(g, "PlanResourceChange", ctx, req, g.next.PlanResourceChange)
}

func (g *guarded) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return guard(g, "ApplyResourceChange", ctx, req, g.next.ApplyResourceChange)
}

func (g *guarded) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return guard(g, "ImportResourceState", ctx, req, g.next.ImportResourceState)
}

func (g *guarded) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return guard(g, "MoveResourceState", ctx, req, g.next.MoveResourceState)
}

func (g *guarded) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return guard(g, "UpgradeResourceIdentity", ctx, req, g.next.UpgradeResourceIdentity)
}

func (g *guarded) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return guard(g, "GenerateResourceConfig", ctx, req, g.next.GenerateResourceConfig)
}

func (g *guarded) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return guard(g, "ValidateDataResourceConfig", ctx, req, g.next.ValidateDataResourceConfig)
}

func (g *guarded) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return guard(g, "ReadDataSource", ctx, req, g.next.ReadDataSource)
}

func (g *guarded) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return guard(g, "CallFunction", ctx, req, g.next.CallFunction)
}

func (g *guarded) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return guard(g, "GetFunctions", ctx, req, g.next.GetFunctions)
}

func (g *guarded) ValidateEphemeralResourceConfig(ctx context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return guard(g, "ValidateEphemeralResourceConfig", ctx, req, g.next.ValidateEphemeralResourceConfig)
}

func (g *guarded) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return guard(g, "OpenEphemeralResource", ctx, req, g.next.OpenEphemeralResource)
}

func (g *guarded) RenewEphemeralResource(ctx context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return guard(g, "RenewEphemeralResource", ctx, req, g.next.RenewEphemeralResource)
}

func (g *guarded) CloseEphemeralResource(ctx context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return guard(g, "CloseEphemeralResource", ctx, req, g.next.CloseEphemeralResource)
}
