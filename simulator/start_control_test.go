package simulator_test

import (
	"testing"

	"github.com/example/cloud-provider-example/simulator/simtest"
)

// startControl starts a simulator for the test and returns a control API
// client of it: the start of every test that needs nothing else of the
// simulator.
func startControl(t testing.TB) *api { return control(t, simtest.Start(t)) }
