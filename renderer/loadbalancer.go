package renderer

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// LoadBalancerModuleName is the module call in a Service's root module,
// LoadBalancerType its load balancer's resource type and LoadBalancerAddress
// that resource's address in the root module.
const (
	LoadBalancerModuleName = "load_balancer"
	LoadBalancerType       = "example_load_balancer"
	LoadBalancerAddress    = "module." + LoadBalancerModuleName + "." + LoadBalancerType + ".this"
)

var loadBalancerOutputs = []output{
	{"id", "Id of the load balancer (lb-...)."},
	{"ipv4", "IPv4 address of the load balancer."},
	{"ipv6", "IPv6 address of the load balancer (dual-stack only)."},
	{"hostname", "DNS name of the load balancer."},
	{"status", "provisioning, active or error."},
}

// LoadBalancer renders the root module of one Service of type
// LoadBalancer: its load balancer with listeners from the Service ports
// and the nodes as targets. It does no I/O; identical inputs render
// byte-identical files whatever the order of nodes and ports.
func LoadBalancer(in *annotations.Service, nodes []*corev1.Node, cfg Config) (_ *Module, err error) {
	if in == nil || in.Service == nil {
		return nil, errors.New("render service: nil Service")
	}
	svc := in.Service
	defer wrap(&err, "render %s", objectref.Service(svc).Describe())
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil, &lbmodel.InputError{Field: "spec.type", Value: string(svc.Spec.Type), Reason: "is not LoadBalancer"}
	}
	ann := in.LB
	if in.Err != nil {
		return nil, in.Err
	}
	spec, warnings, err := loadBalancerSpec(svc, nodes, ann, cfg)
	if err != nil {
		return nil, err
	}

	r, err := ownLoadBalancerRoot(cfg, objectref.Service(svc).Describe(), string(svc.UID), "the Service or its nodes change")
	if err != nil {
		return nil, err
	}
	if ann.AdoptID != "" {
		r.body.AppendNewline()
		r.body.AppendUnstructuredTokens(commentTokens(
			fmt.Sprintf("Adopts the existing load balancer (annotation %s).", annotations.LBAdoptID)))
		imp := r.body.AppendNewBlock("import", nil).Body()
		imp.SetAttributeTraversal("to", importTarget())
		imp.SetAttributeValue("id", ctyString(ann.AdoptID))
	}
	if len(spec.certificates) > 0 {
		r.tlsKeys(slices.Sorted(maps.Keys(spec.certificates)))
		if err := r.moduleCall(CertificatesModuleName, cfg.CertificatesModule, certificatesInputs(spec.certificates, spec.region, spec.tags)); err != nil {
			return nil, err
		}
	}
	if err := r.moduleCall(LoadBalancerModuleName, cfg.LoadBalancerModule, spec.inputs()); err != nil {
		return nil, err
	}
	r.outputs(LoadBalancerModuleName, loadBalancerOutputs)
	r.delayOutput(ann.DeregistrationDelay)
	return newModule(r.bytes(), warnings), nil
}

func importTarget() hcl.Traversal {
	return hcl.Traversal{
		hcl.TraverseRoot{Name: "module"},
		hcl.TraverseAttr{Name: LoadBalancerModuleName},
		hcl.TraverseAttr{Name: LoadBalancerType},
		hcl.TraverseAttr{Name: "this"},
	}
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
