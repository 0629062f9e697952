package servicelb

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// fakeCloud is the cloud as servicelb reads it (cloudReader), in unit
// tests only: its reserved addresses, load balancers and certificates,
// filtered as the API filters them.
type fakeCloud struct {
	addresses    []exampleapi.Address
	lbs          []exampleapi.LoadBalancer
	certificates []exampleapi.Certificate
}

var _ cloudReader = (*fakeCloud)(nil)

// byID is the element of xs whose id is id, else the API's not found.
func byID[T any](xs []T, id string, idOf func(*T) string) (*T, error) {
	for i := range xs {
		if idOf(&xs[i]) == id {
			return &xs[i], nil
		}
	}
	return nil, &exampleapi.APIError{StatusCode: http.StatusNotFound}
}

func (c *fakeCloud) GetAddress(_ context.Context, id string) (*exampleapi.Address, error) {
	return byID(c.addresses, id, func(a *exampleapi.Address) string { return a.ID })
}
func (c *fakeCloud) ListAddresses(_ context.Context, f exampleapi.AddressFilter) ([]exampleapi.Address, error) {
	var out []exampleapi.Address
	for _, a := range c.addresses {
		if (f.Name == "" || a.Name == f.Name) && (f.IP == "" || a.IP == f.IP) && (f.Region == "" || a.Region == f.Region) {
			out = append(out, a)
		}
	}
	return out, nil
}
func (c *fakeCloud) GetLoadBalancer(_ context.Context, id string) (*exampleapi.LoadBalancer, error) {
	return byID(c.lbs, id, func(lb *exampleapi.LoadBalancer) string { return lb.ID })
}
func (c *fakeCloud) ListLoadBalancers(_ context.Context, f exampleapi.LoadBalancerFilter) ([]exampleapi.LoadBalancer, error) {
	var out []exampleapi.LoadBalancer
	for _, lb := range c.lbs {
		if (f.Name == "" || lb.Name == f.Name) && (f.Region == "" || lb.Region == f.Region) {
			out = append(out, lb)
		}
	}
	return out, nil
}
func (c *fakeCloud) GetCertificate(_ context.Context, id string) (*exampleapi.Certificate, error) {
	return byID(c.certificates, id, func(cert *exampleapi.Certificate) string { return cert.ID })
}

// serve puts svc's own load balancer in the cloud, active on ip and
// tagged as the engine tags it (named as fakeLBEngine names it), and
// returns it as the engine reports it.
func (c *fakeCloud) serve(cfg *cloudconfig.Config, svc *v1.Service, id, ip string) *engine.LoadBalancer {
	c.lbs = append(c.lbs, exampleapi.LoadBalancer{ID: id, Status: exampleapi.LBStatusActive, IPv4: ip,
		LoadBalancerSpec: exampleapi.LoadBalancerSpec{Name: svc.Name, Region: cfg.Region,
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: lbmodel.OwnerTags(cfg.ClusterID, objectref.Service(svc), lbmodel.TagServiceName)}}})
	return &engine.LoadBalancer{ID: id, Status: "active", IPv4: ip}
}

// address is the cloud's address named name, nil if none.
func (c *fakeCloud) address(name string) *exampleapi.Address {
	for i := range c.addresses {
		if c.addresses[i].Name == name {
			return &c.addresses[i]
		}
	}
	return nil
}

// fakeAddressEngine is the workspaces of the reserved addresses
// (addressEngine, but the load balancer's methods: fakeLBEngine's). It
// applies as the engine would, to cloud: a new address reserved with the
// cluster's and its namespace's tags, then attached to the load balancer
// asked. A change under another policy than auto waits for an approval
// that never comes (none is given in these tests).
type fakeAddressEngine struct {
	cfg   *cloudconfig.Config
	cloud *fakeCloud
	// held are the workspaces (namespace/name) that keep an address.
	held map[string]bool
	// asked are the reconciles asked, in order; retained the workspaces
	// forgotten (a hand-over).
	asked    []addressAsk
	retained []string
	// released are the releases asked (their policies); approved lets
	// the next one apply, a release's approval; waiting is the release
	// waiting, withdrawn those withdrawn.
	released  []annotations.ApplyPolicy
	approved  bool
	waiting   *engine.Plan
	withdrawn []string
}

// addressAsk is a reconcile of an address's workspace: what it was to
// converge to, under which policy.
type addressAsk struct {
	spec   engine.AddressSpec
	policy annotations.ApplyPolicy
}

