package e2e

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/pprof/profile"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
)

// soakMode is the soak's length: EXAMPLE_SCALE=full (make soak) at least
// 5,000 terraform processes of rolling Services; long (make soak-long)
// at least 20,000, most of them drift checks of many objects with other
// changes mixed in (a day of a controller's life, compressed); else
// (make test) a short run with looser bounds that still fails on a leak
// of the kind that was fixed (2.5 KiB per process).
func soakMode() (ops int64, mode string) {
	switch testsize.Scale() {
	case testsize.Full:
		return 5000, "full"
	case testsize.Long:
		return 20000, "long"
	}
	return 300, "short"
}

// Bounds on growth per terraform process, after warm-up.
const (
	// soakHeapSlope: MiB of live heap (the heap profile's, at a GC), in make
	// soak and make soak-long. A holder of 300 bytes per process would
	// reach 1 GiB in about 3.5 million processes: over a year of drift
	// checks of 1,000 Services.
	soakHeapSlope = 0.0003
	soakRSSSlope  = 0.02 // MiB resident (the allocator keeps what it freed)
	// The short soak's ~230 processes after warm-up are too few for the
	// tight bounds: caches still fill there and one GC's timing moves
	// the slope (measured at 300 processes: -0.0004 to 0.00065 MiB over
	// four runs, RSS 0.025 to 0.030; at 500: -0.00014 to 0.00067 over
	// five). Its bound catches a holder of 2.5 KiB per process (the leak
	// issue 39 fixed: 0.0024 MiB, 0.0020 at the lowest noise seen) and is
	// over twice the highest noise; make soak holds the tight ones.
	soakShortHeapSlope = 0.0015
	soakShortRSSSlope  = 0.06
	// soakGoSlope and soakFDSlope hold goroutines and open files net of
	// the HTTP connections kept open (a client's pooled one: two
	// goroutines and a socket; one the controller serves: a goroutine
	// and a socket): a pool grows with the most requests ever in flight
	// at once, up to the transport's limit, not with the work done. One
	// or two connections more, opened late in the short soak and idle in
	// a pool (192 to 196 goroutines and 32 to 34 files at a83956c,
	// loaded), were a slope of 0.023 over its ~230 processes: over any
	// bound that still catches a goroutine left per reconcile (3
	// processes: 0.33). The connections are held to soakOpenConns instead.
	soakGoSlope = 0.01 // goroutines
	soakFDSlope = 0.01 // open files
	// soakOpenConns bounds the HTTP/1.1 connections the controller keeps
	// open (8 pooled at the end of every soak measured; a transport idles
	// at most two per host). A response body left open holds its
	// connection out of the pool for good: one per reconcile would pass
	// this within the short soak's first rounds.
	soakOpenConns = 24
	// soakWarmup is the share of the run left out of the slopes: caches,
	// pools and the first workspaces fill up there.
	soakWarmup = 0.25
	// soakLongServices are the long soak's Services that live throughout
	// (drift-checked), and soakLongDrift their drift interval.
	soakLongServices = 100
	soakLongDrift    = "10s"
	// soakSteadyPort is the first port of the steady Services (those of
	// the rolling ones are below).
	soakSteadyPort = 10000
)

// sample is the controller process at one point of the soak.
type sample struct {
	ops                  int64 // terraform processes so far (from the OS)
	rss, heap, heapInUse float64
	// correlators is the live heap client-go's event correlators hold.
	correlators     float64
	goroutines, fds float64
	// clientConns and serverConns are the HTTP/1.1 connections the
	// controller holds open as a client (a persistConn's read loop each)
	// and serves (a conn's serve loop each), in the look goroutines was
	// read off.
	clientConns, serverConns float64
	entries                  map[string]float64 // example_ccm_memory_entries
}

