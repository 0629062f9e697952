// Command example-demo runs `make demo`: the Example cloud simulator, a
// real local control plane (etcd + kube-apiserver), the CCM, three nodes
// and a LoadBalancer Service, and shows what happens as it happens.
//
//	example-demo up   --dir D --bin B --helm H  start (or show) the demo, return once it answers
//	example-demo exec --dir D -- CMD ARGS...    run CMD in the demo's network (kubectl, curl)
//	example-demo down --dir D                   stop everything and remove D
//
// `up` starts a detached supervisor (`example-demo supervise`) that owns
// every process and logs to D/demo.log; `up` follows that log. `down`
// signals the supervisor, which stops the processes in order. The
// supervisor runs in a user and network namespace of its own
// (internal/netns) where the cloud's addresses are local, so that its
// load balancers, nodes and pods carry traffic; `exec` enters it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", ".demo", "directory for the demo's data, logs, kubeconfig and state")
	bin := fs.String("bin", "bin", "directory holding the built binaries and the provider mirror")
	helm := fs.String("helm", "", "helm, which renders the controller's RBAC from deploy/chart (hack/helm.sh)")
	_ = fs.Parse(os.Args[2:])
	d, err := filepath.Abs(*dir)
	check(err)
	b, err := filepath.Abs(*bin)
	check(err)
	switch os.Args[1] {
	case "up":
		check(up(d, b, *helm))
	case "supervise":
		check(supervise(d, b, *helm))
	case "exec":
		check(enter(d, fs.Args()))
	case "down":
		check(down(d))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: example-demo up|down|exec [--dir DIR] [--bin BIN] [--helm HELM] [-- CMD ARGS...]")
	os.Exit(2)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
