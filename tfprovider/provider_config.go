package tfprovider

import (
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const (
	defaultRequestTimeout = 30 * time.Second
	defaultMaxRetries     = 8
)

// settings is the provider configuration after environment fallbacks and
// defaults, validated.
type settings struct {
	Endpoint       string
	Region         string
	Token          string
	RequestTimeout time.Duration
	MaxRetries     int
}

func lookupEnv(name string) string { return os.Getenv(name) }

func (m providerModel) hasUnknown() bool {
	return m.Endpoint.IsUnknown() || m.Region.IsUnknown() || m.Token.IsUnknown() ||
		m.RequestTimeout.IsUnknown() || m.MaxRetries.IsUnknown()
}

// resolveSettings applies environment fallbacks and defaults. Every problem
// is reported on the attribute it concerns, also when the value came from
// the environment, so the user knows what to fix.
func resolveSettings(m providerModel, getenv func(string) string) (settings, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := settings{RequestTimeout: defaultRequestTimeout, MaxRetries: defaultMaxRetries}

	s.Endpoint = stringOrEnv(m.Endpoint, getenv, EnvEndpoint)
	switch {
	case s.Endpoint == "":
		diags.AddAttributeError(path.Root("endpoint"), "Missing Example API endpoint",
			"Set endpoint in the provider block or the "+EnvEndpoint+" environment variable, e.g. http://127.0.0.1:8440.")
	case checkEndpoint(s.Endpoint) != nil:
		diags.AddAttributeError(path.Root("endpoint"), "Invalid Example API endpoint",
			fmt.Sprintf("%s (value from %s).", checkEndpoint(s.Endpoint), sourceOf(m.Endpoint, EnvEndpoint)))
	}

	s.Token = stringOrEnv(m.Token, getenv, EnvToken)
	if s.Token == "" {
		diags.AddAttributeError(path.Root("token"), "Missing Example API token",
			"Set token in the provider block or the "+EnvToken+" environment variable.")
	}

	s.Region = stringOrEnv(m.Region, getenv, EnvRegion)

	if !m.RequestTimeout.IsNull() {
		d, err := parsePositiveDuration(m.RequestTimeout.ValueString())
		if err != nil {
			diags.AddAttributeError(path.Root("request_timeout"), "Invalid request timeout", err.Error())
		}
		s.RequestTimeout = d
	}
	if !m.MaxRetries.IsNull() {
		n := m.MaxRetries.ValueInt64()
		if n < 0 || n > 100 {
			diags.AddAttributeError(path.Root("max_retries"), "Invalid max_retries",
				fmt.Sprintf("max_retries must be between 0 and 100, got %d.", n))
		}
		s.MaxRetries = int(n)
	}
	return s, diags
}

func stringOrEnv(v types.String, getenv func(string) string, env string) string {
	if !v.IsNull() {
		return v.ValueString()
	}
	return getenv(env)
}

func sourceOf(v types.String, env string) string {
	if v.IsNull() {
		return "the " + env + " environment variable"
	}
	return "the provider block"
}

// checkEndpoint accepts absolute http(s) URLs without query or fragment,
// which is what the client joins API paths onto.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q must be an http:// or https:// URL such as http://127.0.0.1:8440", s)
	case u.Host == "":
		return fmt.Errorf("%q has no host; want a URL such as http://127.0.0.1:8440", s)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q must not have a query or fragment", s)
	case u.User != nil:
		return fmt.Errorf("the endpoint must not carry credentials; use token")
	}
	return nil
}

func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; use a number with a unit such as 30s, 1m30s or 2m", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be greater than zero", s)
	}
	return d, nil
}