// TestSoak runs one controller through creates, updates and deletes of
// rolling sets of Services and shared load balancers (groups), and fails
// if its memory, goroutines or open files grow with the work done; the
// long profile drift-checks many Services the while. Figures are printed,
// with the heap profile's diff between warm-up and end by allocation
// site; make soak and make soak-long run the full lengths
// (docs/terraform-workflow.md#memory).
func TestSoak(t *testing.T) {
	testsize.SkipShort(t, "a soak: 300 terraform processes")
	// Alone, first: its heap bound is twice the noise measured alone; beside
	// four other environments the short soak's heap slope read 0.00199
	// once in make test (2026-12-02), over its 0.0015.
	target, mode := soakMode()
	o := benchOptions()
	o.provisionDelay = 10 * time.Millisecond
	if mode == "long" {
		o.driftInterval = soakLongDrift
	}
	// A fine heap profile (one sample per 8 KiB allocated, not 512 KiB):
	// what the event correlators hold is read off it at every sample.
	o.extraEnv = []string{"GODEBUG=memprofilerate=8192"}
	e := newEnv(t, o)
	e.nodeA()
	svcs := e.kube.CoreV1().Services("default")

	var steady []soakService
	if mode == "long" {
		for i := range soakLongServices {
			s := lbService(fmt.Sprintf("steady-%03d", i), soakSteadyPort+int32(i))
			_, err := svcs.Create(testkit.Context(t), s, metav1.CreateOptions{})
			testkit.Must(t, err)
			steady = append(steady, soakService{name: s.Name, port: s.Spec.Ports[0].Port})
		}
		e.waitSoakRound(steady, nil)
	}

	const window = 3 // rounds a Service lives
	var alive []soakService
	var samples []sample
	profiles := soakProfiles(t)
	var warmProfile, halfProfile string
	start := time.Now()
	for round := 0; e.procs.Total(t) < target; round++ {
		var want []soakService
		// Two Services of their own and one group member join (the
		// long profile: one of each).
		joins := []string{"", "", fmt.Sprintf("soak-g%d", round%2)}
		if mode == "long" {
			joins = joins[1:]
		}
		for i, group := range joins {
			s := lbService(fmt.Sprintf("soak-%d-%d", round, i), 2000+int32(round%1000))
			if group != "" {
				s.Annotations = map[string]string{string(annotations.LBGroup): group}
			}
			_, err := svcs.Create(testkit.Context(t), s, metav1.CreateOptions{})
			testkit.Must(t, err)
			want = append(want, soakService{name: s.Name, round: round, port: s.Spec.Ports[0].Port, member: group != ""})
		}
		// One Service of the previous round changes its port (the long
		// profile: a steady one too).
		for i := range alive {
			if alive[i].round == round-1 && !alive[i].member {
				alive[i].port += 1000
				testkit.Must(t, retryUpdate(t, e, alive[i].name, alive[i].port))
				break
			}
		}
		if len(steady) > 0 {
			s := &steady[round%len(steady)]
			s.port = soakSteadyPort + (s.port-soakSteadyPort+soakLongServices)%4000
			testkit.Must(t, retryUpdate(t, e, s.name, s.port))
		}
		// The Services of window rounds ago leave (one of them a group member).
		var gone []string
		alive = slices.DeleteFunc(alive, func(l soakService) bool {
			if l.round > round-window {
				return false
			}
			testkit.Must(t, svcs.Delete(testkit.Context(t), l.name, metav1.DeleteOptions{}))
			gone = append(gone, l.name)
			return true
		})
		alive = append(alive, want...)
		e.waitSoakRound(slices.Concat(alive, steady), gone)
		samples = append(samples, e.sampleCCM(t))
		ops := float64(samples[len(samples)-1].ops)
		if warmProfile == "" && ops >= soakWarmup*float64(target) {
			warmProfile = e.heapProfile(t, profiles, "warm")
		}
		if halfProfile == "" && ops >= float64(target)/2 {
			halfProfile = e.heapProfile(t, profiles, "half")
		}
	}
	elapsed := time.Since(start)
	endProfile := e.heapProfile(t, profiles, "end")

	// The controller counted what the OS saw. The OS sees a process start,
	// the metric counts it when it ends: with drift checks running, they
	// agree at a moment when none is.
	testkit.EventuallyEvery(t, 30*time.Second, 20*time.Millisecond, "the controller counted what the OS saw", func() error {
		m, err := e.scrape(t)
		if err != nil {
			return err
		}
		if got, want := metricSum(m, "example_ccm_terraform_runs_total"), float64(e.procs.Total(t)); got != want {
			return fmt.Errorf("example_ccm_terraform_runs_total = %.0f, the OS saw %.0f terraform processes (%v)", got, want, e.procs.Counts(t))
		}
		return nil
	})

	warm := samples[int(float64(len(samples))*soakWarmup)]
	tail := slices.DeleteFunc(slices.Clone(samples), func(s sample) bool { return s.ops < warm.ops })
	last := samples[len(samples)-1]
	heapSlope, rssSlope := soakHeapSlope, soakRSSSlope
	if mode == "short" {
		heapSlope, rssSlope = soakShortHeapSlope, soakShortRSSSlope
	}
	conns := func(s sample) float64 { return s.clientConns + s.serverConns }
	rows := []struct {
		name  string
		f     func(sample) float64
		bound float64
	}{
		{"live heap but the correlators", func(s sample) float64 { return s.heap - s.correlators }, heapSlope},
		{"event correlators (MiB)", func(s sample) float64 { return s.correlators }, 0},
		{"live heap (MiB, at a GC)", func(s sample) float64 { return s.heap }, 0},
		{"heap in use (MiB)", func(s sample) float64 { return s.heapInUse }, 0},
		{"RSS (MiB)", func(s sample) float64 { return s.rss }, rssSlope},
		{"goroutines", func(s sample) float64 { return s.goroutines }, 0},
		{"open files", func(s sample) float64 { return s.fds }, 0},
		{"HTTP connections open", conns, 0},
		{"goroutines but connections'", func(s sample) float64 { return s.goroutines - 2*s.clientConns - s.serverConns }, soakGoSlope},
		{"open files but connections'", func(s sample) float64 { return s.fds - s.clientConns - s.serverConns }, soakFDSlope},
	}
	t.Logf("soak (%s): %d terraform processes (%v) in %d rounds, %s; %d samples, slopes over the last %d (from process %d)",
		mode, last.ops, e.procs.Counts(t), len(samples), elapsed.Round(time.Second), len(samples), len(tail), warm.ops)
	t.Logf("%-28s %10s %10s %14s %10s", "", "at warm-up", "at end", "slope per op", "bound")
	for _, r := range rows {
		s := leastSquaresSlope(tail, r.f)
		bound := "-"
		if r.bound > 0 {
			bound = fmt.Sprintf("%.4f", r.bound)
		}
		t.Logf("%-28s %10.1f %10.1f %14.5f %10s", r.name, r.f(warm), r.f(last), s, bound)
		if r.bound > 0 && s > r.bound {
			t.Errorf("%s grows %.5f per terraform process after warm-up (bound %.4f): from %.1f to %.1f over %d processes",
				r.name, s, r.bound, r.f(warm), r.f(last), last.ops-warm.ops)
		}
	}
	if most := slices.MaxFunc(samples, func(a, b sample) int { return int(conns(a) - conns(b)) }); conns(most) > soakOpenConns {
		t.Errorf("the controller kept %.0f HTTP connections open after process %d (%.0f its clients', %.0f served; bound %d): a response body left unclosed holds its connection",
			conns(most), most.ops, most.clientConns, most.serverConns, soakOpenConns)
	}
	t.Logf("peak RSS (VmHWM) of the soaked controller: %.1f MiB", e.ccmRSSMiB())
	t.Logf("in-memory structures (example_ccm_memory_entries) at warm-up and at end:\n%s", entriesTable(warm, last))
	t.Logf("heap in use, end minus warm-up, by allocation site (go tool pprof -top -diff_base %s %s):\n%s",
		warmProfile, endProfile, heapDiff(t, warmProfile, endProfile))
	if mode == "long" {
		e.soakPlateau(t, samples, halfProfile, endProfile)
	}
	if t.Failed() {
		// What grew: the controller's open files by kind and its goroutines.
		t.Logf("open files by target:\n%s", e.openFiles(t))
		t.Logf("goroutines:\n%s", e.debugGet(t, "/debug/pprof/goroutine?debug=1"))
	}
	if mode != "short" {
		fmt.Printf("soak (%s): %d terraform processes in %s\n", mode, last.ops, elapsed.Round(time.Second))
	}
}

