package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// nodePort is svc's node port of port.
func nodePort(svc *v1.Service, port int32) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			return p.NodePort
		}
	}
	return 0
}

// groupRecord is the plan record of group default/name, nil if none.
func (e *env) groupRecord(t testing.TB, name string) *records.Record {
	t.Helper()
	all, err := records.NewStore(e.kube, namespace, 10).List(testkit.Context(t))
	testkit.Must(t, err)
	for _, r := range all {
		if r.Object.Kind == objectref.KindServiceGroup && r.Object.Namespace == "default" && r.Object.Name == name {
			return r
		}
	}
	return nil
}

// A group of three Services shares one load balancer: all three show its
// address; a port two of them want goes to the earlier one (an event on
// the other); a member leaving for a load balancer of its own, or
// deleted, takes its listeners with it; a change of the first member's
// that replaces the load balancer moves the others with it; the last one
// leaving destroys it.
func TestServiceGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	e.addNode("node-a", "ex-west-1a")
	services := e.kube.CoreV1().Services("default")
	grouped := func(svc *v1.Service) *v1.Service {
		svc.Annotations = map[string]string{string(annotations.LBGroup): "front"}
		return svc
	}
	// gb and gc are created in the group, in one go (whichever reconcile
	// comes first builds it from the members it sees, the other
	// converges it); ga first on a load balancer of its own.
	for _, svc := range []*v1.Service{lbService("ga", 80), grouped(lbService("gb", 80, 8080)), grouped(lbService("gc", 9090))} {
		_, err := services.Create(testkit.Context(t), svc, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	a, b, c := e.waitIngress("ga", 90*time.Second), e.waitIngress("gb", 90*time.Second), e.waitIngress("gc", 90*time.Second)
	ip, own := b.Status.LoadBalancer.Ingress[0].IP, a.Status.LoadBalancer.Ingress[0].IP
	if c.Status.LoadBalancer.Ingress[0].IP != ip || own == ip {
		t.Fatalf("addresses: ga %v, gb %v, gc %v", a.Status.LoadBalancer.Ingress, b.Status.LoadBalancer.Ingress, c.Status.LoadBalancer.Ingress)
	}
	group, err := e.cloudLB(ip)
	testkit.Must(t, err)
	id := group.ID
	if group.Name != renderer.GroupLoadBalancerName("e2e", "default", "front") || group.Tags[renderer.TagServiceGroup] != "front" {
		t.Fatalf("load balancer %s: name %s, tags %v", id, group.Name, group.Tags)
	}
	e.waitListeners(id, fmt.Sprintf("tcp/80->%d", nodePort(b, 80)), fmt.Sprintf("tcp/8080->%d", nodePort(b, 8080)), fmt.Sprintf("tcp/9090->%d", nodePort(c, 9090)))

	// ga joins. It is the earlier member (created first, or in the same
	// second and first by name), so port 80 is now its, and gb is told;
	// its own load balancer goes once the group serves it.
	a = grouped(a)
	_, err = services.Update(testkit.Context(t), a, metav1.UpdateOptions{})
	testkit.Must(t, err)
	e.waitOnAddress("ga", ip, true, "ga on the group's address")
	e.waitListeners(id, fmt.Sprintf("tcp/80->%d", nodePort(a, 80)), fmt.Sprintf("tcp/8080->%d", nodePort(b, 8080)), fmt.Sprintf("tcp/9090->%d", nodePort(c, 9090)))
	if all, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{}); err != nil || len(all) != 1 || all[0].ID != id {
		t.Fatalf("ga's own load balancer survived its move: %+v %v", all, err)
	}
	for _, name := range []string{"ga", "gb", "gc"} {
		if cur := e.waitIngress(name, 10*time.Second); cur.Status.LoadBalancer.Ingress[0].IP != ip {
			t.Fatalf("%s is not on the group's address: %v", name, cur.Status.LoadBalancer.Ingress)
		}
	}
	e.eventWith(t, "default", "gb", "ListenerConflict", "Listener tcp/80 is not served: Service default/ga")
	testkit.Eventually(t, 30*time.Second, "the group's record lists its members", func() error {
		r := e.groupRecord(t, "front")
		if r == nil || len(r.Members) != 3 || r.Members[0].Name != "ga" {
			return fmt.Errorf("record %+v", r)
		}
		return nil
	})

	// ga leaves for a load balancer of its own again: gb gets port 80.
	a, err = services.Get(testkit.Context(t), "ga", metav1.GetOptions{})
	testkit.Must(t, err)
	a.Annotations = nil
	_, err = services.Update(testkit.Context(t), a, metav1.UpdateOptions{})
	testkit.Must(t, err)
	e.waitOnAddress("ga", ip, false, "ga on its own load balancer")
	e.waitListeners(id, fmt.Sprintf("tcp/80->%d", nodePort(b, 80)), fmt.Sprintf("tcp/8080->%d", nodePort(b, 8080)), fmt.Sprintf("tcp/9090->%d", nodePort(c, 9090)))
	for _, name := range []string{"gb", "gc"} {
		if cur := e.waitIngress(name, 10*time.Second); cur.Status.LoadBalancer.Ingress[0].IP != ip {
			t.Fatalf("%s left the group's address: %v", name, cur.Status.LoadBalancer.Ingress)
		}
	}

	// gc, then gb, the group's first member now, are made internal: gc's
	// setting is ignored (an event says so); gb's replaces the group's
	// load balancer by an internal one, and gc, applied before, follows
	// its address (the service controller sets a Service's status only
	// on that Service's own calls).
	internal := func(name string) {
		t.Helper()
		testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := services.Get(testkit.Context(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Annotations[string(annotations.LBInternal)] = "true"
			_, err = services.Update(testkit.Context(t), cur, metav1.UpdateOptions{})
			return err
		}))
	}
	internal("gc")
	e.eventWith(t, "default", "gc", "GroupSettingIgnored", string(annotations.LBInternal)+" is true here")
	internal("gb")
	e.waitOnAddress("gb", ip, false, "gb on the group's replaced load balancer")
	if ip = e.waitIngress("gb", 10*time.Second).Status.LoadBalancer.Ingress[0].IP; !strings.HasPrefix(ip, "10.255.") {
		t.Fatalf("the group's replaced load balancer is on %s, want an internal address", ip)
	}
	e.waitOnAddress("gc", ip, true, "gc follows the group's replaced load balancer")
	group, err = e.cloudLB(ip)
	testkit.Must(t, err)
	id = group.ID

	// gb is deleted: its listeners go, the load balancer stays.
	testkit.Must(t, services.Delete(testkit.Context(t), "gb", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "gb", services.Get)
	e.waitListeners(id, fmt.Sprintf("tcp/9090->%d", nodePort(c, 9090)))

	// gc, the last member, is deleted: the load balancer and its record go.
	testkit.Must(t, services.Delete(testkit.Context(t), "gc", metav1.DeleteOptions{}))
	waitGone(t, 60*time.Second, "gc", services.Get)
	if _, err := e.api.GetLoadBalancer(testkit.Context(t), id); !exampleapi.IsNotFound(err) {
		t.Fatalf("the group's load balancer survived its last member: %v", err)
	}
	if r := e.groupRecord(t, "front"); r != nil {
		t.Fatalf("the group's record survived it: %+v", r)
	}
	// ga keeps its own.
	all, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	if len(all) != 1 || all[0].ID == id {
		t.Fatalf("after the group went: %+v", all)
	}
}

// waitOnAddress waits (what) until the Service default/name has an
// ingress address, ip when on, another one when not.
func (e *env) waitOnAddress(name, ip string, on bool, what string) {
	e.t.Helper()
	testkit.Eventually(e.t, 60*time.Second, what, func() error {
		cur, err := e.kube.CoreV1().Services("default").Get(testkit.Context(e.t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if in := cur.Status.LoadBalancer.Ingress; len(in) == 0 || (in[0].IP == ip) != on {
			return fmt.Errorf("ingress %v", in)
		}
		return nil
	})
}

// waitListeners waits for load balancer id to have exactly want (in any
// order).
func (e *env) waitListeners(id string, want ...string) {
	e.t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	testkit.Eventually(e.t, 60*time.Second, "listeners "+fmt.Sprint(want), func() error {
		lb, err := e.api.GetLoadBalancer(testkit.Context(e.t), id)
		if err != nil {
			return err
		}
		if got := simtest.Listeners(lb); !slices.Equal(got, want) {
			return fmt.Errorf("listeners %v", got)
		}
		return nil
	})
}
