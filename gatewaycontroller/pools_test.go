package gatewaycontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/example/cloud-provider-example/objectref"
)

// tellingPools are pools that tell when one is first applied.
type tellingPools struct {
	PodPools
	applied func(users []string)
}

func (p *tellingPools) OnApplied(f func(users []string)) { p.applied = f }

// A Gateway is looked at again as soon as a pool it uses is applied, not
// at its next retry; another user of the pool (a Service, by its key) queues nothing.
func TestLookWhenPoolsApplied(t *testing.T) {
	pools := &tellingPools{}
	c := &Controller{cloud: &Cloud{Pods: pools}, queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[key]())}
	defer c.queue.ShutDown()
	c.lookWhenPoolsApplied()
	if pools.applied == nil {
		t.Fatal("the controller does not listen for pools applied")
	}
	pools.applied([]string{objectref.Gateway("infra", "gw", "").Key(), "shop/web"})
	if n := c.queue.Len(); n != 1 {
		t.Fatalf("%d keys queued, want the Gateway's", n)
	}
	if k, _ := c.queue.Get(); k.NamespacedName != (types.NamespacedName{Namespace: "infra", Name: "gw"}) {
		t.Errorf("queued %+v, want infra/gw", k)
	}
}
