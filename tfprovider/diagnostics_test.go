package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

func TestLBFieldResolver(t *testing.T) {
	r := lbFieldResolver(exampleapi.LoadBalancerSpec{LoadBalancerSettings: exampleapi.LoadBalancerSettings{
		Listeners:          []exampleapi.Listener{{Protocol: "tcp", Port: 80}, {Protocol: "udp", Port: 53}},
		AllowedSourceCIDRs: []string{"10.0.0.0/8"}, Targets: []string{"i-a", "i-b"}}})
	cases := map[string]path.Path{
		"name":                         path.Root("name"),
		"listeners":                    path.Root("listeners"),
		"listeners[1].port":            path.Root("listeners").AtMapKey("udp/53").AtName("port"),
		"listeners[0]":                 path.Root("listeners").AtMapKey("tcp/80"),
		"listeners[2].port":            path.Root("listeners"),
		"health_check.timeout_seconds": path.Root("health_check").AtName("timeout_seconds"),
		"targets[1]":                   path.Root("targets").AtSetValue(types.StringValue("i-b")),
		"allowed_source_cidrs[0]":      path.Root("allowed_source_cidrs").AtSetValue(types.StringValue("10.0.0.0/8")),
		"targets[7]":                   path.Root("targets"),
	}
	for field, want := range cases {
		got, ok := r(field)
		if !ok || !got.Equal(want) {
			t.Errorf("%s: got %v %v, want %v", field, got, ok, want)
		}
	}
	for _, field := range []string{"", "bogus", "listeners[x].port", "listeners[1", "version", ".port"} {
		if p, ok := r(field); ok {
			t.Errorf("%q resolved to %v", field, p)
		}
	}
}

func TestAddAPIError(t *testing.T) {
	resolver := listFieldResolver(map[string]bool{"listeners": true}, nil)
	cases := []struct {
		name     string
		err      error
		wantPath path.Path
		want     string
	}{
		{"field error on attribute",
			&exampleapi.APIError{StatusCode: 400, Field: "listeners[0].port", Message: "listeners[0].port: 0 is out of range"},
			path.Root("listeners").AtListIndex(0).AtName("port"), "0 is out of range"},
		{"unknown field stays general", &exampleapi.APIError{Op: "X", StatusCode: 400, Field: "nope", Message: "bad"}, path.Empty(), "bad"},
		{"unauthorized hint", fmt.Errorf("wrapped: %w", &exampleapi.APIError{Op: "X", StatusCode: 401}), path.Empty(), "EXAMPLE_TOKEN"},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), path.Empty(), "cancelled"},
		{"plain", errors.New("connection refused"), path.Empty(), "connection refused"},
	}
	for _, c := range cases {
		var diags diag.Diagnostics
		addAPIError(&diags, "Summary", c.err, resolver)
		if len(diags) != 1 || diags[0].Summary() != "Summary" || !strings.Contains(diags[0].Detail(), c.want) {
			t.Errorf("%s: %v", c.name, diags)
			continue
		}
		var got path.Path
		if wp, ok := diags[0].(diag.DiagnosticWithPath); ok {
			got = wp.Path()
		}
		if got.String() != c.wantPath.String() {
			t.Errorf("%s: path %v, want %v", c.name, got, c.wantPath)
		}
	}
}

func TestAddWaitError(t *testing.T) {
	cases := []struct {
		err      error
		creating bool
		want     string
	}{
		{&lbFailedError{id: "lb-1", message: "pool exhausted"}, true, "pool exhausted"},
		{&lbFailedError{id: "lb-1"}, true, "tainted"},
		{fmt.Errorf("w: %w", context.Canceled), true, "interrupted"},
		{fmt.Errorf("w: %w", context.DeadlineExceeded), false, "see the timeouts argument"},
		{errGone, true, "removed from state"},
	}
	for _, c := range cases {
		var diags diag.Diagnostics
		addWaitError(&diags, "S", "lb-1", c.err, c.creating)
		if !diags.HasError() || !strings.Contains(diags[0].Detail(), c.want) {
			t.Errorf("%v: %v", c.err, diags)
		}
	}
}
