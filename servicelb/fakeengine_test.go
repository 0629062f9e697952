package servicelb

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/servicemodel"
)

// fakeEngine is every part's engine (Engine) for what New wires, in unit
// tests only: the parts' fakes, and previews whose plan is preview's
// answer (or previewErr), counted.
type fakeEngine struct {
	*fakeLBEngine
	*fakePoolEngine
	*fakeGroupEngine
	*fakeAddressEngine
	preview    *engine.Speculation
	previewErr error
	previews   int
}

var _ Engine = (*fakeEngine)(nil)

// newFakeEngine's addresses are reserved under cfg, in cloud.
func newFakeEngine(cfg *cloudconfig.Config, cloud *fakeCloud) *fakeEngine {
	return &fakeEngine{fakeLBEngine: &fakeLBEngine{}, fakePoolEngine: &fakePoolEngine{}, fakeGroupEngine: &fakeGroupEngine{},
		fakeAddressEngine: &fakeAddressEngine{cfg: cfg, cloud: cloud}}
}

// Those the parts' fakes share are a Service's own load balancer's.
func (e *fakeEngine) ForceUnlock(ctx context.Context, j engine.Job, id string) error {
	return e.fakeLBEngine.ForceUnlock(ctx, j, id)
}
func (e *fakeEngine) GetLoadBalancer(ctx context.Context, in *annotations.Service) (*engine.LoadBalancer, bool, error) {
	return e.fakeLBEngine.GetLoadBalancer(ctx, in)
}

// LoadBalancerShape is a tcp listener per port, to its node port.
func (e *fakeEngine) LoadBalancerShape(in *annotations.Service) (engine.Shape, error) {
	s := engine.Shape{Name: in.Name, Type: "fake"}
	for _, p := range in.Spec.Ports {
		s.Listeners = append(s.Listeners, servicemodel.ListenerShape{Protocol: "tcp", Port: int(p.Port), TargetPort: int(p.NodePort)})
	}
	return s, nil
}
func (e *fakeEngine) PreviewLoadBalancer(context.Context, *annotations.Service, []*v1.Node, string, map[lbmodel.ServicePort]string, engine.PolicyObject) (*engine.Speculation, []engine.Verdict, error) {
	e.previews++
	return e.preview, nil, e.previewErr
}
func (e *fakeEngine) EvaluateRendered([]engine.ResourceChange, engine.PolicyObject) []engine.Verdict {
	return nil
}

// ran is what the fake was asked to change: reconciles of a Service's
// own load balancer, of pools and of groups.
func (e *fakeEngine) ran() int {
	return e.reconciles + len(e.fakePoolEngine.reconciled) + len(e.fakeGroupEngine.reconciled)
}

// lbsOverFakes is the Service load balancing over a fake engine, with
// events recorded in memory.
func lbsOverFakes(t *testing.T, cfg *cloudconfig.Config) (*LoadBalancers, *fakeEngine, *record.FakeRecorder) {
	t.Helper()
	eng := newFakeEngine(cfg, &fakeCloud{})
	rec := record.NewFakeRecorder(100)
	board := review.New(cfg, nil)
	board.Connect(t.Context(), fake.NewClientset(), rec)
	return New(Options{Config: cfg, Engine: eng, Board: board}), eng, rec
}
