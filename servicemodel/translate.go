package servicemodel

import (
	"cmp"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Config is what the cluster's config and the engine decide of a
// Service's load balancer besides the Service.
type Config struct {
	// ClusterID names the cluster in the load balancer's name and tags;
	// Region is where it is (nodes of other regions are skipped).
	ClusterID string `json:"clusterID"`
	Region    string `json:"region"`
	// DefaultType and DefaultAlgorithm are for a Service without the
	// type and algorithm annotations.
	DefaultType      string `json:"defaultType,omitempty"`
	DefaultAlgorithm string `json:"defaultAlgorithm,omitempty"`
	// MaxListeners caps a Service's ports (0: the cloud's own limit).
	MaxListeners int `json:"maxListeners,omitempty"`
	// TargetPoolID makes the load balancer forward to this target pool
	// instead of listing the nodes.
	TargetPoolID string `json:"targetPoolID,omitempty"`
	// Certificates are the certificate chains of the TLS Secrets the
	// tls-secrets annotation names, by Secret name; a named Secret missing
	// here is an error.
	Certificates map[string]string `json:"certificates,omitempty"`
	// SkipTLSSecrets translates the Service as if it named no TLS Secret
	// (no certificates, its http and https ports as tcp): for a destroy or
	// a read of its outputs, which must not depend on Secrets that may be
	// gone.
	SkipTLSSecrets bool `json:"skipTLSSecrets,omitempty"`
}

func (c Config) maxListeners() int { return cmp.Or(c.MaxListeners, exampleapi.MaxListeners) }

// Translate is in's load balancer under cfg, with what it skipped or
// adjusted in its Warnings. The result passes its own Validate.
func Translate(in *annotations.Service, nodes []*corev1.Node, cfg Config) (lbmodel.LoadBalancer, error) {
	if in == nil || in.Service == nil {
		return lbmodel.LoadBalancer{}, errors.New("nil Service")
	}
	svc, ann := in.Service, in.LB
	if err := checkType(svc); err != nil {
		return lbmodel.LoadBalancer{}, err
	}
	if in.Err != nil {
		return lbmodel.LoadBalancer{}, in.Err
	}
	return translate(svc, ann, nodes, cfg)
}

// TranslateMember is a load balancer group member's own load balancer,
// from its annotations as ann parsed them (a member's address is the
// group's, so spec.loadBalancerIP is not read).
func TranslateMember(svc *corev1.Service, ann annotations.LoadBalancer, nodes []*corev1.Node, cfg Config) (lbmodel.LoadBalancer, error) {
	if err := checkType(svc); err != nil {
		return lbmodel.LoadBalancer{}, err
	}
	return translate(svc, ann, nodes, cfg)
}

func translate(svc *corev1.Service, ann annotations.LoadBalancer, nodes []*corev1.Node, cfg Config) (lbmodel.LoadBalancer, error) {
	ref := objectref.Service(svc)
	lb := lbmodel.LoadBalancer{
		Kind: objectref.KindService, Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID),
		CloudName: CloudName(svc, ann, cfg.ClusterID),
		Region:    cfg.Region,
		Type:      cmp.Or(ann.Type, cfg.DefaultType, annotations.DefaultType),
		Internal:  ann.Internal,
		Algorithm: cmp.Or(ann.Algorithm, cfg.DefaultAlgorithm, annotations.DefaultAlgorithm),
		IPFamily:  ipFamily(svc),
		Tags:      lbmodel.OwnerTags(cfg.ClusterID, ref, lbmodel.TagServiceName),
		AdoptID:   ann.AdoptID,
	}
	if d := ann.DeregistrationDelay; d != nil {
		lb.DeregistrationDelay = &metav1.Duration{Duration: *d}
	}
	if len(svc.Spec.Ports) > cfg.maxListeners() {
		return lb, &TooManyListenersError{Ports: len(svc.Spec.Ports), Limit: cfg.maxListeners()}
	}
	if cfg.SkipTLSSecrets {
		ann = withoutTLSSecrets(ann)
	}
	var err error
	if lb.Listeners, err = listeners(svc, ann); err != nil {
		return lb, err
	}
	if len(ann.TLSSecrets) > 0 {
		if lb.Certificates, err = certificatesFor(svc, ann.TLSSecrets, cfg); err != nil {
			return lb, err
		}
	}
	if lb.HealthCheck, err = healthCheckFor(svc, lb.Listeners, ann); err != nil {
		return lb, err
	}
	var w []string
	if lb.SourceCIDRs, w, err = sourceCIDRs(svc, ann); err != nil {
		return lb, err
	}
	lb.Warnings = append(lb.Warnings, w...)
	if fs := svc.Spec.IPFamilies; slices.Contains(fs, corev1.IPv6Protocol) && !slices.Contains(fs, corev1.IPv4Protocol) {
		lb.Warnings = append(lb.Warnings, "spec.ipFamilies is IPv6 only: the load balancer is dualstack (it has no IPv6-only mode) and also gets an IPv4 address")
	}
	switch {
	case ann.Pods():
		if lb.Rules, err = podRules(svc, lb.Listeners); err != nil {
			return lb, err
		}
	case cfg.TargetPoolID != "":
		lb.TargetPoolID = cfg.TargetPoolID // the pool holds the nodes
	default:
		lb.Targets, w = lbmodel.InstanceIDs(lbmodel.PickNodes(nodes, ann.NodeSelector, cfg.Region))
		lb.Warnings = append(lb.Warnings, w...)
	}
	return lb, lb.Validate()
}

