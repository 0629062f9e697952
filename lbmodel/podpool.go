package lbmodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// PodPool is the pod targets of one Service port: a target pool of type
// ip in a workspace of its own, which load balancers' rules forward to
// with port 0 (docs/adr/0024-pod-targets.md). Which pods it holds is
// package podtargets' decision.
type PodPool struct {
	ServicePort
	// Targets are IP:port (exampleapi.IPTarget).
	Targets []string
	// Delay is how long a pod leaving it keeps its connections: its
	// Service's deregistration-delay annotation; nil: the cluster's.
	Delay *time.Duration
}

// ServicePort is a port of a Service: a backend forwarding to its pods
// directly names it (Backend.Pods), and its pod pool stands for it.
type ServicePort struct {
	Namespace string          `json:"namespace"`
	Service   string          `json:"service"`
	Port      int32           `json:"port"`
	Protocol  corev1.Protocol `json:"protocol,omitempty"`
}

// Ref is the identity of the port's pod pool.
func (s ServicePort) Ref() objectref.Ref {
	return objectref.PodPool(s.Namespace, s.Service, s.Port, s.Protocol)
}

// Tag is the port as TagServicePort names it: "80/TCP".
func (s ServicePort) Tag() string {
	return fmt.Sprintf("%d/%s", s.Port, cmpOr(s.Protocol, corev1.ProtocolTCP))
}

// PodPoolPort is the Service port a target pool of the cloud stands for,
// by its tags: a pod pool of this controller in cluster clusterID, else
// false.
func PodPoolPort(tags map[string]string, clusterID string) (ServicePort, bool) {
	if tags[TagManagedBy] != ManagedBy || tags[TagClusterID] != clusterID || tags[TagServiceNamespace] == "" || tags[TagServiceName] == "" {
		return ServicePort{}, false
	}
	num, proto, ok := strings.Cut(tags[TagServicePort], "/")
	port, err := strconv.ParseInt(num, 10, 32)
	if !ok || err != nil || port < 1 || port > 65535 || (proto != string(corev1.ProtocolTCP) && proto != string(corev1.ProtocolUDP)) {
		return ServicePort{}, false
	}
	return ServicePort{Namespace: tags[TagServiceNamespace], Service: tags[TagServiceName], Port: int32(port), Protocol: corev1.Protocol(proto)}, true
}

func (s ServicePort) String() string {
	return fmt.Sprintf("Service %s/%s port %d/%s", s.Namespace, s.Service, s.Port, cmpOr(s.Protocol, corev1.ProtocolTCP))
}

func cmpOr(p, def corev1.Protocol) corev1.Protocol {
	if p == "" {
		return def
	}
	return p
}

// Validate refuses a pod pool the cloud could not hold.
func (p PodPool) Validate() error {
	switch {
	case p.Namespace == "" || p.Service == "":
		return &InputError{Field: "service", Value: p.Namespace + "/" + p.Service, Reason: "is required: a pod pool is a Service port's"}
	case p.Port < 1 || p.Port > 65535:
		return &InputError{Field: "port", Value: fmt.Sprint(p.Port), Reason: "is not 1-65535"}
	case len(p.Targets) > exampleapi.MaxTargets:
		return &InputError{Field: "targets", Value: fmt.Sprint(len(p.Targets)), Reason: fmt.Sprintf("are more than %d", exampleapi.MaxTargets)}
	}
	for _, t := range p.Targets {
		if _, err := exampleapi.ParseIPTarget(t); err != nil {
			return &InputError{Field: "targets", Value: t, Reason: err.Error()}
		}
	}
	if p.Delay != nil {
		return CheckDelay(*p.Delay)
	}
	return nil
}

// PodPorts are the Service ports lb's rules forward to directly, each
// once, in the order they first appear.
func (lb LoadBalancer) PodPorts() []ServicePort {
	var out []ServicePort
	for _, r := range lb.Rules {
		for _, b := range r.Backends {
			if b.Pods != nil && !slices.Contains(out, *b.Pods) {
				out = append(out, *b.Pods)
			}
		}
	}
	return out
}

// SetPodPools gives every backend of lb that forwards to a Service port's
// pods its pod pool's id from ids, at port 0; a port without one is an
// error naming it.
func (lb *LoadBalancer) SetPodPools(ids map[ServicePort]string) error {
	for i := range lb.Rules {
		for j := range lb.Rules[i].Backends {
			b := &lb.Rules[i].Backends[j]
			if b.Pods == nil {
				continue
			}
			if b.TargetPoolID = ids[*b.Pods]; b.TargetPoolID == "" {
				return fmt.Errorf("no pod pool for %s", b.Pods)
			}
			b.Port = 0
		}
	}
	return nil
}
