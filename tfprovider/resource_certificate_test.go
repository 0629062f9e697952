package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

const certAddr = "example_certificate.web"

// certConfig is the certificate "web" with c's PEM and key (as heredocs,
// the way a configuration reading files would pass them) and extra
// arguments.
func certConfig(c simtest.Cert, extra string) string {
	return fmt.Sprintf(`
resource "example_certificate" "web" {
  certificate_pem = <<-EOT
%sEOT
  private_key_wo  = <<-EOT
%sEOT
%s
}
`, c.CertPEM, c.KeyPEM, extra)
}

// httpsLBConfig is the load balancer "web": http/80 redirecting to
// https/443, which serves certificate_ids (an HCL expression) with sticky
// sessions, and an https health check.
func httpsLBConfig(certIDs string) string {
	return lbConfig("web", `  health_check = { protocol = "https", port = 8443, path = "/healthz" }`, fmt.Sprintf(`
    "http/80"   = { protocol = "http", port = 80, target_port = 8080, redirect_to_https_port = 443 }
    "https/443" = { protocol = "https", port = 443, target_port = 8080, certificate_ids = %s,
                    sticky_sessions = { cookie_name = "EXLB", ttl_seconds = 3600 } }
  `, certIDs))
}

// keyNowhere is a plan and state check that the private key of c (its
// base64 body, and any PEM key block) is in neither. The plan's
// configuration section is left out: it repeats the configuration as
// written, and these tests write the key literally. (Real configurations
// pass it through an ephemeral variable or file(); TestAccCertificate_keyNowhere
// checks the whole plan file, the state and the log that way.)
type keyNowhere struct{ secret string }

func noKey(c simtest.Cert) keyNowhere { return keyNowhere{secret: strings.Split(c.KeyPEM, "\n")[1]} }

func (k keyNowhere) find(what string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(raw) < 100 {
		return fmt.Errorf("%s JSON is only %d bytes; the check would prove nothing", what, len(raw))
	}
	if strings.Contains(string(raw), k.secret) || strings.Contains(string(raw), "PRIVATE KEY-----") {
		return fmt.Errorf("the private key is in the %s JSON", what)
	}
	return nil
}

func (k keyNowhere) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	p := *req.Plan
	p.Config = nil
	resp.Error = k.find("plan", p)
}

func (k keyNowhere) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = k.find("state", req.State)
}

// checkCertsLeft verifies through the API which certificates remain.
func (e *testEnv) checkCertsLeft(ids ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := bg()
		defer cancel()
		certs, err := e.client.ListCertificates(ctx, exampleapi.CertificateFilter{})
		if err != nil {
			return err
		}
		var have []string
		for _, c := range certs {
			have = append(have, c.ID)
		}
		slices.Sort(have)
		if want := slices.Sorted(slices.Values(ids)); fmt.Sprint(have) != fmt.Sprint(want) {
			return fmt.Errorf("certificates in the cloud %v, want %v", have, ids)
		}
		return nil
	}
}

// checkAllDestroyed: no load balancer and no certificate left.
func (e *testEnv) checkAllDestroyed(s *terraform.State) error {
	if err := e.checkLBsDestroyed(s); err != nil {
		return err
	}
	return e.checkCertsLeft()(s)
}

// stateID reads the id of addr into *id.
func stateID(addr string, id *string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s not in state", addr)
		}
		*id = rs.Primary.ID
		return nil
	}
}

