package tfprovider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// upload puts c into the cloud as an apply would, under c's derived name,
// with tags: what an apply killed before its state recorded it leaves.
func (e *testEnv) upload(t *testing.T, c simtest.Cert, tags map[string]string) *exampleapi.Certificate {
	t.Helper()
	ctx, cancel := bg()
	defer cancel()
	cert, err := e.client.CreateCertificate(ctx, exampleapi.CreateCertificateRequest{
		Name: derivedCertificateName(c.Fingerprint), Region: "ex-west-1", CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM, Tags: tags,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// ownerTags are the tags of ownerTagsArg: an upload with them is the
// configuration's own.
func ownerTags() map[string]string { return map[string]string{"k8s.example.com/service-uid": "u-1"} }

// certConfig arguments: the certificate's ownerTags, and with them the
// adoption of a matching upload.
const (
	ownerTagsArg = `  tags         = { "k8s.example.com/service-uid" = "u-1" }`
	adoptArgs    = ownerTagsArg + "\n" + `  on_duplicate = "adopt_if_tags_match"`
)

// newEnvWithUpload is a test env holding an upload of a new certificate
// with ownerTags, as an apply killed before its state recorded it leaves.
func newEnvWithUpload(t *testing.T) (*testEnv, simtest.Cert, *exampleapi.Certificate) {
	t.Helper()
	e := newTestEnv(t)
	c := simtest.NewCert(t, simtest.CertOptions{})
	return e, c, e.upload(t, c, ownerTags())
}

// deleteLeft removes certificates a test leaves on purpose.
func (e *testEnv) deleteLeft(t *testing.T, ids ...string) {
	t.Cleanup(func() {
		ctx, cancel := bg()
		defer cancel()
		for _, id := range ids {
			_ = e.client.DeleteCertificate(ctx, id)
		}
	})
}

// servingLB creates a load balancer whose https listener serves the
// certificate certID, deleted when the test ends (before the certificates
// of an earlier deleteLeft).
func (e *testEnv) servingLB(t *testing.T, name string, tags map[string]string, certID string) *exampleapi.LoadBalancer {
	t.Helper()
	lb := e.createLB(t, exampleapi.LoadBalancerSpec{Name: name, LoadBalancerSettings: exampleapi.LoadBalancerSettings{
		Type: "lb-small", Tags: tags, Listeners: []exampleapi.Listener{
			{Protocol: "https", Port: 443, TargetPort: 8443, CertificateIDs: []string{certID}},
		},
	}})
	t.Cleanup(func() {
		ctx, cancel := bg()
		defer cancel()
		_ = e.client.DeleteLoadBalancer(ctx, lb.ID)
	})
	return lb
}

func wantID(addr string, id *string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var got string
		if err := stateID(addr, &got)(s); err != nil {
			return err
		}
		if got != *id {
			return fmt.Errorf("%s is %s, want %s", addr, got, *id)
		}
		return nil
	}
}

// TestAccCertificate_adoptUnrecorded: with on_duplicate =
// "adopt_if_tags_match", a certificate an interrupted apply uploaded (same
// name, text and tags, used by nothing) is taken over instead of uploading
// another copy of the key. One with other tags, or one a load balancer
// uses, is not; without the setting nothing is adopted.
func TestAccCertificate_adoptUnrecorded(t *testing.T) {
	e, c, orphan := newEnvWithUpload(t)
	other := e.upload(t, c, map[string]string{"k8s.example.com/service-uid": "u-2"})
	e.deleteLeft(t, other.ID)
	accTest(t, e.checkCertsLeft(other.ID), []resource.TestStep{{
		Config: e.config(certConfig(c, adoptArgs)),
		Check: resource.ComposeTestCheckFunc(
			wantID(certAddr, &orphan.ID),
			resource.TestCheckResourceAttr(certAddr, "on_duplicate", "adopt_if_tags_match"),
			e.checkCertsLeft(orphan.ID, other.ID),
		),
	}})
}

func TestAccCertificate_noAdoption(t *testing.T) {
	e, c, used := newEnvWithUpload(t)
	// In use by a load balancer: recorded somewhere, not an orphan.
	e.servingLB(t, "other", nil, used.ID)
	d := simtest.NewCert(t, simtest.CertOptions{})
	unused := e.upload(t, d, ownerTags())
	e.deleteLeft(t, unused.ID, used.ID)
	var id string
	for _, step := range []struct {
		cert simtest.Cert
		args string
	}{
		{c, adoptArgs},
		{d, ownerTagsArg}, // on_duplicate = "upload"
	} {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Factories,
			Steps: []resource.TestStep{{
				Config: e.config(certConfig(step.cert, step.args)),
				Check: resource.ComposeTestCheckFunc(stateID(certAddr, &id), func(*terraform.State) error {
					if id == used.ID || id == unused.ID {
						return fmt.Errorf("adopted %s", id)
					}
					return nil
				}),
			}},
		})
	}
}

// TestAccCertificate_adoptServedByOwnLoadBalancer: an apply killed after
// it moved its load balancer to the certificate it uploaded leaves one in
// use by a load balancer with the same tags. It is still the
// configuration's unrecorded upload: taken over, not uploaded again.
func TestAccCertificate_adoptServedByOwnLoadBalancer(t *testing.T) {
	e, c, served := newEnvWithUpload(t)
	e.deleteLeft(t, served.ID)
	lb := e.servingLB(t, "own", ownerTags(), served.ID)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkCertsLeft(),
		Steps: []resource.TestStep{{
			Config: e.config(certConfig(c, adoptArgs)),
			Check: resource.ComposeTestCheckFunc(wantID(certAddr, &served.ID), e.checkCertsLeft(served.ID),
				// So that the destroy may delete it.
				func(*terraform.State) error {
					ctx, cancel := bg()
					defer cancel()
					return e.client.DeleteLoadBalancer(ctx, lb.ID)
				}),
		}},
	})
}

// TestAccCertificate_deleteLeftovers: with delete_leftovers, a create
// deletes the certificates of the same tags that no load balancer uses and
// this command did not upload (a killed apply's upload of a text the
// configuration no longer has), and keeps another owner's and one in use.
// Without it, they stay.
func TestAccCertificate_deleteLeftovers(t *testing.T) {
	tags := ownerTags()
	for _, del := range []bool{true, false} {
		t.Run(fmt.Sprint("delete_leftovers=", del), func(t *testing.T) {
			e := newTestEnv(t)
			leftover := e.upload(t, simtest.NewCert(t, simtest.CertOptions{}), tags)
			other := e.upload(t, simtest.NewCert(t, simtest.CertOptions{}), map[string]string{"k8s.example.com/service-uid": "u-2"})
			served := e.upload(t, simtest.NewCert(t, simtest.CertOptions{}), tags)
			e.servingLB(t, "served", nil, served.ID)
			e.deleteLeft(t, leftover.ID, other.ID, served.ID)
			want := []string{other.ID, served.ID}
			if !del {
				want = append(want, leftover.ID)
			}
			var id string
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Factories,
				CheckDestroy:             e.checkCertsLeft(want...),
				Steps: []resource.TestStep{{
					Config: e.config(certConfig(simtest.NewCert(t, simtest.CertOptions{}), adoptArgs+fmt.Sprintf("\n  delete_leftovers = %t", del))),
					Check: resource.ComposeTestCheckFunc(
						stateID(certAddr, &id),
						resource.TestCheckResourceAttr(certAddr, "delete_leftovers", fmt.Sprint(del)),
						func(s *terraform.State) error { return e.checkCertsLeft(append(want, id)...)(s) },
					),
				}},
			})
		})
	}
}
