package engine_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// The engine opened from a cloud config refuses a Service past its
// loadBalancer.maxListeners before any terraform runs (servicelb's
// TestOverLimitServiceIsRefusedWithAnEvent tests what the refusal
// becomes, over a fake engine).
func TestCheckServiceUnderTheCloudConfig(t *testing.T) {
	tc := tftest.Get(t)
	cfg := reviewtest.Config(t, "loadBalancer: {maxListeners: 10}\n")
	dir := t.TempDir()
	cfg.Terraform.Binary, cfg.Terraform.CLIConfig, cfg.Terraform.LockFile = tc.Terraform, tc.CLIConfig, tc.LockFile
	cfg.Terraform.WorkDir, cfg.State.Local.Dir = filepath.Join(dir, "work"), filepath.Join(dir, "states")
	e, err := engine.Open(t.Context(), cfg, engine.Wiring{}, engine.Options{})
	testkit.Must(t, err)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	for i := range 11 {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: fmt.Sprint("p", i), Protocol: corev1.ProtocolTCP, Port: int32(1000 + i), NodePort: int32(30000 + i)})
	}
	var tm *engine.TooManyListenersError
	if err := e.CheckService(annotations.Read(svc)); !errors.As(err, &tm) || !strings.Contains(err.Error(), "at most 10 listeners") {
		t.Fatalf("11 ports under maxListeners 10: %v, want a TooManyListenersError naming the limit", err)
	}
	svc.Spec.Ports = svc.Spec.Ports[:10]
	if err := e.CheckService(annotations.Read(svc)); err != nil {
		t.Fatalf("10 ports under maxListeners 10: %v", err)
	}
	if procs := e.Processes(); len(procs) != 0 {
		t.Fatalf("terraform ran for a check: %v", procs)
	}
}
