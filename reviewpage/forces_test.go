package reviewpage

import (
	"reflect"
	"testing"
)

// A replace of terraform 1.11's show output, trimmed.
const replaceText = `Terraform will perform the following actions:

  # module.load_balancer.example_certificate.this["web-tls"] will be updated in-place
  ~ resource "example_certificate" "this" {
      ~ name = "a" -> "b"
    }

  # module.load_balancer.example_load_balancer.this must be replaced
-/+ resource "example_load_balancer" "this" {
      ~ id                   = "lb-0123" -> (known after apply)
      ~ internal             = false -> true # forces replacement
      ~ ipv4                 = "203.0.113.10" -> (known after apply)
      ~ "ip_family"          = "ipv4" -> "dualstack" # forces replacement
        name                 = "k8s-x"
    }

Plan: 1 to add, 1 to change, 1 to destroy.
`

func TestForcedBy(t *testing.T) {
	got := forcedBy(replaceText)
	want := map[string][]string{"module.load_balancer.example_load_balancer.this": {"internal", "ip_family"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("forcedBy = %v; want %v", got, want)
	}
	if got := forcedBy("No changes."); len(got) != 0 {
		t.Errorf("forcedBy of no changes = %v", got)
	}
}
