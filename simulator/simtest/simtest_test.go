package simtest_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestStartSetFaultsStop(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(time.Second), simtest.WithFaults(exampleapi.Faults{LatencyMs: 3}))
	if sim.Token == "" || sim.ReadOnlyToken == "" || sim.Token == sim.ReadOnlyToken {
		t.Fatalf("tokens %q %q", sim.Token, sim.ReadOnlyToken)
	}
	if f := sim.Faults(t); f.ProvisionDelayMs != 1000 || f.LatencyMs != 3 {
		t.Errorf("faults %+v", f)
	}
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 0.5})
	if f := sim.Faults(t); f.ErrorRate != 0.5 || f.ProvisionDelayMs != 0 {
		t.Errorf("SetFaults replaces all switches: %+v", f)
	}
	for _, u := range []string{sim.URL, sim.MetadataURL} {
		resp, err := http.Get(u + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s/healthz: %v", u, err)
		}
		resp.Body.Close()
	}
	if _, err := os.Stat(sim.DataDir); err != nil {
		t.Error(err)
	}
	sim.Stop()
	sim.Stop() // idempotent
	if resp, err := http.Get(sim.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("still serving after Stop")
	}
}

func TestDefaultProvisionDelay(t *testing.T) {
	sim := simtest.Start(t)
	if f := sim.Faults(t); f.ProvisionDelayMs != int(simtest.DefaultProvisionDelay.Milliseconds()) {
		t.Errorf("provision delay %d ms", f.ProvisionDelayMs)
	}
	sim = simtest.Start(t, simtest.WithProvisionDelay(0))
	if f := sim.Faults(t); f.ProvisionDelayMs != 0 {
		t.Errorf("WithProvisionDelay(0): %d ms", f.ProvisionDelayMs)
	}
}