// soakCorrelatorCap bounds, in MiB, what client-go's event correlators
// hold: LRU caches of a fixed number of keys (three caches of 4,096 in the
// service controller's, three of 512 in the controller's own) at about a
// KiB a key. They fill until then with the distinct objects a run has seen
// (a 20,000-process soak-long sees fewer than 1,000 Services, so they are
// still filling at its end), so they are held to their capacity, not to a
// plateau.
const soakCorrelatorCap = 14

// soakPlateau: over a long run, memory levels off. The live heap but the
// correlators has a slope over the last third under the bound and ends
// within 10% of its value at half-way (the medians of the samples from 45
// to 55% and from 90% of the run); the correlators stay under their
// capacity (soakCorrelatorCap); no in-memory structure ends larger than at
// half-way (but for a few entries of objects in flight). The whole live
// heap is reported beside them.
func (e *env) soakPlateau(t *testing.T, samples []sample, halfProfile, endProfile string) {
	last := samples[len(samples)-1]
	third := slices.DeleteFunc(slices.Clone(samples), func(s sample) bool { return s.ops < last.ops*2/3 })
	half := samples[slices.IndexFunc(samples, func(s sample) bool { return s.ops >= last.ops/2 })]
	for _, r := range []struct {
		name    string
		f       func(sample) float64
		plateau bool
	}{
		{"live heap but the correlators", func(s sample) float64 { return s.heap - s.correlators }, true},
		{"event correlators", func(s sample) float64 { return s.correlators }, false},
		{"live heap", func(s sample) float64 { return s.heap }, false},
	} {
		mid := medianOver(samples, r.f, last.ops*45/100, last.ops*55/100)
		end := medianOver(samples, r.f, last.ops*90/100, last.ops)
		t.Logf("%s at half-way: %.1f MiB; at the end: %.1f MiB (medians of the samples from 45 to 55%% and from 90%% of the run)", r.name, mid, end)
		if !r.plateau {
			continue
		}
		if s := leastSquaresSlope(third, r.f); s > soakHeapSlope {
			t.Errorf("%s grows %.5f MiB per terraform process over the last third (bound %.4f)", r.name, s, soakHeapSlope)
		}
		if end > 1.1*mid {
			t.Errorf("%s at the end (%.1f MiB) is more than 10%% over the heap at half-way (%.1f MiB)", r.name, end, mid)
		}
	}
	if c := last.correlators; c > soakCorrelatorCap {
		t.Errorf("the event correlators hold %.1f MiB, over their capacity of about %d MiB: they are not bounded as client-go's caches are", c, soakCorrelatorCap)
	}
	for k, end := range last.entries {
		if h := half.entries[k]; end > h*1.1+10 {
			t.Errorf("%s grew from %.0f entries at half-way to %.0f at the end", k, h, end)
		}
	}
	t.Logf("heap in use, end minus half-way, by allocation site:\n%s", heapDiff(t, halfProfile, endProfile))
}

