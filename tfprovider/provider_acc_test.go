package tfprovider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccProvider_unknownConfig: a provider configured from values known
// only at apply time plans without calling the API and applies once they
// are known.
func TestAccProvider_unknownConfig(t *testing.T) {
	e := newTestEnv(t)
	cfg := fmt.Sprintf(`
resource "terraform_data" "endpoint" {
  input = %q
}

provider "example" {
  endpoint = terraform_data.endpoint.output
  token    = %q
  region   = "ex-west-1"
}
`, e.sim.URL, e.sim.Token) + lbConfig("late", "", listenerHTTP)

	accTest(t, e.checkLBsDestroyed, []resource.TestStep{
		{
			Config: cfg,
			ConfigPlanChecks: beforeApply(
				planCreate(lbAddr),
				planUnknown(lbAddr, "region"),
			),
			ConfigStateChecks: stateChecks{
				stateIs(lbAddr, "region", "ex-west-1"),
				stateIs(lbAddr, "status", "active"),
			},
		},
	})
}
