package exampleapi_test

import (
	"flag"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/syncbuf"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// captureLogs sends klog's output, at its highest verbosity, to a buffer
// until the test ends.
func captureLogs(t *testing.T) *syncbuf.Buffer {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", "10")
	_ = fs.Set("logtostderr", "false")
	logs := &syncbuf.Buffer{}
	klog.SetOutput(logs)
	t.Cleanup(func() {
		_ = fs.Set("v", "0")
		_ = fs.Set("logtostderr", "true")
		klog.SetOutput(nil)
	})
	return logs
}

// The token must appear in no error and no log line, even at the highest
// verbosity and through retries and failures.
func TestTokenNeverInErrorsOrLogs(t *testing.T) {
	logs := captureLogs(t)

	sim := simtest.Start(t)
	c := newClient(t, sim, func(o *exampleapi.Options) { o.RetryMax = 2 })
	bad := newClient(t, sim, func(o *exampleapi.Options) { o.Token = "wrong-" + sim.Token; o.RetryMax = 2 })
	var errs []error
	_, err := bad.ListRegions(testkit.Context(t))
	errs = append(errs, err)
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	_, err = c.GetInstance(testkit.Context(t), "i-x")
	errs = append(errs, err)
	sim.SetFaults(t, exampleapi.Faults{})
	_, err = c.CreateLoadBalancer(testkit.Context(t), lbSpec("bad name with spaces and a port", "i-none"))
	errs = append(errs, err)
	sim.Stop()
	_, err = c.ListRegions(testkit.Context(t)) // connection refused
	errs = append(errs, err)
	klog.Flush()

	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d: want an error", i)
		}
		if strings.Contains(err.Error(), sim.Token) {
			t.Errorf("call %d: token in error %q", i, err)
		}
	}
	if logs.String() == "" {
		t.Fatal("captured no log output; the check would be vacuous")
	}
	if strings.Contains(logs.String(), sim.Token) {
		t.Errorf("token found in logs")
	}
}
