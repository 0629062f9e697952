package renderer

import (
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/objectref"
)

// Retained renders the root module that hands a Service's load balancer
// over (deletion policy Retain): a removed block with destroy = false for
// each module call of the Service's root module, so that applying it
// makes the state forget the load balancer and its certificates while the
// cloud keeps them. A removed block of a module the state does not hold
// plans nothing. Terraform 1.7 and OpenTofu 1.10 read it.
func Retained(svc *corev1.Service, cfg Config) (_ *Module, err error) {
	if svc == nil {
		return nil, errors.New("render retained load balancer: nil Service")
	}
	defer wrap(&err, "render the hand-over of %s", objectref.Service(svc).Describe())
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	who := objectref.Service(svc).Describe()
	if svc.UID != "" {
		who += fmt.Sprintf(" (uid %s)", svc.UID)
	}
	r, err := newRoot(cfg, heading{about: who,
		notes:   []string{"Its deletion policy is Retain: this plan forgets its load balancer and certificates, the cloud keeps them."},
		rewrite: "the Service changes"}.lines())
	if err != nil {
		return nil, err
	}
	for _, call := range []string{CertificatesModuleName, LoadBalancerModuleName} {
		r.body.AppendNewline()
		removed := r.body.AppendNewBlock("removed", nil).Body()
		removed.SetAttributeTraversal("from", hcl.Traversal{hcl.TraverseRoot{Name: "module"}, hcl.TraverseAttr{Name: call}})
		removed.AppendNewline()
		removed.AppendNewBlock("lifecycle", nil).Body().SetAttributeValue("destroy", cty.False)
	}
	return newModule(r.bytes(), nil), nil
}
