package renderer

import (
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Retained renders the root module that hands a Service's load balancer
// over (deletion policy retain): a removed block with destroy = false for
// each module call of the Service's root module, so that applying it
// makes the state forget the load balancer and its certificates while the
// cloud keeps them. A removed block of a module the state does not hold
// plans nothing. Terraform 1.7 and OpenTofu 1.10 read it.
func Retained(svc *corev1.Service, cfg Config) (_ *Module, err error) {
	if svc == nil {
		return nil, errors.New("render retained load balancer: nil Service")
	}
	defer wrap(&err, "render the hand-over of %s", objectref.Service(svc).Describe())
	who := objectref.Service(svc).Describe()
	if svc.UID != "" {
		who += fmt.Sprintf(" (uid %s)", svc.UID)
	}
	return retained(cfg, heading{about: who,
		notes:   []string{"Its deletion policy is Retain: this plan forgets its load balancer and certificates, the cloud keeps them."},
		rewrite: "the Service changes"}, CertificatesModuleName, LoadBalancerModuleName)
}

// RetainedAddress renders the root module that hands reserved address a
// over with the load balancer holding it: its module call removed, the
// cloud keeping the address where it is.
func RetainedAddress(a lbmodel.Address, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render the hand-over of address %s/%s", a.Namespace, a.Name)
	return retained(cfg, heading{about: fmt.Sprintf("address %s of namespace %s", a.Name, a.Namespace),
		notes:   []string{"Handed over with the load balancer holding it: this plan forgets it, the cloud keeps it."},
		rewrite: "the Service that holds the address changes"}, AddressModuleName)
}

func retained(cfg Config, h heading, calls ...string) (*Module, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r, err := newRoot(cfg, h.lines())
	if err != nil {
		return nil, err
	}
	for _, call := range calls {
		r.body.AppendNewline()
		removed := r.body.AppendNewBlock("removed", nil).Body()
		removed.SetAttributeTraversal("from", hcl.Traversal{hcl.TraverseRoot{Name: "module"}, hcl.TraverseAttr{Name: call}})
		removed.AppendNewline()
		removed.AppendNewBlock("lifecycle", nil).Body().SetAttributeValue("destroy", cty.False)
	}
	return newModule(r.bytes(), nil), nil
}
