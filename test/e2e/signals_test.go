package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// Signals that the controller has looked again. A test that shows that
// something did not happen (a plan applied without its approvals, a load
// balancer touched by a refused Service) does not sleep a fixed window, a
// window a slow wrong implementation outlasts: it takes one of these
// counts, waits until the controller has moved past it, and then checks.

// serviceSyncs is how many syncs the service controller has finished:
// its work queue's items processed (client-go's workqueue metrics on the
// CCM's /metrics, queue "service"). An item is done after
// EnsureLoadBalancer (or EnsureLoadBalancerDeleted) returned and the
// Service's status was patched, so whatever that sync decided has been
// done by then.
func (e *env) serviceSyncs(t testing.TB) float64 {
	t.Helper()
	return metricWith(e.metrics(t), "workqueue_work_duration_seconds_count", `name="service"`)
}

// routeSyncs is how many times the route controller has begun a
// reconcile (cloud-provider's route_controller_route_sync_total, counted
// as it starts one). Its reconciles run one after the other: two more
// than a count taken at some moment means a whole reconcile ran after it.
func (e *env) routeSyncs(t testing.TB) float64 {
	t.Helper()
	return metricSum(e.metrics(t), "route_controller_route_sync_total")
}

// unchangedAfterALook waits until the service controller has finished
// two more syncs than since (a serviceSyncs taken once what the look must
// see was there: an approval counted, a plan denied), checking all along
// and once more at the end that unchanged holds; it fails the test as
// soon as it does not. Meant for a test with one Service: the syncs of a
// Service never overlap, so the second of them began after since, saw
// everything there was then, and decided. The plan it is shown not to
// apply waits on a 5 s retry, so the look comes within about 10 s.
func (e *env) unchangedAfterALook(t testing.TB, since float64, unchanged func() error) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, "the service controller looks again", func() error {
		t.Helper()
		if err := unchanged(); err != nil {
			t.Fatal(err)
		}
		if n := e.serviceSyncs(t); n < since+2 {
			return fmt.Errorf("%.0f service syncs finished, want %.0f", n, since+2)
		}
		return nil
	})
	if err := unchanged(); err != nil {
		t.Fatal(err)
	}
}

// eventCount is how many times the events of object ns/name with reason
// were recorded (an event repeated is one object whose Count grows).
func (e *env) eventCount(ns, name, reason string) int {
	n := 0
	for _, ev := range e.eventsIn(ns, name, reason) {
		n += max(int(ev.Count), 1)
	}
	return n
}

// metricWith adds the values of the series of a metric in a /metrics
// page whose labels contain labels (e.g. `name="service"`).
func metricWith(page, name, labels string) float64 {
	var sum float64
	for _, line := range strings.Split(page, "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.Index(rest, "}")
		if end < 0 || !strings.Contains(rest[:end], labels) {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64); err == nil {
			sum += v
		}
	}
	return sum
}
