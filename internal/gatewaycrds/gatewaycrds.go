// Package gatewaycrds installs Gateway API's CRDs (the standard channel,
// or the experimental one's), of the module version this repository
// builds with, on a test API server or the demo's: they are read from the
// module cache (config/crd/<channel>), not copied here.
package gatewaycrds

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// Kinds are the CRDs installed: what the controller serves and reads.
var Kinds = []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "tcproutes", "udproutes", "listenersets", "referencegrants", "backendtlspolicies"}

// Channel is a release channel of the CRDs (config/crd/<channel>).
type Channel string

const (
	// Standard is what the controller is built and documented against.
	Standard Channel = "standard"
	// Experimental adds the fields still in trial (an HTTPRoute rule's
	// retry, for one): the conformance run installs it, so the features
	// that need those fields can be claimed and tested.
	Experimental Channel = "experimental"
)

// Install installs Kinds' standard CRDs for t (see Apply).
func Install(t testing.TB, kube kubernetes.Interface, cfg *rest.Config) {
	InstallChannel(t, kube, cfg, Standard)
}

// InstallChannel installs Kinds' CRDs of channel ch for t.
func InstallChannel(t testing.TB, kube kubernetes.Interface, cfg *rest.Config, ch Channel) {
	t.Helper()
	testkit.Must(t, ApplyChannel(testkit.Context(t), kube, cfg, ch))
}

// Apply installs Kinds' standard CRDs with kube and waits until cfg's
// clients are served HTTPRoutes.
func Apply(ctx context.Context, kube kubernetes.Interface, cfg *rest.Config) error {
	return ApplyChannel(ctx, kube, cfg, Standard)
}

// ApplyChannel is Apply with the CRDs of channel ch.
func ApplyChannel(ctx context.Context, kube kubernetes.Interface, cfg *rest.Config, ch Channel) error {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return fmt.Errorf("gatewaycrds: locate sigs.k8s.io/gateway-api in the module cache: %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", string(ch))
	for _, name := range Kinds {
		data, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+name+".yaml"))
		if err != nil {
			return err
		}
		objs, err := deploy.Decode(data)
		if err != nil {
			return err
		}
		if err := deploy.Apply(ctx, kube, objs); err != nil {
			return err
		}
	}
	gw, err := gwclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := gw.GatewayV1().HTTPRoutes("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
}
