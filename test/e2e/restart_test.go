package e2e

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// A new controller process with an empty work directory (a rolling
// update, a leader change) answers unchanged Services and the route set
// from their plan records: no terraform process (counted from the OS) and
// no write to the Services (their status equals what the API server
// stored, ipMode included).
func TestRestartRunsNoTerraform(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{countProcesses: true})
	e.addNode("node-a", "ex-west-1a", "10.244.1.0/24")
	e.addNode("node-b", "ex-west-1b", "10.244.2.0/24")
	e.waitNodesInitialised(2)
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		_, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService(name, 80), metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		e.waitIngress(name, 60*time.Second)
	}
	nets, err := e.api.ListNetworks(testkit.Context(t), region, "default")
	testkit.Must(t, err)
	testkit.Eventually(t, 60*time.Second, "routes", func() error {
		l, err := e.api.ListRoutes(testkit.Context(t), nets[0].ID)
		if err != nil || len(l) != 2 {
			return fmt.Errorf("%d routes (%v)", len(l), err)
		}
		return nil
	})
	// What the restarted controller answers from: the last apply in the
	// record of each Service, of the route set and of the target pools.
	testkit.Eventually(t, 30*time.Second, "every record holds its last apply", func() error {
		all, err := records.NewStore(e.kube, namespace, 0).List(testkit.Context(t))
		if err != nil {
			return err
		}
		want := map[string]bool{"default/steady-1": true, "default/steady-2": true, "default/steady-3": true,
			objectref.KindRouteSet: true, objectref.KindTargetPools: true}
		for _, r := range all {
			if r.Applied == nil {
				continue
			}
			delete(want, r.Object.Namespace+"/"+r.Object.Name)
			delete(want, r.Object.Kind)
		}
		if len(want) > 0 {
			return fmt.Errorf("no last apply recorded yet for %v", slices.Sorted(maps.Keys(want)))
		}
		return nil
	})

	e.killCCM(e.ccm)
	testkit.Must(t, os.RemoveAll(e.workDir)) // what a new pod's emptyDir holds
	before := e.procs.Counts(t)
	e.startCCM()
	// The service controller syncs every Service at start (each answered
	// from its record); the route controller reads the routes once its
	// caches are synced and then every 2 s (answered from the route set's
	// record).
	testkit.Eventually(t, 60*time.Second, "every Service answered and the route controller started", func() error {
		m, err := e.scrape(t)
		if err != nil {
			return err
		}
		if n := metricSum(m, "example_ccm_fast_path_skips_total"); n < 3 {
			return fmt.Errorf("%.0f Services answered", n)
		}
		// Their syncs done: a status patch would have come before.
		if n := metricWith(m, "workqueue_work_duration_seconds_count", `name="service"`); n < 3 {
			return fmt.Errorf("%.0f Service syncs finished", n)
		}
		// cloud-provider v0.36 logs its caches synced without the
		// controller's name: the route controller's own start line.
		if e.countLog("Starting route controller") == 0 {
			return fmt.Errorf("the route controller has not started")
		}
		return nil
	})
	// What is checked is that nothing happens: the route controller
	// reconciles once more from start to end (its count taken now, plus
	// two: one more begun after a whole one).
	routes := e.routeSyncs(t)
	testkit.Eventually(t, 60*time.Second, "a whole route reconcile", func() error {
		if n := e.routeSyncs(t); n < routes+2 {
			return fmt.Errorf("%.0f route reconciles begun, want %.0f", n, routes+2)
		}
		return nil
	})
	if after := e.procs.Counts(t); !maps.Equal(after, before) {
		t.Errorf("the restarted controller started terraform processes: %v after %v", after, before)
	}
	if n := e.countLog("Patching status for service"); n != 0 {
		t.Errorf("the restarted controller patched %d unchanged Services' status (ipMode?)", n)
	}
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		svc, err := e.kube.CoreV1().Services("default").Get(testkit.Context(t), name, metav1.GetOptions{})
		testkit.Must(t, err)
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			t.Errorf("%s lost its ingress", name)
		}
	}
}
