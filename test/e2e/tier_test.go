package e2e

import "github.com/example/cloud-provider-example/internal/tftest"

// The end-to-end tests are where make test-short runs terraform; the
// package tests that run it are left out there (tftest.EndToEnd).
func init() { tftest.EndToEnd = true }
