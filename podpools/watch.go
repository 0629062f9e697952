package podpools

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/podtargets"
)

// resync is how often every object is looked at again.
const resync = 10 * time.Minute

// watch sets up the informers: a Service's slices, the Service itself
// and the pods its readiness gates name touch its pools.
func (p *Pools) watch() {
	f := kubeinformers.NewSharedInformerFactory(p.kube, resync)
	svcs, eps, pods := f.Core().V1().Services(), f.Discovery().V1().EndpointSlices(), f.Core().V1().Pods()
	p.factory, p.services, p.slices = f, svcs.Lister(), eps.Lister()
	// Only what the decisions read of a pod is kept: every pod of the
	// cluster is watched, so its memory is what the cache costs.
	// Neither fails on an informer not started yet.
	utilruntime.Must(pods.Informer().SetTransform(slimPod))
	utilruntime.Must(pods.Informer().AddIndexers(cache.Indexers{byIP: podIPs}))
	p.pods = pods.Informer().GetIndexer()
	// touched gets the object, and on an update what it was (nil else).
	on := func(inf cache.SharedIndexInformer, touched func(obj, old any)) {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { touched(obj, nil) },
			UpdateFunc: func(old, cur any) { touched(cur, old) },
			DeleteFunc: func(obj any) {
				if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = d.Obj
				}
				touched(obj, nil)
			},
		})
		p.synced = append(p.synced, inf.HasSynced)
	}
	on(svcs.Informer(), func(obj, _ any) {
		if s, ok := obj.(*corev1.Service); ok {
			p.touchService(s.Namespace, s.Name)
			p.queueUnused(s.Namespace, s.Name)
		}
	})
	on(eps.Informer(), func(obj, old any) {
		// A slice relabelled leaves its former Service too.
		for _, o := range []any{obj, old} {
			if s, ok := o.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] != "" {
				p.touchService(s.Namespace, s.Labels[discoveryv1.LabelServiceName])
			}
		}
	})
	on(pods.Informer(), func(obj, old any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		// An update may have moved the pod off an IP: its old IPs too.
		was, _ := old.(*corev1.Pod)
		p.touchAt(pod, was)
		// A pod held back by a gate of ours is a target once its
		// containers are ready, which changes no slice: its Service's
		// pools and gates are looked at again.
		for _, g := range pod.Spec.ReadinessGates {
			if svc, ok := gateService(g.ConditionType); ok {
				p.touchService(pod.Namespace, svc)
				p.gates.Add(serviceKey{pod.Namespace, svc})
			}
		}
	})
}

// touchService marks the pools of Service namespace/name changed now and
// queues them; each is applied once its changes settle.
func (p *Pools) touchService(namespace, name string) {
	p.touchWhere(func(st *pool) bool { return st.port.Namespace == namespace && st.port.Service == name })
}

// touchAt is touchService for the pools whose last decision refused an
// IP of pod (or of was, the pod before an update) or applied one as a
// target. The boundary reads the pods by IP from this informer and runs
// only when a pool is decided: a slice naming a pod not seen yet (this
// informer may lag the EndpointSlice controller's), or an address two
// namespaces' pods claimed, is decided again once the pod is known; and a
// target whose pod ended or left the IP is decided again at once, not at the
// next slice change or resync, before another namespace's pod given the
// IP gets the tenant's traffic. One walk: it runs on every pod event.
func (p *Pools) touchAt(pod, was *corev1.Pod) {
	ips, _ := podIPs(pod)
	if was != nil {
		old, _ := podIPs(was)
		for _, ip := range old {
			if !slices.Contains(ips, ip) {
				ips = append(ips, ip)
			}
		}
	}
	if len(ips) == 0 {
		return
	}
	// How targets at each IP begin (exampleapi.IPTarget's "ip:" or "[ip]:").
	var prefixes []string
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			t := exampleapi.IPTarget(a, 0)
			prefixes = append(prefixes, t[:len(t)-1])
		}
	}
	p.touchWhere(func(st *pool) bool {
		return slices.ContainsFunc(ips, func(ip string) bool { return st.refused[ip] }) ||
			slices.ContainsFunc(prefixes, func(pre string) bool { return targetAt(st.targets, pre) })
	})
}

// targetAt tells whether targets, sorted (podtargets.For's), hold one
// beginning with prefix: those sort together, from the first not below it.
func targetAt(targets []string, prefix string) bool {
	i, _ := slices.BinarySearch(targets, prefix)
	return i < len(targets) && strings.HasPrefix(targets[i], prefix)
}

// queueUnused queues the pools of Service namespace/name nobody uses:
// one kept for its grace goes once the Service is gone (keptFor).
func (p *Pools) queueUnused(namespace, name string) {
	for _, st := range p.where(func(st *pool) bool {
		return len(st.users) == 0 && st.port.Namespace == namespace && st.port.Service == name
	}) {
		p.queue.Add(st.port.Ref())
	}
}

// touchWhere marks the used pools that match changed now and queues them.
func (p *Pools) touchWhere(match func(st *pool) bool) {
	for _, st := range p.where(func(st *pool) bool { return len(st.users) > 0 && match(st) }) {
		p.touch(st)
		p.queue.Add(st.port.Ref())
	}
}

// where are the pools that match, chosen under p.mu.
func (p *Pools) where(match func(st *pool) bool) []*pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pool
	for _, st := range p.pools {
		if match(st) {
			out = append(out, st)
		}
	}
	return out
}

// gateService is the Service a readiness gate of ours names.
func gateService(c corev1.PodConditionType) (string, bool) {
	g := string(c)
	if len(g) <= len(podtargets.GatePrefix) || g[:len(podtargets.GatePrefix)] != podtargets.GatePrefix {
		return "", false
	}
	return g[len(podtargets.GatePrefix):], true
}

// slimPod keeps of a pod what the decisions read: its identity, readiness
// gates and network, and its status's addresses and conditions.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			DeletionTimestamp: pod.DeletionTimestamp},
		Spec: corev1.PodSpec{ReadinessGates: pod.Spec.ReadinessGates, HostNetwork: pod.Spec.HostNetwork},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, PodIP: pod.Status.PodIP, PodIPs: pod.Status.PodIPs,
			Conditions: pod.Status.Conditions},
	}, nil
}

// Run starts the informers and the workers, and stops them with ctx.
func (p *Pools) Run(ctx context.Context, workers int) error {
	p.mu.Lock()
	p.started = p.now()
	p.mu.Unlock()
	p.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), p.synced...) {
		return errors.New("pod pools: caches did not sync")
	}
	for range max(workers, 1) {
		go wait.UntilWithContext(ctx, p.poolWork, time.Second)
	}
	go wait.UntilWithContext(ctx, p.gateWork, time.Second)
	go p.sweepAfterGrace(ctx)
	<-ctx.Done()
	p.queue.ShutDown()
	p.gates.ShutDown()
	p.factory.Shutdown()
	return nil
}

// synced tells whether the informers have listed everything: before, a
// pool's targets would be decided from part of the cluster.
func (p *Pools) hasSynced() error {
	for _, s := range p.synced {
		if !s() {
			return fmt.Errorf("pod pools: the cluster's Services, EndpointSlices and pods are not listed yet")
		}
	}
	return nil
}
