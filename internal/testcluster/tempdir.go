package testcluster

import (
	"fmt"
	"os"

	"github.com/example/cloud-provider-example/internal/procdir"
)

// A cluster's temp dir holds ~120 MB (etcd preallocates its WAL), and one is
// left behind whenever a test binary is killed (e.g. go test -timeout). The
// dirs are named after the owning process, and each new one first sweeps
// those of dead processes (procdir.Sweep). A dir kept for debugging a failed
// test survives the sweep for a day (procdir.Keep).
const tempPrefix = "testcluster"

func makeTempDir() (string, error) {
	procdir.Sweep("", tempPrefix)
	return os.MkdirTemp("", fmt.Sprintf("%s-%d-", tempPrefix, os.Getpid()))
}