// medianOver is the median of f over the samples taken from process from
// to process to.
func medianOver(samples []sample, f func(sample) float64, from, to int64) float64 {
	var v []float64
	for _, s := range samples {
		if s.ops >= from && s.ops <= to {
			v = append(v, f(s))
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// entriesTable lists the structures of example_ccm_memory_entries.
func entriesTable(a, b sample) string {
	var out strings.Builder
	for _, k := range slices.Sorted(maps.Keys(b.entries)) {
		fmt.Fprintf(&out, "%-32s %8.0f %8.0f\n", k, a.entries[k], b.entries[k])
	}
	return out.String()
}

// retryUpdate sets the port of Service default/name (the controller
// writes the object too: conflicts are retried).
func retryUpdate(t *testing.T, e *env, name string, port int32) error {
	for {
		s, err := e.kube.CoreV1().Services("default").Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Ports[0].Port = port
		_, err = e.kube.CoreV1().Services("default").Update(testkit.Context(t), s, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// soakService is a Service the soak keeps alive for a few rounds (or,
// steady, throughout).
type soakService struct {
	name  string
	round int
	port  int32
	// member: of a load balancer group.
	member bool
}

// waitSoakRound waits until every live Service has its address and its
// port is served by a load balancer, and every deleted one is gone (its
// finalizer is removed once its load balancer, or its group listener, is).
func (e *env) waitSoakRound(alive []soakService, gone []string) {
	e.t.Helper()
	testkit.EventuallyEvery(e.t, 5*time.Minute, 100*time.Millisecond, "the soak round converged", func() error {
		list, err := e.kube.CoreV1().Services("default").List(testkit.Context(e.t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		byName := map[string]*v1.Service{}
		for i := range list.Items {
			byName[list.Items[i].Name] = &list.Items[i]
		}
		for _, name := range gone {
			if _, ok := byName[name]; ok {
				return fmt.Errorf("%s is not deleted yet", name)
			}
		}
		lbs, err := e.api.ListLoadBalancers(testkit.Context(e.t), exampleapi.LoadBalancerFilter{})
		if err != nil {
			return err
		}
		served := map[int32]bool{}
		for _, lb := range lbs {
			for _, l := range lb.Listeners {
				served[int32(l.Port)] = true
			}
		}
		for _, l := range alive {
			s, ok := byName[l.name]
			if !ok || len(s.Status.LoadBalancer.Ingress) == 0 {
				return fmt.Errorf("%s has no address yet", l.name)
			}
			if !served[l.port] {
				return fmt.Errorf("no load balancer serves port %d of %s yet", l.port, l.name)
			}
		}
		return nil
	})
}

// sampleCCM reads the controller's RSS and open files from /proc, and its
// heap in use (after a GC the profile handler runs) and goroutines from its
// debug endpoints.
func (e *env) sampleCCM(t testing.TB) sample {
	t.Helper()
	pid := e.ccm.Process.Pid
	var s sample
	s.ops = e.procs.Total(t)
	rss, err := e.ccmStatusMiB("VmRSS:")
	testkit.Must(t, err)
	s.rss = rss
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	testkit.Must(t, err)
	s.fds = float64(len(fds))
	// The live heap is the profile's, at the GC it forces: MemStats'
	// HeapAlloc, read after the profile is written, also counts what a
	// busy controller allocated since (up to 5 MiB more in the long soak).
	// The smaller of two looks, 200 ms apart: what a holder keeps is in
	// both, what a request in flight holds (an apply's output being read,
	// an informer's relist) only in one. With one look, a short soak read
	// a live heap 1.2 MiB higher at its end than at warm-up once, and
	// 2.2 MiB lower in the next run.
	for i := range 2 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		raw, err := e.adminGet(t, "/debug/pprof/heap?gc=1")
		testkit.Must(t, err)
		heap, correlators := heapProfileMiB(t, raw)
		if i == 0 || heap-correlators < s.heap-s.correlators {
			s.heap, s.correlators = heap, correlators
		}
	}
	heap := e.debugGet(t, "/debug/pprof/heap?debug=1")
	s.heapInUse = memStat(t, heap, "# HeapInuse = ") / (1 << 20)
	page, err := e.scrape(t)
	testkit.Must(t, err)
	s.entries = memoryEntries(page)
	// The fewest goroutines of three looks, 200 ms apart: a leaked one is
	// in every look, one serving a request in flight (an event's post, a
	// plugin stream) only in some. With one look each, a short soak read
	// 194 at warm-up and 197 at its end, over the bound.
	for i := range 3 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		gr := e.debugGet(t, "/debug/pprof/goroutine?debug=1")
		first, _, _ := strings.Cut(gr, "\n")
		n, err := strconv.Atoi(strings.TrimPrefix(first, "goroutine profile: total "))
		if err != nil {
			t.Fatalf("goroutine profile: %q", first)
		}
		if i == 0 || float64(n) < s.goroutines {
			s.goroutines = float64(n)
			s.clientConns = float64(goroutinesIn(gr, "net/http.(*persistConn).readLoop"))
			s.serverConns = float64(goroutinesIn(gr, "net/http.(*conn).serve"))
		}
	}
	return s
}

// openFiles counts the controller's open files by what they are (socket,
// pipe, or the file's directory).
func (e *env) openFiles(t *testing.T) string {
	dir := fmt.Sprintf("/proc/%d/fd", e.ccm.Process.Pid)
	fds, err := os.ReadDir(dir)
	testkit.Must(t, err)
	kinds := map[string]int{}
	for _, fd := range fds {
		target, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue
		}
		if i := strings.IndexAny(target, ":["); i > 0 && !strings.HasPrefix(target, "/") {
			target = target[:i]
		} else {
			target = filepath.Dir(target)
		}
		kinds[target]++
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(&b, "%5d %s\n", kinds[k], k)
	}
	return b.String()
}

// debugGet reads one of the controller's debug endpoints.
func (e *env) debugGet(t testing.TB, path string) string {
	t.Helper()
	body, err := e.adminGet(t, path)
	testkit.Must(t, err)
	return body
}

// memStat finds a runtime.MemStats line of a debug=1 heap profile.
func memStat(t testing.TB, profile, prefix string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(profile))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			testkit.Must(t, err)
			return f
		}
	}
	t.Fatalf("no %q in the heap profile", prefix)
	return 0
}

// ccmStatusMiB reads a kB field of the CCM's /proc/PID/status (VmRSS:,
// VmHWM:).
func (e *env) ccmStatusMiB(field string) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", e.ccm.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, e.ccm.Process.Pid)
}

// leastSquaresSlope is the slope of f over the samples' process counts.
func leastSquaresSlope(samples []sample, f func(sample) float64) float64 {
	n := float64(len(samples))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for _, s := range samples {
		x, y := float64(s.ops), f(s)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// soakProfiles is where the soak keeps its heap profiles: EXAMPLE_SOAK_PROFILES,
// else the test's temporary directory.
func soakProfiles(t *testing.T) string {
	if dir := os.Getenv("EXAMPLE_SOAK_PROFILES"); dir != "" {
		testkit.Must(t, os.MkdirAll(dir, 0o755))
		return dir
	}
	return t.TempDir()
}

// heapProfile saves the controller's heap profile (after a GC) as
// dir/heap-name.pb.gz and returns its path.
func (e *env) heapProfile(t *testing.T, dir, name string) string {
	t.Helper()
	body, err := e.adminGet(t, "/debug/pprof/heap?gc=1")
	testkit.Must(t, err)
	path := filepath.Join(dir, "heap-"+name+".pb.gz")
	testkit.Must(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// heapDiff is go tool pprof's top of in-use space of end over base.
func heapDiff(t *testing.T, base, end string) string {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=40", "-sample_index=inuse_space", "-diff_base", base, end).CombinedOutput()
	if err != nil {
		t.Errorf("go tool pprof: %v\n%s", err, out)
	}
	return string(out)
}

// memoryEntries reads example_ccm_memory_entries{structure} off a
// /metrics page.
func memoryEntries(page string) map[string]float64 {
	out := map[string]float64{}
	const name = "example_ccm_memory_entries{structure=\""
	for _, line := range strings.Split(page, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(rest, "\"} ")
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); ok && err == nil {
			out[k] = f
		}
	}
	return out
}

// correlator is where client-go's event correlators allocate what their
// caches hold.
const correlator = "k8s.io/client-go/tools/record.(*EventCorrelator)"

// heapProfileMiB is a heap profile's live heap, all of it and what was
// allocated through client-go's event correlators: LRU caches of a fixed
// number of keys (the controller's recorder 512; the k8s.io/cloud-provider
// service controller's own, which cannot be configured, 4,096), full only
// after that many events of distinct objects or messages.
func heapProfileMiB(t testing.TB, raw string) (live, correlators float64) {
	t.Helper()
	p, err := profile.Parse(strings.NewReader(raw))
	testkit.Must(t, err)
	idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "inuse_space" })
	if idx < 0 {
		t.Fatal("no inuse_space in the heap profile")
	}
	var sum, all int64
	for _, smp := range p.Sample {
		all += smp.Value[idx]
		if slices.ContainsFunc(smp.Location, func(l *profile.Location) bool {
			return slices.ContainsFunc(l.Line, func(ln profile.Line) bool {
				return ln.Function != nil && strings.HasPrefix(ln.Function.Name, correlator)
			})
		}) {
			sum += smp.Value[idx]
		}
	}
	return float64(all) / (1 << 20), float64(sum) / (1 << 20)
}

// goroutinesIn counts the goroutines of a debug=1 goroutine profile whose
// stack holds fn: each stack is a line "N @ pcs" and its frames.
func goroutinesIn(profile, fn string) int {
	total, n := 0, 0
	for line := range strings.Lines(profile) {
		if count, _, ok := strings.Cut(line, " @ "); ok {
			n, _ = strconv.Atoi(count)
		} else if strings.Contains(line, "\t"+fn+"+") {
			total += n
			n = 0
		}
	}
	return total
}
