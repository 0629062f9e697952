package e2e

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/netns"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// Go's -parallel admits paused tests in no set order, and one of minutes
// let in last ends the package alone. So -parallel is set high here and
// the package's own slots admit its tests' environments (newEnv) five at
// a time, the long ones first. Five: a test spends most of its time
// waiting on its control plane, its controllers and terraform; two at a
// time (Go's default, GOMAXPROCS) used about 0.8 of two cores.
const slotCount = 5

// longTests take minutes even alone (measured 2026-12-02: 125 to 185 s
// with two at a time; the conformance run's four profiles about 4
// minutes alone, 2026-12-03); a test missing here is only admitted later.
var longTests = []string{"TestGatewayConformance", "TestTenancy", "TestManualApproval", "TestLoadBalancerService", "TestGatewayTenancy", "TestHandOver",
	"TestShardsSpreadServices", "TestChaos", "TestShardHandOverKeepsThePlan", "TestGatewayProgrammed"}

// settle is how long slots wait after a test arrives before admitting
// any: the paused tests arrive together when the sequential ones end.
const settle = 200 * time.Millisecond

// TestMain runs the package in a user and network namespace of its own
// (internal/netns), where the cloud's addresses are local: load
// balancers, nodes and pods carry traffic there (docs/adr/0023).
func TestMain(m *testing.M) {
	netns.Main(func() int { return run(m) }, simtest.Prefixes...)
}

// run runs the package's tests, -parallel high unless given.
func run(m *testing.M) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", "1000"); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: -parallel:", err)
			return 2
		}
	}
	return m.Run()
}

var slots = &gate{free: slotCount}

// trafficEnvs lets one env with traffic run at a time: every env's cloud
// hands out the same addresses, and those envs bind them. It is taken
// before a slot, so that a test waiting for it holds none, and the
// longest (the conformance run) is let in first.
var trafficEnvs = &gate{free: 1}

// gate admits waiters to a fixed number of slots, long ones first, once
// no waiter has arrived for settle.
type gate struct {
	mu      sync.Mutex
	free    int
	waiting []waiter
	timer   *time.Timer
}

type waiter struct {
	long  bool
	ready chan struct{}
}

// admit waits for a slot for t's environment, and first for the traffic
// env's turn when it has traffic; t's cleanup frees them, after the
// environment's own cleanups (registered later, run earlier).
func admit(t testing.TB, traffic bool) {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	long := slices.Contains(longTests, name)
	start := time.Now()
	if traffic {
		<-trafficEnvs.wait(long)
		t.Cleanup(trafficEnvs.release)
	}
	<-slots.wait(long)
	t.Cleanup(slots.release)
	// hack/testsummary reads this line: the slowest tests are named by
	// their time less this wait.
	if waited := time.Since(start); waited >= time.Second {
		t.Logf("queued %.1fs for a slot (of %d)", waited.Seconds(), slotCount)
	}
}

// wait queues a waiter; its channel closes when it has a slot.
func (g *gate) wait(long bool) <-chan struct{} {
	w := waiter{long: long, ready: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting = append(g.waiting, w)
	g.settleLocked()
	return w.ready
}

func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.free++
	g.settleLocked()
}

// settleLocked (re)starts the wait after which admitLocked runs.
func (g *gate) settleLocked() {
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(settle, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.admitLocked()
	})
}

func (g *gate) admitLocked() {
	for g.free > 0 && len(g.waiting) > 0 {
		i := slices.IndexFunc(g.waiting, func(w waiter) bool { return w.long })
		if i < 0 {
			i = 0
		}
		close(g.waiting[i].ready)
		g.waiting = slices.Delete(g.waiting, i, i+1)
		g.free--
	}
}
