package tfprovider

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestResolveSettings(t *testing.T) {
	null := providerModel{Endpoint: types.StringNull(), Region: types.StringNull(), Token: types.StringNull(),
		RequestTimeout: types.StringNull(), MaxRetries: types.Int64Null()}
	with := func(f func(*providerModel)) providerModel { m := null; f(&m); return m }

	t.Run("environment fallbacks and defaults", func(t *testing.T) {
		s, diags := resolveSettings(null, env(map[string]string{
			EnvEndpoint: "http://127.0.0.1:8440", EnvToken: "secret", EnvRegion: "ex-west-1"}))
		if diags.HasError() {
			t.Fatal(diags)
		}
		want := settings{Endpoint: "http://127.0.0.1:8440", Token: "secret", Region: "ex-west-1",
			RequestTimeout: 30 * time.Second, MaxRetries: 8}
		if s != want {
			t.Fatalf("got %+v, want %+v", s, want)
		}
	})
	t.Run("block wins over environment", func(t *testing.T) {
		m := with(func(m *providerModel) {
			m.Endpoint = types.StringValue("https://api.example.com/")
			m.Token = types.StringValue("block")
			m.RequestTimeout = types.StringValue("2m")
			m.MaxRetries = types.Int64Value(0)
		})
		s, diags := resolveSettings(m, env(map[string]string{EnvEndpoint: "http://x", EnvToken: "env"}))
		if diags.HasError() || s.Endpoint != "https://api.example.com/" || s.Token != "block" ||
			s.RequestTimeout != 2*time.Minute || s.MaxRetries != 0 {
			t.Fatalf("got %+v %v", s, diags)
		}
	})

	errCases := []struct {
		name string
		m    providerModel
		env  map[string]string
		attr string
		want string
	}{
		{"missing endpoint and token", null, nil, "endpoint", "Set endpoint in the provider block or the EXAMPLE_ENDPOINT"},
		{"missing token", null, map[string]string{EnvEndpoint: "http://h"}, "token", "EXAMPLE_TOKEN"},
		{"bad endpoint from env", null, map[string]string{EnvEndpoint: "localhost:8440", EnvToken: "t"}, "endpoint",
			"the EXAMPLE_ENDPOINT environment variable"},
		{"endpoint with credentials", with(func(m *providerModel) { m.Endpoint = types.StringValue("http://u:p@h") }),
			map[string]string{EnvToken: "t"}, "endpoint", "must not carry credentials"},
		{"bad duration", with(func(m *providerModel) { m.RequestTimeout = types.StringValue("5") }),
			map[string]string{EnvEndpoint: "http://h", EnvToken: "t"}, "request_timeout", `"5" is not a duration`},
		{"zero duration", with(func(m *providerModel) { m.RequestTimeout = types.StringValue("0s") }),
			map[string]string{EnvEndpoint: "http://h", EnvToken: "t"}, "request_timeout", "greater than zero"},
		{"negative retries", with(func(m *providerModel) { m.MaxRetries = types.Int64Value(-1) }),
			map[string]string{EnvEndpoint: "http://h", EnvToken: "t"}, "max_retries", "between 0 and 100"},
	}
	for _, c := range errCases {
		t.Run(c.name, func(t *testing.T) {
			_, diags := resolveSettings(c.m, env(c.env))
			if !diags.HasError() {
				t.Fatal("no error")
			}
			found := false
			for _, d := range diags.Errors() {
				wd, ok := d.(interface{ Path() path.Path })
				if ok && wd.Path().Equal(path.Root(c.attr)) && strings.Contains(d.Detail(), c.want) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no error on %s containing %q: %v", c.attr, c.want, diags)
			}
		})
	}
}

func TestProviderSchemaIsValid(t *testing.T) {
	srv, err := providerserver.NewProtocol6WithError(New(Version)())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s: %s", d.Severity, d.Summary, d.Detail)
	}
	for _, name := range []string{"example_load_balancer", "example_route"} {
		if resp.ResourceSchemas[name] == nil {
			t.Errorf("resource %s missing", name)
		}
	}
	for _, name := range []string{"example_instance", "example_instances", "example_zones", "example_network"} {
		if resp.DataSourceSchemas[name] == nil {
			t.Errorf("data source %s missing", name)
		}
	}
}

// TestConfigureUnknown: with values known only at apply time the provider
// does not build a client (nor fail), and defers when Terraform allows it.
func TestConfigureUnknown(t *testing.T) {
	p := New(Version)()
	var sresp provider.SchemaResponse
	p.Schema(context.Background(), provider.SchemaRequest{}, &sresp)
	typ := sresp.Schema.Type().TerraformType(context.Background())
	cfg := tftypes.NewValue(typ, map[string]tftypes.Value{
		"endpoint":        tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
		"region":          tftypes.NewValue(tftypes.String, "ex-west-1"),
		"token":           tftypes.NewValue(tftypes.String, "t"),
		"request_timeout": tftypes.NewValue(tftypes.String, nil),
		"max_retries":     tftypes.NewValue(tftypes.Number, nil),
	})
	for _, deferral := range []bool{false, true} {
		var resp provider.ConfigureResponse
		p.Configure(context.Background(), provider.ConfigureRequest{
			Config:             tfsdk.Config{Raw: cfg, Schema: sresp.Schema},
			ClientCapabilities: provider.ConfigureProviderClientCapabilities{DeferralAllowed: deferral},
		}, &resp)
		if resp.Diagnostics.HasError() || resp.ResourceData != nil || resp.DataSourceData != nil {
			t.Fatalf("deferral=%v: got data %v, diags %v", deferral, resp.ResourceData, resp.Diagnostics)
		}
		if (resp.Deferred != nil) != deferral {
			t.Fatalf("deferral=%v: deferred = %+v", deferral, resp.Deferred)
		}
	}
}

func TestPlannedRegion(t *testing.T) {
	d := &providerData{region: "ex-west-1"}
	noRegion := &providerData{}
	s := types.StringValue
	cases := []struct {
		name       string
		cfg, state types.String
		data       *providerData
		want       types.String
		ok         bool
	}{
		{"configured", s("ex-east-1"), types.StringNull(), d, s("ex-east-1"), true},
		{"provider default", types.StringNull(), types.StringNull(), d, s("ex-west-1"), true},
		{"provider default wins over state", types.StringNull(), s("ex-east-1"), d, s("ex-west-1"), true},
		{"no default keeps state", types.StringNull(), s("ex-east-1"), noRegion, s("ex-east-1"), true},
		{"no region at all", types.StringNull(), types.StringNull(), noRegion, types.StringNull(), false},
		{"unconfigured provider", types.StringNull(), types.StringNull(), nil, types.StringUnknown(), true},
		{"unknown config", types.StringUnknown(), types.StringNull(), d, types.StringUnknown(), true},
	}
	for _, c := range cases {
		got, ok := plannedRegion(c.cfg, c.state, c.data)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