// TestAccCertificate_rotation: a certificate served by an https listener
// (with an http redirect, sticky sessions and an https health check); its
// name, fingerprint and expiry known at plan time; the key in no plan and
// no state. Rotation with create_before_destroy: the new certificate is
// uploaded, the load balancer updated in place (same id) and the old
// certificate deleted, in one apply. Import; destroy.
func TestAccCertificate_rotation(t *testing.T) {
	e := newTestEnv(t)
	old := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
	renewed := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
	cbd := "  lifecycle {\n    create_before_destroy = true\n  }"
	lb := httpsLBConfig("[example_certificate.web.id]")
	sameLB := sameInEachStep()
	certIDs := newInEachStep()
	lbUsesCert := stateSame(certAddr, "id", lbAddr, "listeners.https/443.certificate_ids.0")
	var oldID, newID string

	accTest(t, e.checkAllDestroyed, []resource.TestStep{
		{
			Config: e.config(certConfig(old, "  private_key_wo_version = 1\n"+cbd) + lb),
			ConfigPlanChecks: beforeApply(
				planCreate(certAddr),
				planIs(certAddr, "name", "cert-"+old.Fingerprint[:16]),
				planIs(certAddr, "fingerprint", old.Fingerprint),
				planIs(certAddr, "not_after", old.NotAfter.Format("2006-01-02T15:04:05Z")),
				planIs(certAddr, "dns_names", listOf("shop.example.test")),
				planIs(certAddr, "region", "ex-west-1"),
				noKey(old),
			),
			ConfigStateChecks: stateChecks{
				sameLB(lbAddr, "id"),
				certIDs(certAddr, "id"),
				lbUsesCert,
				stateIs(certAddr, "id", matching(`^cert-`)),
				stateIs(certAddr, "private_key_wo", nil),
				stateIs(certAddr, "private_key_wo_version", 1),
				stateIs(certAddr, "common_name", "shop.example.test"),
				stateIs(lbAddr, "listeners.http/80.redirect_to_https_port", 443),
				stateIs(lbAddr, "listeners.http/80.certificate_ids", nil),
				stateIs(lbAddr, "listeners.https/443.sticky_sessions", object{"cookie_name": "EXLB", "ttl_seconds": 3600}),
				noKey(old),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				stateID(certAddr, &oldID),
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if len(lb.Listeners) != 2 || lb.Listeners[1].Protocol != "https" || lb.Listeners[1].CertificateIDs[0] != oldID ||
						lb.Listeners[0].RedirectToHTTPSPort != 443 || lb.Listeners[1].StickySessions == nil || lb.HealthCheck.Protocol != "https" {
						return fmt.Errorf("load balancer %+v", lb.LoadBalancerSpec)
					}
					return nil
				}),
			),
		},
		{
			// Rotation: new certificate and key, the version bumped.
			Config: e.config(certConfig(renewed, "  private_key_wo_version = 2\n"+cbd) + lb),
			ConfigPlanChecks: beforeApply(
				planReplace(certAddr, true),
				planUpdate(lbAddr),
				planIs(certAddr, "fingerprint", renewed.Fingerprint),
				noKey(renewed),
			),
			ConfigStateChecks: stateChecks{
				sameLB(lbAddr, "id"),
				certIDs(certAddr, "id"),
				lbUsesCert,
				noKey(renewed),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				stateID(certAddr, &newID),
				func(s *terraform.State) error { return e.checkCertsLeft(newID)(s) },
			),
		},
		{
			// Only the version: a new upload of the same certificate.
			Config: e.config(certConfig(renewed, "  private_key_wo_version = 3\n"+cbd) + lb),
			ConfigPlanChecks: beforeApply(
				planReplace(certAddr, true),
				planUpdate(lbAddr),
			),
			ConfigStateChecks: stateChecks{sameLB(lbAddr, "id"), lbUsesCert},
		},
		importStep(certAddr, "private_key_wo_version"),
	})
}

