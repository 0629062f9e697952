package testcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workloadComponents are the Kubernetes binaries Options.Workloads runs
// beside kwok (built by hack/control-plane.sh with the apiserver).
var workloadComponents = []string{"kube-controller-manager", "kube-scheduler"}

// kcmControllers are what turns a Deployment into Ready pods and
// endpoints: the ServiceAccount controller (pods are refused without
// "default"), node lifecycle (it lifts the not-ready taint every new node
// is created with), and the collector and namespace controllers so that
// deletes finish as in a real cluster.
const kcmControllers = "deployment,replicaset,endpointslice,serviceaccount,nodelifecycle,garbagecollector,namespace"

// startWorkloads runs kube-controller-manager, kube-scheduler and kwok
// (hack/kwok.sh), which plays the kubelet of every node: a node reports
// Ready (and renews its Lease) and a pod bound to it becomes Running and
// Ready, though no container runs.
func (c *Cluster) startWorkloads(ctx context.Context, binDir string, s *secrets) error {
	kwok, err := runScript(ctx, "kwok.sh", nil, c.log)
	if err != nil {
		return err
	}
	// The kwok binary has no stages of its own (kwokctl adds them):
	// hack/kwok.sh keeps the module's beside the binary.
	stages, err := filepath.Glob(filepath.Join(filepath.Dir(kwok), "stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		return fmt.Errorf("kwok stages: none in %s (rebuild with hack/kwok.sh)", filepath.Join(filepath.Dir(kwok), "stages"))
	}
	if c.podReadyAnnotation != "" {
		if stages, err = gatedStages(stages, filepath.Join(c.Dir, "stages"), c.podReadyAnnotation); err != nil {
			return fmt.Errorf("kwok stages: %w", err)
		}
	}
	admin := []string{
		"--kubeconfig=" + c.AdminKubeconfig,
		"--authentication-kubeconfig=" + c.AdminKubeconfig,
		"--authorization-kubeconfig=" + c.AdminKubeconfig,
		"--secure-port=0",
		"--leader-elect=false",
	}
	kwokArgs := []string{
		"--kubeconfig=" + c.AdminKubeconfig,
		"--manage-all-nodes=true",
		"--cidr=10.244.0.0/16",
		"--node-ip=10.0.0.1",
		// 0 (the binary's default) means no Lease: the node lifecycle
		// controller would find every node silent after ~50 s.
		"--node-lease-duration-seconds=40",
	}
	for _, st := range stages {
		kwokArgs = append(kwokArgs, "--config="+st)
	}
	for _, p := range []struct {
		name, bin string
		args      []string
	}{
		{"kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), append(admin,
			"--controllers="+kcmControllers,
			"--service-account-private-key-file="+s.saKey,
			"--root-ca-file="+filepath.Join(c.Dir, "certs", "apiserver.crt"),
			"--use-service-account-credentials=false",
			"--node-monitor-period=1s",
			// Its client's default 20 requests/s would pace a rollout of
			// many Deployments at once (make bench: 1,000 pods) by the
			// throttle, not by the cluster.
			"--kube-api-qps=100", "--kube-api-burst=200")},
		{"kube-scheduler", filepath.Join(binDir, "kube-scheduler"), admin},
		{"kwok", kwok, kwokArgs},
	} {
		c.progress("starting %s", p.name)
		proc, err := startProcess(p.name, p.bin, p.args, filepath.Join(c.Dir, p.name+".log"))
		if err != nil {
			return err
		}
		c.workloads = append(c.workloads, proc)
	}
	// kube-controller-manager is serving once namespace default has its
	// ServiceAccount; the others have no probe without a port, so an early
	// exit is what is checked.
	err = waitFor(ctx, c.workloads[0], func(ctx context.Context) bool {
		_, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	if err != nil {
		return err
	}
	for _, p := range c.workloads[1:] {
		if p.exited() {
			return p.exitError()
		}
	}
	return nil
}

// processes are the cluster's processes, the workloads first (they stop
// first).
func (c *Cluster) processes() []*process {
	ps := append([]*process{}, c.workloads...)
	return append(ps, c.apiserver, c.etcd)
}

// workloadsNote names what Options.Workloads adds, for progress lines.
func workloadsNote(on bool) string {
	if !on {
		return ""
	}
	return " with " + strings.Join(append(workloadComponents, "kwok"), ", ")
}
