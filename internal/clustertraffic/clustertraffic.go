// Package clustertraffic makes a test cluster's workloads carry traffic,
// as a kubelet with a CNI plugin and kube-proxy would on real nodes, for
// the tests and the demo that run inside internal/netns (docs/adr/0023):
//
//   - pods.go: the pod runner starts a real process for every pod whose
//     image it knows (example-echo, for ours and for the Gateway API
//     conformance suite's echo-basic; CoreDNS, the suite's UDPRoute
//     backend) in a network namespace of its own,
//     joined at the pod's IP by a veth pair (netns.Join, as a ptp CNI
//     plugin would), and marks the pod listening, which kwok waits for
//     before it makes the pod Ready (testcluster.WithPodReadyAnnotation):
//     endpoints are live ones;
//   - nodes.go: every node forwards its nodeIP:nodePort to the Service's
//     ready endpoints, only its own with externalTrafficPolicy: Local, and
//     answers the Service's health check node port as kube-proxy does;
//   - volumes.go: its Secret, ConfigMap and emptyDir volumes are written
//     and seen at their mount paths in a mount namespace of its own
//     (internal/podfs); other kinds (the service account token) are not
//     mounted, and the runner says so.
package clustertraffic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/internal/netns"
)

// ListeningAnnotation is set to "true" on a pod once its process listens
// (or at once, for a pod the runner does not run).
const ListeningAnnotation = "traffic.example.com/listening"

// Options configure Start.
type Options struct {
	// Client is an admin client of the cluster.
	Client kubernetes.Interface
	// EchoBinary is example-echo, what a known image runs.
	EchoBinary string
	// CoreDNS is the CoreDNS binary (hack/coredns.sh) a container of
	// CoreDNS's image runs, through example-echo (its volumes mounted);
	// empty, such a pod runs nothing.
	CoreDNS string
	// LogDir receives each pod's output (namespace_name.log).
	LogDir string
	// Log receives what the harness does; nil discards it.
	Log *slog.Logger
}

// Traffic is a running pod runner and node proxy.
type Traffic struct {
	pods   *podRunner
	nodes  *nodeProxy
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs the pod runner and the node proxy until Stop.
func Start(ctx context.Context, o Options) (*Traffic, error) {
	if !netns.Inside() {
		// Its pods' veths, routes and forwarding belong in a namespace
		// of the run's own, never on the host's network.
		return nil, errors.New("clustertraffic: run inside internal/netns (netns.Main, netns.Run)")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactory(o.Client, 10*time.Minute)
	tr := &Traffic{cancel: cancel}
	tr.pods = newPodRunner(o, f.Core().V1().Pods().Lister())
	tr.nodes = newNodeProxy(o.Log, f)
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    tr.pods.onPod,
		UpdateFunc: func(_, obj any) { tr.pods.onPod(obj) },
		DeleteFunc: tr.pods.onDelete,
	}); err != nil {
		cancel()
		return nil, err
	}
	if err := tr.nodes.watch(); err != nil {
		cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("clustertraffic: %v never synced", typ)
		}
	}
	tr.wg.Go(func() { tr.pods.run(ctx) })
	tr.wg.Go(func() { tr.nodes.run(ctx) })
	return tr, nil
}

// Stop ends every pod's process and every node's sockets.
func (tr *Traffic) Stop() {
	tr.cancel()
	tr.wg.Wait()
	tr.pods.stopAll()
	tr.nodes.closeAll()
}
