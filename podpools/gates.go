package podpools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/podtargets"
)

// Readiness gates (podtargets.Gate): a pod waiting on the gate of its
// Service is made Ready once every load balancer forwarding to the
// Service's pools finds each of its targets healthy (the cloud's pool
// target health), so a rollout goes no faster than the load balancer
// takes new pods. A Service no load balancer forwards to holds nobody.

// gateWork processes the gates' queue until it shuts down.
func (p *Pools) gateWork(ctx context.Context) {
	work(p.gates, "Readiness gates", func(k serviceKey) (time.Duration, error) {
		again, err := p.checkGates(ctx, k)
		if again {
			return p.opts.GateRecheck, err
		}
		return 0, err
	})
}

// checkGates passes the gates of Service k's pods that are healthy
// targets; again is true while some still wait.
func (p *Pools) checkGates(ctx context.Context, k serviceKey) (again bool, err error) {
	gate := podtargets.Gate(k.name)
	waiting, err := p.waiting(k.namespace, gate)
	if err != nil || len(waiting) == 0 {
		return false, err
	}
	pools := p.poolsOf(k)
	if len(pools) == 0 {
		if wait := p.untargetedIn(); wait > 0 {
			p.gates.AddAfter(k, wait)
			return false, nil
		}
		for _, pod := range waiting {
			if err := p.pass(ctx, pod, gate, "NotTargeted", "no load balancer forwards to Service "+k.name+" with pod targets"); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	health := map[string]string{} // "pool/target" -> health
	for _, st := range pools {
		h, err := p.cloud.TargetPoolHealth(ctx, st.id)
		if err != nil {
			return false, fmt.Errorf("target health of the pool of port %s (%s): %w", st.port, st.id, err)
		}
		for _, t := range h.Targets {
			health[st.id+"/"+t.ID] = t.Health
		}
	}
	for _, pod := range waiting {
		ok, why := healthyTarget(pod, pools, health)
		if !ok {
			klog.V(4).InfoS("Readiness gate waits", "pod", klog.KObj(pod), "why", why)
			again = true
			continue
		}
		if err := p.pass(ctx, pod, gate, "HealthyTarget", why); err != nil {
			return false, err
		}
	}
	return again, nil
}

// untargetedIn is how long until a Service no load balancer forwards to
// is known to be one (NotTargetedGrace after the start); 0: it is.
func (p *Pools) untargetedIn() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(p.started.Add(p.opts.NotTargetedGrace).Sub(p.now()), 0)
}

// applied is a pool's applied id and targets, as the gates read them.
type applied struct {
	port    string
	id      string
	targets []string
}

// poolsOf are the applied pools of Service k that load balancers use.
func (p *Pools) poolsOf(k serviceKey) []applied {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []applied
	for _, st := range p.pools {
		if st.port.Namespace == k.namespace && st.port.Service == k.name && len(st.users) > 0 && st.id != "" && !st.stale {
			out = append(out, applied{port: fmt.Sprintf("%d/%s", st.port.Port, protocol(st.port.Protocol)), id: st.id, targets: st.targets})
		}
	}
	slices.SortFunc(out, func(a, b applied) int { return strings.Compare(a.port, b.port) })
	return out
}

// healthyTarget tells whether pod is a target of every pool, healthy in
// each (health by "pool/target"), and says why or why not.
func healthyTarget(pod *corev1.Pod, pools []applied, health map[string]string) (bool, string) {
	ips := map[netip.Addr]bool{}
	for _, ip := range pod.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			ips[a] = true
		}
	}
	var of []string
	for _, pl := range pools {
		mine := slices.DeleteFunc(slices.Clone(pl.targets), func(t string) bool {
			ap, err := exampleapi.ParseIPTarget(t)
			return err != nil || !ips[ap.Addr()]
		})
		if len(mine) == 0 {
			return false, "not a target of the pool of port " + pl.port + " yet"
		}
		for _, t := range mine {
			if h := health[pl.id+"/"+t]; h != exampleapi.TargetHealthy {
				return false, fmt.Sprintf("target %s of the pool of port %s is %s", t, pl.port, orUnknown(h))
			}
		}
		of = append(of, pl.port)
	}
	return true, "a healthy target of every load balancer forwarding to port(s) " + strings.Join(of, ", ")
}

func orUnknown(h string) string {
	if h == "" {
		return "not reported"
	}
	return h
}

// waiting are the pods of namespace whose gate is not passed yet.
func (p *Pools) waiting(namespace string, gate corev1.PodConditionType) ([]*corev1.Pod, error) {
	objs, err := p.pods.ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, o := range objs {
		pod, ok := o.(*corev1.Pod)
		if !ok || pod.DeletionTimestamp != nil || !running(pod) || !hasGate(pod, gate) || passed(pod, gate) {
			continue
		}
		out = append(out, pod)
	}
	return out, nil
}

func hasGate(pod *corev1.Pod, gate corev1.PodConditionType) bool {
	return slices.ContainsFunc(pod.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool { return g.ConditionType == gate })
}

func passed(pod *corev1.Pod, gate corev1.PodConditionType) bool {
	return slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == gate && c.Status == corev1.ConditionTrue
	})
}

// pass sets pod's gate condition true (a strategic merge of its status'
// conditions, by type).
func (p *Pools) pass(ctx context.Context, pod *corev1.Pod, gate corev1.PodConditionType, reason, message string) error {
	body, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: gate, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.Now(),
	}}}})
	if err != nil {
		return err
	}
	_, err = p.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "status")
	if err = ignoreGone(err); err == nil {
		klog.V(2).InfoS("Readiness gate passed", "pod", klog.KObj(pod), "gate", gate, "reason", reason)
	}
	return err
}