// Check refuses a Service its load balancer cannot be translated for
// (its type, ports, protocols, annotations), before anything else is done
// for it; Translate checks the same, and more (certificates, ranges).
func Check(in *annotations.Service, cfg Config) error {
	svc := in.Service
	if err := checkType(svc); err != nil {
		return err
	}
	if in.Err != nil {
		return in.Err
	}
	if len(svc.Spec.Ports) > cfg.maxListeners() {
		return &TooManyListenersError{Ports: len(svc.Spec.Ports), Limit: cfg.maxListeners()}
	}
	_, err := listeners(svc, in.LB)
	return err
}

func checkType(svc *corev1.Service) error {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return &lbmodel.InputError{Field: "spec.type", Value: string(svc.Spec.Type), Reason: "is not LoadBalancer"}
	}
	return nil
}

// ipFamily is the load balancer's: dualstack for any IPv6 family (the
// cloud has no IPv6-only mode), else ipv4.
func ipFamily(svc *corev1.Service) string {
	if slices.Contains(svc.Spec.IPFamilies, corev1.IPv6Protocol) {
		return exampleapi.IPFamilyDualStack
	}
	return exampleapi.IPFamilyIPv4
}

// CloudName is the one decision of a Service's load balancer's cloud
// name: the name annotation's, else LoadBalancerName.
func CloudName(svc *corev1.Service, ann annotations.LoadBalancer, clusterID string) string {
	return cmp.Or(ann.Name, LoadBalancerName(svc, clusterID))
}

// LoadBalancerName is the cloud name of a Service's load balancer when the
// name annotation is unset: k8s- and 28 hex digits of a hash of the cluster
// id and the Service UID (32 characters, stable for the Service's life,
// distinct across clusters sharing a region). A Service without a UID (a
// manifest rendered offline) hashes its namespace/name instead.
func LoadBalancerName(svc *corev1.Service, clusterID string) string {
	return objectref.HashedName("k8s-", 28, clusterID, objectref.Service(svc).HashSeed())
}

// OwnerTags are the owner tags svc's load balancer carries: another value
// for one of them means another cluster's or Service's.
func OwnerTags(svc *corev1.Service, clusterID string) map[string]string {
	return map[string]string{lbmodel.TagClusterID: clusterID, lbmodel.TagServiceUID: objectref.Service(svc).OwnerTag()}
}
