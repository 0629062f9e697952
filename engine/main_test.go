package engine_test

import (
	"os"
	"testing"

	"github.com/example/cloud-provider-example/internal/testcluster"
)

// The tests of the kubernetes backend share one control plane
// (testcluster.Shared), each with its states in a namespace of its own.
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