func (e *fakeAddressEngine) ReservedAddressName(svc *v1.Service) string {
	return svc.Namespace + "-" + svc.Name
}
func (e *fakeAddressEngine) GetAddress(_ context.Context, ns, name string) (*engine.Address, bool, error) {
	a := e.cloud.address(name)
	if a == nil || !e.held[ns+"/"+name] {
		return nil, false, nil
	}
	return &engine.Address{ID: a.ID, IP: a.IP, LoadBalancerID: a.LoadBalancerID}, true, nil
}
func (e *fakeAddressEngine) RenderAddress(a engine.AddressSpec) (*engine.Module, engine.Job, error) {
	return nil, engine.Job{Key: e.workspace(a.Namespace, a.Name)}, nil
}
func (e *fakeAddressEngine) ReconcileAddress(_ context.Context, a engine.AddressSpec, rv engine.Review) (*engine.Address, *engine.Outcome, error) {
	e.asked = append(e.asked, addressAsk{spec: a, policy: rv.Policy})
	out := &engine.Outcome{Workspace: e.workspace(a.Namespace, a.Name), Policy: rv.Policy}
	cur := e.cloud.address(a.Name)
	if cur == nil || cur.LoadBalancerID != a.LoadBalancerID {
		plan := &engine.Plan{ID: fmt.Sprintf("plan-%d", len(e.asked)), HasChanges: true}
		if rv.Policy != annotations.ApplyAuto {
			out.Planned, out.Awaiting = plan, plan
			return nil, out, &engine.AwaitingApprovalError{PlanID: plan.ID, Policy: rv.Policy}
		}
		out.Planned, out.Applied = plan, plan
	}
	if cur == nil {
		n := len(e.cloud.addresses) + 1
		e.cloud.addresses = append(e.cloud.addresses, exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: fmt.Sprintf("addr-%d", n), Name: a.Name, Region: e.cfg.Region},
			Family: a.FamilyOrDefault(), IP: fmt.Sprintf("198.51.100.%d", n),
			Tags: map[string]string{lbmodel.TagManagedBy: lbmodel.ManagedBy, lbmodel.TagClusterID: e.cfg.ClusterID, exampleapi.TagNamespace: a.Namespace}})
		cur = &e.cloud.addresses[n-1]
	}
	cur.LoadBalancerID = a.LoadBalancerID
	if e.held == nil {
		e.held = map[string]bool{}
	}
	e.held[a.Namespace+"/"+a.Name] = true
	out.Result = &engine.Result{}
	return &engine.Address{ID: cur.ID, IP: cur.IP, LoadBalancerID: cur.LoadBalancerID, Holder: a.Holder}, out, nil
}
func (e *fakeAddressEngine) RetainAddress(_ context.Context, ns, name string, rv engine.Review) (*engine.Outcome, error) {
	delete(e.held, ns+"/"+name)
	e.retained = append(e.retained, ns+"/"+name)
	return &engine.Outcome{Workspace: e.workspace(ns, name), Policy: rv.Policy, Result: &engine.Result{}}, nil
}

func (e *fakeAddressEngine) ReleaseAddress(_ context.Context, ns, name string, rv engine.Review) (*engine.Outcome, error) {
	e.released = append(e.released, rv.Policy)
	destroy := &engine.Plan{ID: "plan-release", Destroy: true, HasChanges: true}
	out := &engine.Outcome{Workspace: e.workspace(ns, name), Policy: rv.Policy, Planned: destroy}
	if !e.approved {
		out.Awaiting, e.waiting = destroy, destroy
		return out, &engine.AwaitingApprovalError{PlanID: destroy.ID, Policy: rv.Policy}
	}
	e.waiting = nil
	e.cloud.addresses = slices.DeleteFunc(e.cloud.addresses, func(a exampleapi.Address) bool { return a.Name == name })
	delete(e.held, ns+"/"+name)
	out.Applied, out.Result = destroy, &engine.Result{}
	return out, nil
}

func (e *fakeAddressEngine) WithdrawRelease(_ context.Context, ns, name string) (*engine.Outcome, error) {
	e.withdrawn = append(e.withdrawn, ns+"/"+name)
	out := &engine.Outcome{Workspace: e.workspace(ns, name), Superseded: e.waiting}
	e.waiting = nil
	return out, nil
}

func (e *fakeAddressEngine) workspace(ns, name string) string {
	return "prod-address-" + ns + "-" + name
}
