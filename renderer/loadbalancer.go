package renderer

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/servicemodel"
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

// ServiceLoadBalancer renders the root module of a Service's own load
// balancer from its description (servicemodel.Translate): its listeners,
// health check, source ranges and targets or target pool (or, to its
// pods, its listeners' rules); its
// certificates' module when it serves TLS Secrets, an import block when
// it adopts a load balancer. It reads nothing of the Service, does no
// I/O, and identical descriptions render byte-identical files.
func ServiceLoadBalancer(lb lbmodel.LoadBalancer, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render %s", lb.Ref().Describe())
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	if lb.Kind != objectref.KindService {
		return nil, fmt.Errorf("a load balancer for a %s, not a Service", lb.Ref().Kind)
	}
	if err := lb.Validate(); err != nil {
		return nil, err
	}
	r, err := ownLoadBalancerRoot(cfg, lb.Ref().Describe(), lb.UID, "the Service or its nodes change")
	if err != nil {
		return nil, err
	}
	if lb.AdoptID != "" {
		r.body.AppendNewline()
		r.body.AppendUnstructuredTokens(commentTokens(
			fmt.Sprintf("Adopts the existing load balancer (annotation %s).", annotations.LBAdoptID)))
		imp := r.body.AppendNewBlock("import", nil).Body()
		imp.SetAttributeTraversal("to", importTarget())
		imp.SetAttributeValue("id", ctyString(lb.AdoptID))
	}
	// Target type ip: each listener's rule forwards to its pods' pool.
	if err := r.loadBalancer(lb, cfg, rulesInput(lb.Rules)); err != nil {
		return nil, err
	}
	if d := lb.DeregistrationDelay; d != nil {
		r.delayOutput(&d.Duration)
	}
	return newModule(r.bytes(), lb.Warnings), nil
}

// loadBalancer renders lb's certificates' module when it has
// certificates, its load balancer's module call (rules, when set, after
// its listeners) and outputs.
func (r *root) loadBalancer(lb lbmodel.LoadBalancer, cfg Config, rules *input) error {
	if len(lb.Certificates) > 0 {
		r.tlsKeys(slices.Sorted(maps.Keys(lb.Certificates)))
		if err := r.moduleCall(CertificatesModuleName, cfg.CertificatesModule, certificatesInputs(lb.Certificates, lb.Region, lb.Tags)); err != nil {
			return err
		}
	}
	in := loadBalancerInputs(lb)
	if rules != nil {
		in = slices.Insert(in, slices.IndexFunc(in, func(i input) bool { return i.name == "listeners" })+1, *rules)
	}
	if err := r.moduleCall(LoadBalancerModuleName, cfg.LoadBalancerModule, in); err != nil {
		return err
	}
	r.outputs(LoadBalancerModuleName, loadBalancerOutputs)
	return nil
}

// rulesInput is the module's rules input, nil without rules.
func rulesInput(rules []lbmodel.Rule) *input {
	if len(rules) == 0 {
		return nil
	}
	return &input{name: "rules", value: rulesValue(rules)}
}

// LoadBalancer renders the root module of one Service of type
// LoadBalancer, for callers without an engine (examplectl render, tests):
// its translation (servicemodel.Translate, under cfg.Service()) rendered
// by ServiceLoadBalancer.
func LoadBalancer(in *annotations.Service, nodes []*corev1.Node, cfg Config) (*Module, error) {
	return translated(in, nodes, nil, cfg)
}

// LoadBalancerOnPods is LoadBalancer for a Service of target type ip,
// its listeners' rules forwarding to the pod pools pods names.
func LoadBalancerOnPods(in *annotations.Service, pods map[lbmodel.ServicePort]string, cfg Config) (*Module, error) {
	return translated(in, nil, pods, cfg)
}

func translated(in *annotations.Service, nodes []*corev1.Node, pods map[lbmodel.ServicePort]string, cfg Config) (_ *Module, err error) {
	if in == nil || in.Service == nil {
		return nil, errors.New("render service: nil Service")
	}
	if _, err := cfg.withDefaults(); err != nil {
		return nil, fmt.Errorf("render %s: %w", objectref.Service(in.Service).Describe(), err)
	}
	lb, err := servicemodel.Translate(in, nodes, cfg.Service())
	if err == nil && len(lb.PodPorts()) > 0 {
		err = lb.SetPodPools(pods)
	}
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", objectref.Service(in.Service).Describe(), err)
	}
	return ServiceLoadBalancer(lb, cfg)
}

func importTarget() hcl.Traversal {
	return hcl.Traversal{
		hcl.TraverseRoot{Name: "module"},
		hcl.TraverseAttr{Name: LoadBalancerModuleName},
		hcl.TraverseAttr{Name: LoadBalancerType},
		hcl.TraverseAttr{Name: "this"},
	}
}

// CloudName is a Service's load balancer's cloud name
// (servicemodel.CloudName).
func CloudName(svc *corev1.Service, ann annotations.LoadBalancer, clusterID string) string {
	return servicemodel.CloudName(svc, ann, clusterID)
}

// LoadBalancerName is the cloud name of a Service's load balancer when the
// name annotation is unset (servicemodel.LoadBalancerName).
func LoadBalancerName(svc *corev1.Service, clusterID string) string {
	return servicemodel.LoadBalancerName(svc, clusterID)
}
