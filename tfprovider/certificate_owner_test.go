package tfprovider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A load balancer serves only its own tenant's certificates: one whose
// tenant tags name another namespace is refused at plan, whoever wrote the
// configuration (issue 19's certificate hijack); the owner's own load
// balancer uses it; one without tenant tags cannot name a tagged one.
func TestAccLoadBalancer_foreignCertificateRefused(t *testing.T) {
	e := newTestEnv(t)
	c := simtest.NewCert(t, simtest.CertOptions{})
	ctx, cancel := bg()
	defer cancel()
	owner := map[string]string{exampleapi.TagClusterID: "prod", exampleapi.TagNamespace: "team-a"}
	cert, err := e.client.CreateCertificate(ctx, exampleapi.CreateCertificateRequest{
		Name: "team-a-web", Region: "ex-west-1", CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM, Tags: owner,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := bg()
		defer cancel()
		_ = e.client.DeleteCertificate(ctx, cert.ID)
	})
	lb := func(tags string) string {
		return httpsLBConfig(fmt.Sprintf("[%q]", cert.ID)) + tags
	}
	withTags := func(ns string) string {
		return fmt.Sprintf(`
locals {
  tags = { %q = "prod", %q = %q }
}
`, exampleapi.TagClusterID, exampleapi.TagNamespace, ns)
	}
	refused := regexp.MustCompile(`Certificate of another owner[\s\S]*` + regexp.QuoteMeta(cert.ID) + `[\s\S]*service-namespace`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed, // the certificate is the test's, deleted by it
		Steps: []resource.TestStep{
			{Config: e.config(taggedLB(lb(withTags("team-b")))), ExpectError: refused},
			{Config: e.config(lb("")), ExpectError: refused},
			{Config: e.config(taggedLB(lb(withTags("team-a"))))},
		},
	})
}

// taggedLB gives the load balancer of config the tags of local.tags.
func taggedLB(config string) string {
	return regexp.MustCompile(`(resource "example_load_balancer" "web" \{\n)`).ReplaceAllString(config, "${1}  tags = local.tags\n")
}
