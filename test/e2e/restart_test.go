package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A new controller process with an empty work directory (a rolling
// update, a leader change) answers unchanged Services and the route set
// from their plan records: no terraform runs.
func TestRestartRunsNoTerraform(t *testing.T) {
	e := newEnv(t, options{})
	e.addNode("node-a", "ex-west-1a", "10.244.1.0/24")
	e.addNode("node-b", "ex-west-1b", "10.244.2.0/24")
	e.waitNodesInitialised(2)
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		_, err := e.kube.CoreV1().Services("default").Create(ctx(t), lbService(name, 80), metav1.CreateOptions{})
		must(t, err)
	}
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		e.waitIngress(name, 60*time.Second)
	}
	nets, err := e.api.ListNetworks(ctx(t), region, "default")
	must(t, err)
	eventually(t, 60*time.Second, "routes", func() error {
		l, err := e.api.ListRoutes(ctx(t), nets[0].ID)
		if err != nil || len(l) != 2 {
			return fmt.Errorf("%d routes (%v)", len(l), err)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // let the records settle

	e.killCCM(e.ccm)
	must(t, os.RemoveAll(e.workDir)) // what a new pod's emptyDir holds
	e.startCCM()
	// The service controller syncs every Service at start, the route
	// controller lists the routes every 2 s: wait for both.
	eventually(t, 60*time.Second, "a started controller", func() error {
		if e.countLog("Successfully acquired lease") == 0 && e.countLog("successfully acquired lease") == 0 {
			return fmt.Errorf("not leading yet")
		}
		return nil
	})
	time.Sleep(10 * time.Second)
	data, err := os.ReadFile(e.ccmLog)
	must(t, err)
	for _, cmd := range []string{`"terraform init"`, `"terraform plan"`, `"terraform apply starting"`} {
		if n := strings.Count(string(data), cmd); n != 0 {
			t.Errorf("the restarted controller ran %s %d times", cmd, n)
		}
	}
	for _, name := range []string{"steady-1", "steady-2", "steady-3"} {
		svc, err := e.kube.CoreV1().Services("default").Get(ctx(t), name, metav1.GetOptions{})
		must(t, err)
		if len(svc.Status.LoadBalancer.Ingress) == 0 {
			t.Errorf("%s lost its ingress", name)
		}
	}
}
