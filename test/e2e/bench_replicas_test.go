package e2e

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchReplicaServices is how many Services BenchmarkReplicas creates per
// run: $EXAMPLE_BENCH_REPLICA_SERVICES, default 1,000 (the four runs take
// about 25 minutes on 2 cores).
func benchReplicaServices() int { return countFromEnv("EXAMPLE_BENCH_REPLICA_SERVICES", 1000) }

// BenchmarkReplicas: one controller against three sharded replicas
// (docs/adr/0017), with the shipped per-replica settings, creating the
// same Services at once until every one has an address. It runs with the
// simulator's provisioning at 100 ms, where on 2 cores the CPU bounds
// both, and at 2 s, where the terraform slots of one replica bound it
// (target: 3 replicas reach ingress in at most 0.45× the time of one).
// Per run: time to ingress, CPU per create over all replicas and for the
// busiest replica (its CPU over the creates it applied, from the audit
// log), the balance (max/min applies by replica) and terraform processes
// per Service (every one, from the OS).
func BenchmarkReplicas(b *testing.B) {
	n := benchReplicaServices()
	took := map[string]time.Duration{}
	for _, delay := range []time.Duration{100 * time.Millisecond, 2 * time.Second} {
		for _, replicas := range []int{1, 3} {
			name := fmt.Sprintf("delay=%s/replicas=%d", delay, replicas)
			b.Run(name, func(b *testing.B) {
				took[name] = benchReplicas(b, n, delay, replicas)
				// Beside one replica's time, when it ran first (a
				// parent benchmark prints nothing of its own).
				if one := took[fmt.Sprintf("delay=%s/replicas=1", delay)]; replicas > 1 && one > 0 {
					b.ReportMetric(took[name].Seconds()/one.Seconds(), "ingress-time-vs-1-replica")
				}
			})
		}
	}
}

// benchReplicas creates n Services on replicas controllers (one: not
// sharded) with the simulator provisioning in delay, reports its figures
// and returns the time to ingress.
func benchReplicas(b *testing.B, n int, delay time.Duration, replicas int) time.Duration {
	o := benchOptions()
	// The state is shared, as replicas need it, in both runs.
	o.provisionDelay, o.state, o.replicas = delay, "kubernetes", replicas
	o.lbPublicPrefix = netip.MustParsePrefix("198.18.0.0/16")
	e := newEnv(b, o)
	e.nodeA()
	if replicas > 1 {
		e.waitShards(b, replicas)
	}
	procs := e.controllers()
	cpu0 := make([]time.Duration, len(procs))
	for i, p := range procs {
		cpu0[i] = cpuOf(p)
	}
	procs0 := e.procs.Total(b)
	start := time.Now()
	e.createServices(b, "s", 0, n)
	for i := range n {
		e.waitIngressFast(fmt.Sprintf("s-%03d", i), 30*time.Minute)
	}
	took := time.Since(start)

	applied := e.appliesByReplica(b)
	var total time.Duration
	var busiest float64
	var shares []int
	for i, p := range procs {
		cpu := cpuOf(p) - cpu0[i]
		total += cpu
		name := "ccm"
		if e.replicas != nil {
			name = e.replicas[i].name
		}
		mine := len(applied[name])
		if replicas == 1 {
			mine = n
		}
		shares = append(shares, mine)
		if mine > 0 {
			busiest = max(busiest, cpu.Seconds()/float64(mine))
		}
		b.Logf("%s applied %d of %d Services with %.1f s of CPU", name, mine, n, cpu.Seconds())
	}
	b.ReportMetric(took.Seconds(), "ingress-all-s")
	b.ReportMetric(total.Seconds()/float64(n), "cpu-s/create")
	b.ReportMetric(busiest, "busiest-replica-cpu-s/create")
	if slices.Min(shares) > 0 {
		b.ReportMetric(float64(slices.Max(shares))/float64(slices.Min(shares)), "balance-max/min")
	}
	b.ReportMetric(float64(e.procs.Total(b)-procs0)/float64(n), "tf-procs/service")
	return took
}

// controllers are the env's controller processes: its replicas, or its
// one controller.
func (e *env) controllers() []*exec.Cmd {
	if e.replicas == nil {
		return []*exec.Cmd{e.ccm}
	}
	out := make([]*exec.Cmd, len(e.replicas))
	for i, r := range e.replicas {
		out[i] = r.cmd
	}
	return out
}

// cpuOf is the CPU a process used so far, with that of the children it
// waited for: its terraform processes (the provider runs inside it).
func cpuOf(p *exec.Cmd) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces): utime, stime,
	// cutime and cstime are the 12th to 15th, in clock ticks (100 a second).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
