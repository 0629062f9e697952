package gatewaycontroller

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// heldEngine is fakeEngine whose applies of the Gateway of namespace
// held wait for release: a long apply (terraform, a pod pool's first) of
// one Gateway.
type heldEngine struct {
	fakeEngine
	held    string
	holding chan struct{} // closed once held's apply waits
	once    sync.Once
	release chan struct{}
	calls   sync.Mutex // fakeEngine's applies are one at a time
}

func (h *heldEngine) ReconcileGateway(ctx context.Context, g gateway.LoadBalancer, keys map[string]string, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error) {
	if g.Namespace == h.held {
		h.once.Do(func() { close(h.holding) })
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	h.calls.Lock()
	defer h.calls.Unlock()
	return h.fakeEngine.ReconcileGateway(ctx, g, keys, rv)
}

// TestGatewaysAtOnce: while one Gateway's apply takes long, another
// Gateway, made meanwhile, is programmed: Gateways are looked at by
// several workers, so one team's Gateway does not hold up another's.
func TestGatewaysAtOnce(t *testing.T) {
	gwc := gwfake.NewSimpleClientset()
	ctx := t.Context()
	_, err := gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	gw := func(ns string) *gatewayv1.Gateway {
		return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gw", UID: types.UID("uid-" + ns)},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	}
	eng := &heldEngine{fakeEngine: fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}},
		held: "team-a", holding: make(chan struct{}), release: make(chan struct{})}
	c, err := New(gwc, kubefake.NewClientset(), &Cloud{Engine: eng, Review: &fakeReview{}, Infra: fakeInfra{},
		Settings: Settings{Policy: annotations.ApplyAuto, ClaimsNamespace: claimsNS}})
	testkit.Must(t, err)
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(run) }()
	released := sync.OnceFunc(func() { close(eng.release) })
	t.Cleanup(func() { released(); stop(); <-done })

	// team-a's Gateway: its apply waits.
	_, err = gwc.GatewayV1().Gateways("team-a").Create(ctx, gw("team-a"), metav1.CreateOptions{})
	testkit.Must(t, err)
	select {
	case <-eng.holding:
	case <-time.After(30 * time.Second):
		t.Fatal("team-a's Gateway was never applied")
	}
	// team-b's, made meanwhile, is applied at once.
	_, err = gwc.GatewayV1().Gateways("team-b").Create(ctx, gw("team-b"), metav1.CreateOptions{})
	testkit.Must(t, err)
	programmed := func(ns string) func() error {
		return func() error {
			g, err := gwc.GatewayV1().Gateways(ns).Get(ctx, "gw", metav1.GetOptions{})
			if err != nil || !meta.IsStatusConditionTrue(g.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed)) {
				return fmt.Errorf("Gateway %s/gw: %v, %v", ns, g.Status.Conditions, err)
			}
			return nil
		}
	}
	testkit.Eventually(t, 30*time.Second, "team-b's Gateway programmed while team-a's apply waits", programmed("team-b"))
	released()
	testkit.Eventually(t, 30*time.Second, "team-a's Gateway programmed once its apply ends", programmed("team-a"))
}
