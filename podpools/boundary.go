package podpools

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/tenancy"
)

// byIP indexes pods by their IPs.
const byIP = "ip"

func podIPs(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	var out []string
	for _, ip := range pod.Status.PodIPs {
		out = append(out, ip.IP)
	}
	if len(out) == 0 && pod.Status.PodIP != "" {
		out = append(out, pod.Status.PodIP)
	}
	return out, nil
}

// running tells whether pod holds its IP: a pod that ended gave it back.
func running(pod *corev1.Pod) bool {
	return pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// podsAt are the running pods that hold ip (a pod that ended gave it
// back).
func (p *Pools) podsAt(ip string) ([]*corev1.Pod, error) {
	objs, err := p.pods.ByIndex(byIP, ip)
	if err != nil {
		return nil, err
	}
	var out []*corev1.Pod
	for _, o := range objs {
		if pod, ok := o.(*corev1.Pod); ok && running(pod) {
			out = append(out, pod)
		}
	}
	return out, nil
}

// podAt is the boundary's source (tenancy.Sources.PodAt): the pod that
// holds ip. Host-network pods share their node's IP with each other, so
// any such pod at ip makes it a host's; pods of two namespaces at one IP
// make it nobody's.
func (p *Pools) podAt(_ context.Context, ip string) (tenancy.PodAddress, bool, error) {
	pods, err := p.podsAt(ip)
	if err != nil {
		return tenancy.PodAddress{}, false, err
	}
	var found *corev1.Pod
	for _, pod := range pods {
		if pod.Spec.HostNetwork {
			return tenancy.PodAddress{Namespace: pod.Namespace, HostNetwork: true}, true, nil
		}
		if found != nil && found.Namespace != pod.Namespace {
			// Two namespaces' pods claim it (one ended, its status not
			// written yet): nobody's until that settles.
			return tenancy.PodAddress{}, false, nil
		}
		found = pod
	}
	if found == nil {
		return tenancy.PodAddress{}, false, nil
	}
	return tenancy.PodAddress{Namespace: found.Namespace}, true, nil
}

// podIn is the running pod of namespace at ip (podtargets.Source.Pod).
func (p *Pools) podIn(namespace string) func(ip string) (*corev1.Pod, bool) {
	return func(ip string) (*corev1.Pod, bool) {
		pods, _ := p.podsAt(ip)
		for _, pod := range pods {
			if pod.Namespace == namespace && !pod.Spec.HostNetwork {
				return pod, true
			}
		}
		return nil, false
	}
}
