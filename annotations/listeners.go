package annotations

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxCertificates is the most certificates an https listener serves:
// tls-secrets and certificate-ids together (the cloud's limit).
const MaxCertificates = 25

// maxStickyCookieTTL is the cloud's limit on a sticky sessions cookie.
const maxStickyCookieTTL = 7 * 24 * time.Hour

var (
	certificateIDRE = regexp.MustCompile(`^cert-[A-Za-z0-9]{1,64}$`)
	// cookieNameRE is an RFC 6265 cookie name (an RFC 7230 token), as the
	// cloud accepts it.
	cookieNameRE = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$")
)

// HTTPSRedirectPort is the https port http listeners redirect to (0 when
// RedirectHTTPToHTTPS is off or there is no https port): 443 if in
// HTTPSPorts, else the lowest.
func (lb LoadBalancer) HTTPSRedirectPort() int32 {
	switch {
	case !lb.RedirectHTTPToHTTPS || len(lb.HTTPSPorts) == 0:
		return 0
	case slices.Contains(lb.HTTPSPorts, 443):
		return 443
	}
	return slices.Min(lb.HTTPSPorts)
}

// Certificates reports whether the Service names any certificate
// (TLSSecrets or CertificateIDs).
func (lb LoadBalancer) Certificates() bool {
	return len(lb.TLSSecrets) > 0 || len(lb.CertificateIDs) > 0
}

// items splits a comma-separated list, trimming each item. An empty item
// is an error: "80,,443" is more likely a slip than a list of two.
func items(v string) ([]string, error) {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, fmt.Errorf("item %d is empty", i+1)
		}
	}
	return parts, nil
}

func parsePorts(v string, dst *[]int32) error {
	parts, err := items(v)
	if err != nil {
		return err
	}
	ports := make([]int32, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.ParseInt(p, 10, 32)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return fmt.Errorf("port %q is out of range", Truncate(p))
		case err != nil:
			return fmt.Errorf("%q is not a whole number", Truncate(p))
		case n < 1 || n > 65535:
			return fmt.Errorf("port %d is out of range", n)
		}
		port := int32(n)
		if slices.Contains(ports, port) {
			return fmt.Errorf("port %d is listed twice", port)
		}
		ports = append(ports, port)
	}
	slices.Sort(ports)
	*dst = ports
	return nil
}

// parseUnique parses a list of names that check accepts, none twice, in
// the given order.
func parseUnique(v, what string, check func(string) error, dst *[]string) error {
	parts, err := items(v)
	if err != nil {
		return err
	}
	for i, p := range parts {
		if err := check(p); err != nil {
			return fmt.Errorf("%q is not a %s: %w", Truncate(p), what, err)
		}
		if slices.Contains(parts[:i], p) {
			return fmt.Errorf("%s %q is listed twice", what, Truncate(p))
		}
	}
	*dst = parts
	return nil
}

func parseTLSSecrets(v string, lb *LoadBalancer) error {
	return parseUnique(v, "Secret name", func(s string) error {
		if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
			return errors.New(strings.Join(errs, "; "))
		}
		return nil
	}, &lb.TLSSecrets)
}

func parseCertificateIDs(v string, lb *LoadBalancer) error {
	return parseUnique(v, "certificate id", func(s string) error {
		if !certificateIDRE.MatchString(s) {
			return errors.New("want cert- and 1-64 letters and digits")
		}
		return nil
	}, &lb.CertificateIDs)
}

func parseCookieName(v string, lb *LoadBalancer) error {
	if !cookieNameRE.MatchString(v) {
		return errors.New("not a cookie name")
	}
	lb.StickySessions.CookieName = v
	return nil
}

// crossCheckListeners checks the http and https listener annotations
// together. Whether each port is a TCP port of the Service is the
// renderer's check: it has the Service.
func crossCheckListeners(lb *LoadBalancer, ann map[string]string) []error {
	var errs []error
	fail := func(n Name, format string, args ...any) {
		errs = append(errs, &Error{Annotation: n, Value: ann[string(n)], Reason: fmt.Sprintf(format, args...)})
	}
	var both []string
	for _, p := range lb.HTTPSPorts {
		if slices.Contains(lb.HTTPPorts, p) {
			both = append(both, strconv.Itoa(int(p)))
		}
	}
	if len(both) > 0 {
		what := "port"
		if len(both) > 1 {
			what = "ports"
		}
		fail(LBHTTPSPorts, "%s %s also in %s: a port is served as http or https, not both", what, strings.Join(both, ", "), LBHTTPPorts)
	}
	if len(lb.HTTPSPorts) > 0 && !lb.Certificates() {
		fail(LBHTTPSPorts, "needs a certificate: set %s or %s", LBTLSSecrets, LBCertificateIDs)
	}
	if len(lb.HTTPSPorts) == 0 {
		if len(lb.TLSSecrets) > 0 {
			fail(LBTLSSecrets, "certificates are served by https listeners only: set %s", LBHTTPSPorts)
		}
		if len(lb.CertificateIDs) > 0 {
			fail(LBCertificateIDs, "certificates are served by https listeners only: set %s", LBHTTPSPorts)
		}
	}
	if n := len(lb.TLSSecrets) + len(lb.CertificateIDs); n > MaxCertificates {
		name := LBCertificateIDs
		if len(lb.TLSSecrets) > MaxCertificates {
			name = LBTLSSecrets
		}
		fail(name, "%d certificates (%d Secrets, %d certificate ids): an https listener serves at most %d",
			n, len(lb.TLSSecrets), len(lb.CertificateIDs), MaxCertificates)
	}
	if lb.RedirectHTTPToHTTPS {
		if len(lb.HTTPPorts) == 0 {
			fail(LBRedirectHTTPToHTTPS, "needs %s: the http listeners are the ones that redirect", LBHTTPPorts)
		}
		if len(lb.HTTPSPorts) == 0 {
			fail(LBRedirectHTTPToHTTPS, "needs %s: the port to redirect to", LBHTTPSPorts)
		}
	}
	ss := lb.StickySessions
	if ss.Enabled && len(lb.HTTPPorts) == 0 && len(lb.HTTPSPorts) == 0 {
		fail(LBStickySessions, "needs %s or %s: cookies need HTTP, and every port is tcp (or udp)", LBHTTPPorts, LBHTTPSPorts)
	}
	if !ss.Enabled {
		if ss.CookieName != "" {
			fail(LBStickySessionsCookieName, "has no effect: %s is not true", LBStickySessions)
		}
		if ss.TTL != 0 {
			fail(LBStickySessionsCookieTTL, "has no effect: %s is not true", LBStickySessions)
		}
	}
	return errs
}
