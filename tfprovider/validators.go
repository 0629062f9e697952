package tfprovider

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// nameValidators mirror the API's naming rule so a bad name fails at plan
// time instead of half-way through an apply.
func nameValidators() []validator.String {
	return []validator.String{
		stringvalidator.LengthBetween(1, 253),
		stringvalidator.RegexMatches(regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`),
			"must start with a letter or digit and contain only letters, digits, '.', '_' and '-'"),
	}
}

// idValidator checks the kind prefix of an object id (lb-, rt-, i-, net-).
func idValidator(prefix string) validator.String {
	return stringvalidator.RegexMatches(regexp.MustCompile(`^`+regexp.QuoteMeta(prefix)+`[A-Za-z0-9._-]+$`),
		fmt.Sprintf("must be an id starting with %q", prefix))
}

// stringCheck validates a known string with check; the error becomes the
// attribute diagnostic's detail. One type serves every check-function
// validator (endpoint, duration, CIDR).
type stringCheck struct {
	description string
	summary     string
	check       func(string) error
}

func (v stringCheck) Description(context.Context) string { return v.description }

func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, v.summary, err.Error())
	}
}

// sentence ends an error message with a full stop.
func sentence(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w.", err) //nolint:staticcheck // diagnostics are sentences
}

var (
	// endpointValidator checks the provider endpoint URL when it is known.
	endpointValidator = stringCheck{
		description: "must be an http:// or https:// URL",
		summary:     "Invalid Example API endpoint",
		check:       func(s string) error { return sentence(checkEndpoint(s)) },
	}
	// durationValidator checks a positive Go duration string such as "30s".
	durationValidator = stringCheck{
		description: "must be a positive duration such as 30s or 2m",
		summary:     "Invalid duration",
		check: func(s string) error {
			_, err := parsePositiveDuration(s)
			return sentence(err)
		},
	}
	// cidrValidator accepts IPv4 and IPv6 CIDRs in canonical form only: no
	// host bits and the address written the way the API writes it back, so
	// that state never differs from configuration by spelling alone.
	cidrValidator = stringCheck{
		description: "must be an IPv4 or IPv6 CIDR in canonical form, e.g. 10.0.0.0/8 or 2001:db8::/32",
		summary:     "Invalid CIDR",
		check:       checkCIDR,
	}
	// ipValidator accepts an IP written the way the API writes it, for
	// the same reason.
	ipValidator = stringCheck{
		description: "must be an IPv4 or IPv6 address in canonical form, e.g. 203.0.113.7 or 2001:db8::7",
		summary:     "Invalid IP address",
		check:       checkIP,
	}
)

func checkIP(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Is4In6() || a.Zone() != "" {
		return fmt.Errorf("%q is not a valid IP address; use one such as 203.0.113.7 or 2001:db8::7", s)
	}
	if canon := a.String(); canon != s {
		return fmt.Errorf("%q is not in canonical form; write it as %q", s, canon)
	}
	return nil
}

func checkCIDR(s string) error {
	p, err := netip.ParsePrefix(s)
	if err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return fmt.Errorf("%q is not a valid CIDR; use a network such as 10.0.0.0/16 or fd00::/64", s)
	}
	if canon := p.Masked().String(); canon != s {
		if p.Masked() != p {
			return fmt.Errorf("%q has host bits set; did you mean %q?", s, canon)
		}
		return fmt.Errorf("%q is not in canonical form; write it as %q", s, canon)
	}
	return nil
}

var (
	noEqualsRE     = regexp.MustCompile(`^[^=]*$`)
	leadingSlashRE = regexp.MustCompile(`^/`)
	// cookieNameRE is the API's rule for sticky session cookie names.
	cookieNameRE = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$")
)

// checkIDPrefix checks an import id's kind prefix.
func checkIDPrefix(id, prefix string) error {
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return fmt.Errorf("%q is not an id of this kind: want one starting with %q", id, prefix)
	}
	return nil
}