// TestAccCertificate_import: a certificate uploaded outside Terraform and
// imported with an import block: the plan is the import plus an in-place
// update that only records private_key_wo_version (no replacement), the
// key checked against the certificate at plan time. Then a version bump
// replaces it (uploading the key), and a name of its own replaces it too.
func TestAccCertificate_import(t *testing.T) {
	e := newTestEnv(t)
	c := simtest.NewCert(t, simtest.CertOptions{})
	other := simtest.NewCert(t, simtest.CertOptions{})
	ctx, cancel := bg()
	defer cancel()
	existing, err := e.client.CreateCertificate(ctx, exampleapi.CreateCertificateRequest{Name: "uploaded-by-hand", Region: "ex-west-1",
		CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	imp := fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", certAddr, existing.ID)
	wrongKey := strings.Replace(certConfig(c, "  private_key_wo_version = 1"), c.KeyPEM, other.KeyPEM, 1)

	accTest(t, e.checkAllDestroyed, []resource.TestStep{
		{
			Config:      e.config(imp + wrongKey),
			ExpectError: regexp.MustCompile(`Invalid private key[\s\S]*private_key_wo does not match the certificate`),
		},
		{
			Config: e.config(imp + certConfig(c, "  private_key_wo_version = 1")),
			ConfigPlanChecks: beforeApply(
				planUpdate(certAddr),
				planIs(certAddr, "name", "uploaded-by-hand"),
				noKey(c),
			),
			ConfigStateChecks: stateChecks{
				stateIs(certAddr, "id", existing.ID),
				stateIs(certAddr, "private_key_wo_version", 1),
				noKey(c),
			},
		},
		{
			Config:           e.config(certConfig(c, "  private_key_wo_version = 1")),
			ConfigPlanChecks: beforeApply(plancheck.ExpectEmptyPlan()),
		},
		{
			Config: e.config(certConfig(c, "  private_key_wo_version = 2")),
			ConfigPlanChecks: beforeApply(
				planReplace(certAddr, false),
				planIs(certAddr, "name", "cert-"+c.Fingerprint[:16]),
			),
			ConfigStateChecks: stateChecks{
				stateIs(certAddr, "id", matching(`^cert-`)),
			},
			Check: func(s *terraform.State) error {
				var id string
				if err := stateID(certAddr, &id)(s); err != nil {
					return err
				}
				if id == existing.ID {
					return fmt.Errorf("certificate %s was not replaced", id)
				}
				return e.checkCertsLeft(id)(s)
			},
		},
		{
			Config:           e.config(certConfig(c, "  private_key_wo_version = 2\n  name = \"shop\"\n  tags = { team = \"web\" }")),
			ConfigPlanChecks: beforeApply(planReplace(certAddr, false)),
			ConfigStateChecks: stateChecks{
				stateIs(certAddr, "name", "shop"),
				stateIs(certAddr, "tags", mapOf{"team": "web"}),
			},
		},
	})
}

// TestAccCertificate_inUse: replacing a certificate that a load balancer
// serves without create_before_destroy fails at the deletion with the
// advice to set it, and leaves both in place.
func TestAccCertificate_inUse(t *testing.T) {
	e := newTestEnv(t)
	a := simtest.NewCert(t, simtest.CertOptions{})
	b := simtest.NewCert(t, simtest.CertOptions{})
	lb := httpsLBConfig("[example_certificate.web.id]")
	var id string
	accTest(t, e.checkAllDestroyed, []resource.TestStep{
		{
			Config: e.config(certConfig(a, "") + lb),
			Check:  stateID(certAddr, &id),
		},
		{
			Config: e.config(certConfig(b, "") + lb),
			ExpectError: regexp.MustCompile(`Cannot delete certificate cert-[0-9a-f]+: it is in use[\s\S]*still\s+used\s+by\s+1\s+load\s+balancer` +
				`[\s\S]*create_before_destroy\s+=\s+true`),
		},
		{
			// Nothing changed: the old certificate stays, served.
			Config:           e.config(certConfig(a, "") + lb),
			ConfigPlanChecks: beforeApply(plancheck.ExpectEmptyPlan()),
			Check:            func(s *terraform.State) error { return e.checkCertsLeft(id)(s) },
		},
	})
}

// TestAccCertificate_validation: what the cloud would refuse fails the
// plan, naming the attribute and never quoting the key.
func TestAccCertificate_validation(t *testing.T) {
	tftest.RequireAcceptance(t)
	t.Parallel()
	e := newTestEnv(t)
	c := simtest.NewCert(t, simtest.CertOptions{})
	other := simtest.NewCert(t, simtest.CertOptions{})
	weak := simtest.NewCert(t, simtest.CertOptions{RSABits: 1024})
	garbage := simtest.Cert{CertPEM: "not a certificate\n", KeyPEM: c.KeyPEM}
	swapped := simtest.Cert{CertPEM: c.CertPEM, KeyPEM: c.CertPEM}
	mismatch := simtest.Cert{CertPEM: c.CertPEM, KeyPEM: other.KeyPEM}
	cases := []configError{
		{certConfig(garbage, ""), `Invalid certificate[\s\S]*certificate_pem holds no PEM CERTIFICATE block`},
		{certConfig(mismatch, ""), `Invalid private key[\s\S]*private_key_wo does not match the certificate`},
		{certConfig(swapped, ""), `Invalid private key[\s\S]*holds a certificate, not a private key`},
		{certConfig(weak, ""), `Invalid private key[\s\S]*1024-bit RSA key \(at least 2048 bits\)`},
		{certConfig(c, `  private_key_wo_version = -1`), `private_key_wo_version value must be at least 0`},
		{certConfig(c, `  name = "-x"`), `Attribute name must start with a letter or digit`},
		{certConfig(c, `  region = "ex-nowhere-1"`), `Cannot create certificate[\s\S]*unknown region\s+"ex-nowhere-1"`},
		{fmt.Sprintf("resource \"example_certificate\" \"web\" {\n  certificate_pem = %q\n}\n", c.CertPEM),
			`Missing required argument[\s\S]*"private_key_wo" is required`},
		{lbConfig("web", "", `"https/443" = { protocol = "https", port = 443, target_port = 80, certificate_ids = [example_certificate.east.id] }`) +
			strings.Replace(certConfig(c, `  region = "ex-east-1"`), `"web"`, `"east"`, 1),
			`Cannot create load balancer[\s\S]*certificate_ids[\s\S]*is\s+in\s+region\s+ex-east-1,\s+not\s+ex-west-1`},
	}
	e.expectErrorsLeaving(t, e.checkAllDestroyed, cases)
}

// TestAccCertificates_dataSource lists certificates by name and region.
func TestAccCertificates_dataSource(t *testing.T) {
	e := newTestEnv(t)
	ctx, cancel := bg()
	defer cancel()
	upload := func(name, region string, c simtest.Cert) *exampleapi.Certificate {
		t.Helper()
		cert, err := e.client.CreateCertificate(ctx, exampleapi.CreateCertificateRequest{Name: name, Region: region,
			CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM, Tags: map[string]string{"team": "web"}})
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	a := upload("shop", "ex-west-1", simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"}))
	b := upload("shop", "ex-west-1", simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"}))
	upload("api", "ex-west-1", simtest.NewCert(t, simtest.CertOptions{}))
	upload("shop", "ex-east-1", simtest.NewCert(t, simtest.CertOptions{}))
	first, second := a, b
	if b.ID < a.ID {
		first, second = b, a
	}
	ds := "data.example_certificates.shop"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps: []resource.TestStep{{
			Config: e.config(`
data "example_certificates" "shop" {
  name = "shop"
}

data "example_certificates" "east" {
  region = "ex-east-1"
}
`),
			ConfigStateChecks: stateChecks{
				stateIs(ds, "ids", listOf(first.ID, second.ID)),
				stateIs(ds, "region", "ex-west-1"),
				stateIs(ds, "certificates.0", object{
					"id": first.ID, "name": "shop", "region": "ex-west-1",
					"certificate_pem": first.CertificatePEM, "fingerprint": first.Fingerprint,
					"common_name": "shop.example.test",
					"dns_names":   listOf("shop.example.test"),
					"not_before":  first.NotBefore.Format("2006-01-02T15:04:05Z"),
					"not_after":   first.NotAfter.Format("2006-01-02T15:04:05Z"),
					"tags":        mapOf{"team": "web"},
					"created_at":  notNull,
				}),
				stateIs("data.example_certificates.east", "ids", listLen(1)),
			},
		}},
	})
}
