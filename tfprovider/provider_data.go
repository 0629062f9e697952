package tfprovider

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// providerData is what Configure hands to resources and data sources.
type providerData struct {
	client *exampleapi.Client
	// region is the provider's default region; may be empty.
	region string
	// uploads are the certificates this configuration (one terraform
	// command) created or adopted: never leftovers of an earlier apply.
	uploads certificateUploads
}

func newProviderData(s settings, version, terraformVersion string, pool http.RoundTripper) (*providerData, error) {
	retries := s.MaxRetries
	if retries == 0 {
		retries = -1 // exampleapi treats 0 as "default", negative as "none"
	}
	ua := "terraform-provider-example/" + version
	if terraformVersion != "" {
		ua += " terraform/" + terraformVersion
	}
	c, err := exampleapi.New(exampleapi.Options{
		Endpoint:       s.Endpoint,
		Token:          s.Token,
		RequestTimeout: s.RequestTimeout,
		RetryMax:       retries,
		UserAgent:      ua,
		HTTPClient:     &http.Client{Transport: logTransport{next: pool}},
	})
	if err != nil {
		return nil, fmt.Errorf("configuring the API client: %w", err)
	}
	return &providerData{client: c, region: s.Region}, nil
}

// configuredData extracts the provider data in a resource's or data
// source's Configure. It is nil before the provider is configured, or while
// its configuration has unknown values.
func configuredData(in any, diags *diag.Diagnostics) *providerData {
	if in == nil {
		return nil
	}
	d, ok := in.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider.", in))
		return nil
	}
	return d
}

// notConfigured reports that an operation needs an API client that the
// provider could not create yet.
func notConfigured(diags *diag.Diagnostics) {
	diags.AddError("Provider not configured",
		"The example provider's configuration depends on values that are not known yet "+
			"(for example attributes of resources that are still to be created), so it cannot call the API. "+
			"Apply the resources the provider configuration depends on first (terraform apply -target=...).")
}

// logTransport logs each HTTP attempt (retries included) with the
// request's tflog context. Only method, path, status and duration: headers
// carry the token and are never logged.
type logTransport struct {
	next http.RoundTripper
}

func (t logTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	fields := map[string]any{
		"method":      r.Method,
		"path":        r.URL.Path,
		"duration_ms": time.Since(start).Milliseconds(),
	}
	if err != nil {
		fields["error"] = err.Error()
		tflog.Debug(r.Context(), "Example API request failed", fields)
		return nil, err
	}
	fields["status"] = resp.StatusCode
	tflog.Debug(r.Context(), "Example API request", fields)
	return resp, nil
}
