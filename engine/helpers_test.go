package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/providerid"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

const region = "ex-west-1"

type fixture struct {
	sim *simtest.Sim
	api *exampleapi.Client
	eng *engine.Engine
	// stateDir holds the local backend's state files.
	stateDir string
}

func newFixture(tb testing.TB, concurrency int) *fixture {
	tb.Helper()
	tc := tftest.Get(tb)
	sim := simtest.Start(tb)
	dir := tb.TempDir()
	r, err := runner.New(context.Background(), runner.Config{
		Terraform:     runner.BinaryConfig{Path: tc.Terraform},
		WorkDir:       filepath.Join(dir, "work"),
		CLIConfigFile: tc.CLIConfig,
		LockFile:      tc.LockFile,
		Concurrency:   concurrency,
		Env:           map[string]string{"EXAMPLE_TOKEN": sim.Token},
	})
	if err != nil {
		tb.Fatal(err)
	}
	states, err := state.New(state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(dir, "states")}}, state.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		tb.Fatal(err)
	}
	eng := engine.New(renderer.Config{ClusterID: "test", Region: region, Endpoint: sim.URL, NetworkName: "default"}, states, r)
	return &fixture{sim: sim, api: api, eng: eng, stateDir: filepath.Join(dir, "states")}
}

func ctxT(tb testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	tb.Cleanup(cancel)
	return c
}

// node creates an instance and returns its Node.
func (f *fixture) node(tb testing.TB, name string) *corev1.Node {
	tb.Helper()
	in, err := f.api.CreateInstance(ctxT(tb), exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: region + "a"})
	if err != nil {
		tb.Fatal(err)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{ProviderID: providerid.Format(region, in.ID)},
	}
}

func service(name string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	for i, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: fmt.Sprintf("p%d", i), Protocol: corev1.ProtocolTCP, Port: p, NodePort: 30000 + p,
		})
	}
	return svc
}

func instanceID(tb testing.TB, n *corev1.Node) string {
	id, err := providerid.Parse(n.Spec.ProviderID)
	if err != nil {
		tb.Fatal(err)
	}
	return id.InstanceID
}
