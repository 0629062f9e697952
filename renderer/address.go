package renderer

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// AddressModuleName is the module call in an address's root module,
// AddressType the resource it holds and AddressResource that resource's
// address in the root module.
const (
	AddressModuleName          = "address"
	AddressType                = "example_address"
	AddressResource            = "module." + AddressModuleName + "." + AddressType + ".this"
	DefaultAddressModuleSource = "./modules/address"
)

// TagAddressNamespace, on a reserved address, is the namespace that owns
// it (docs/addresses.md): a Service of another namespace takes it only
// with that namespace's ReferenceGrant.
const TagAddressNamespace = exampleapi.TagNamespace

var addressOutputs = []output{
	{"id", "Id of the address (addr-...)."},
	{"ip", "The reserved IP: the holding load balancer's ipv4 (or ipv6)."},
	{"load_balancer_id", "The load balancer holding it; null when detached."},
}

// HolderOutput is the address root module's output naming, for people
// (examplectl addresses), who holds it: "Service shop/blue"; null when
// detached.
const HolderOutput = "holder"

// ReservedAddressName is the cloud name of the address the controller
// reserves for svc (address-keep naming none): k8s-a- and 26 hex digits
// of a hash of the cluster id and the Service UID, distinct from its load
// balancer's name and across clusters sharing a region.
func ReservedAddressName(svc *corev1.Service, clusterID string) string {
	return objectref.HashedName("k8s-a-", 26, clusterID, "address", objectref.Service(svc).HashSeed())
}

// AddressRoot renders the root module of one reserved address.
func AddressRoot(a lbmodel.Address, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render address %s/%s", a.Namespace, a.Name)
	if cfg, err = cfg.validFor(a); err != nil {
		return nil, err
	}
	held := "held by no load balancer: reserved, detached"
	if a.LoadBalancerID != "" {
		held = "held by load balancer " + a.LoadBalancerID
		if a.Holder != "" {
			held += " (" + a.Holder + ")"
		}
	}
	r, err := newModuleRoot(cfg, ModuleSource{Source: DefaultAddressModuleSource}, DefaultAddressModuleSource, heading{
		about:   fmt.Sprintf("address %s of namespace %s", a.Name, a.Namespace),
		notes:   []string{"It is " + held + "."},
		rewrite: "the Service that holds the address changes",
	})
	if err != nil {
		return nil, err
	}
	if a.ImportID != "" {
		r.body.AppendNewline()
		r.body.AppendUnstructuredTokens(commentTokens("Takes back the existing address of this namespace."))
		imp := r.body.AppendNewBlock("import", nil).Body()
		imp.SetAttributeTraversal("to", hcl.Traversal{
			hcl.TraverseRoot{Name: "module"}, hcl.TraverseAttr{Name: AddressModuleName},
			hcl.TraverseAttr{Name: AddressType}, hcl.TraverseAttr{Name: "this"},
		})
		imp.SetAttributeValue("id", cty.StringVal(a.ImportID))
	}
	lb := cty.NullVal(cty.String)
	if a.LoadBalancerID != "" {
		lb = cty.StringVal(a.LoadBalancerID)
	}
	inputs := []input{
		{name: "name", value: cty.StringVal(a.Name)},
		{name: "region", value: cty.StringVal(cfg.Region)},
		{name: "family", value: cty.StringVal(a.FamilyOrDefault())},
		{name: "load_balancer_id", value: lb},
		{name: "tags", value: stringMap(map[string]string{
			lbmodel.TagManagedBy: generator, lbmodel.TagClusterID: cfg.ClusterID, TagAddressNamespace: a.Namespace,
		})},
	}
	if err := r.moduleCall(AddressModuleName, ModuleSource{Source: DefaultAddressModuleSource}, inputs); err != nil {
		return nil, err
	}
	r.outputs(AddressModuleName, addressOutputs)
	r.body.AppendNewline()
	b := r.body.AppendNewBlock("output", []string{HolderOutput}).Body()
	b.SetAttributeValue("description", cty.StringVal("Who holds the address, for people; null when detached."))
	holder := cty.NullVal(cty.String)
	if a.LoadBalancerID != "" && a.Holder != "" {
		holder = cty.StringVal(a.Holder)
	}
	b.SetAttributeValue("value", holder)
	return newModule(r.bytes(), nil), nil
}
