// Package gatewaycrds installs Gateway API's standard CRDs, of the module
// version this repository builds with, on a test API server: they are
// read from the module cache (config/crd/standard), not copied here.
package gatewaycrds

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// Kinds are the CRDs installed: what the controller serves and reads.
var Kinds = []string{"gatewayclasses", "gateways", "httproutes", "tlsroutes", "tcproutes", "udproutes", "referencegrants"}

// Install installs Kinds' CRDs with kube and waits until cfg's clients are
// served HTTPRoutes.
func Install(t testing.TB, kube kubernetes.Interface, cfg *rest.Config) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("gatewaycrds: locate sigs.k8s.io/gateway-api in the module cache: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	for _, name := range Kinds {
		data, err := os.ReadFile(filepath.Join(dir, "gateway.networking.k8s.io_"+name+".yaml"))
		testkit.Must(t, err)
		objs, err := deploy.Decode(data)
		testkit.Must(t, err)
		testkit.Must(t, deploy.Apply(testkit.Context(t), kube, objs))
	}
	gw, err := gwclient.NewForConfig(cfg)
	testkit.Must(t, err)
	testkit.Eventually(t, 30*time.Second, "Gateway API served", func() error {
		_, err := gw.GatewayV1().HTTPRoutes("default").List(testkit.Context(t), metav1.ListOptions{})
		return err
	})
}
