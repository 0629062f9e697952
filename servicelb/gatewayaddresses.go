package servicelb

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/tenancy"
)

// A Gateway's static addresses (spec.addresses, docs/addresses.md#gateways)
// are reserved addresses taken as a Service's are: found in the cloud by
// IP or id, allowed by the one tenancy check (its namespace's, or granted
// to Gateways of its namespace), and attached through the address's own
// workspace under review. A Gateway takes only an address no load balancer
// holds: it never moves one from a Service, and the keeper never moves one
// from a Gateway (addresskeeper.go), each deciding under addresses.decide.

// gatewayAddressUse is a Gateway's use of reserved addresses with the
// review of its address plans: subject(ns, name) is that of reserved
// address ns/name's plan (the Gateway's: its events, its editors).
type gatewayAddressUse struct {
	lbmodel.AddressUse
	subject func(ns, name string) review.Subject
}

// AddressUsable says why Gateway gw cannot take reserved address ref (an
// IP or an address id) now, "" when it can; refused says the tenancy
// check refused it (not its namespace's, nor granted), which it must not
// go on holding either. The words name nothing of another namespace.
func (g *GatewayInfra) AddressUsable(ctx context.Context, gw objectref.Ref, ref string) (why string, refused bool, err error) {
	_, why, refused, err = g.addrs.usableBy(ctx, gw, ref)
	return why, refused, err
}

// HoldAddresses converges the reserved addresses of u's load balancer to
// u.Take and u.Keep, and returns the load balancer's addresses as the
// cloud has them then. While a plan waits for approval its error is an
// *engine.AwaitingApprovalError (or *engine.DeniedError).
func (g *GatewayInfra) HoldAddresses(ctx context.Context, u lbmodel.AddressUse, subject func(ns, name string) review.Subject) (ipv4, ipv6 string, err error) {
	return g.addrs.holdFor(ctx, gatewayAddressUse{u, subject})
}

// usableBy is the cloud's address ref for Gateway gw, or why gw cannot
// take it: refused by the tenancy check, not an address (a missing one is
// refused in the tenancy check's words), IPv6 (a Gateway's load balancer
// is IPv4 only), or held by another load balancer.
func (l *addresses) usableBy(ctx context.Context, gw objectref.Ref, ref string) (_ *exampleapi.Address, why string, refused bool, err error) {
	if l.api == nil || l.refs == nil {
		return nil, ref + ": this controller reads no reserved addresses (no Example API client)", false, nil
	}
	no, err := l.gatewayRefused(ctx, gw, ref)
	switch {
	case err != nil:
		return nil, "", false, err
	case no != "":
		return nil, ref + ": " + no, true, nil
	}
	a, err := l.findAddress(ctx, addressWant{Ref: ref})
	switch {
	case err != nil:
		return nil, "", false, err
	case a == nil: // gone since the check
		return nil, ref + ": no reserved address of region " + l.cfg.Region + " has it", false, nil
	case a.Family == exampleapi.AddressFamilyIPv6:
		return nil, ref + ": it is an IPv6 address, and a Gateway's load balancer is IPv4 only", false, nil
	case a.LoadBalancerID == "":
		return a, "", false, nil
	}
	lb, err := l.api.GetLoadBalancer(ctx, a.LoadBalancerID)
	switch {
	case exampleapi.IsNotFound(err):
	case err != nil:
		return nil, "", false, fmt.Errorf("read load balancer %s, which holds reserved address %s: %w", a.LoadBalancerID, a.ID, err)
	case l.ownedBy(lb, gw):
		return a, "", false, nil
	}
	// Whose it is stays unsaid: it may be another namespace's.
	return nil, ref + ": another load balancer holds it, and a Gateway takes a reserved address only when no load balancer holds it: its holder lets go of it first", false, nil
}

// gatewayRefused is why the tenancy check refuses Gateway gw reserved
// address ref, "" when it allows it.
func (l *addresses) gatewayRefused(ctx context.Context, gw objectref.Ref, ref string) (string, error) {
	return l.refs.authorizer.Refusal(ctx, gw, tenancy.Reference{Kind: tenancy.ReservedAddress, Name: ref})
}

// GatewayAddressNames is what the Gateway front-end tells of the reserved
// addresses its Gateways name: a release of one of them is refused while
// a Gateway names it, as while a Service does (releases.go).
type GatewayAddressNames interface {
	// NamedAddresses are the refs (IPs or ids) that each Gateway of the
	// front-end's classes names in spec.addresses; an error until its
	// Gateways are read.
	NamedAddresses() (map[objectref.Ref][]string, error)
}

// NamedBy lets the releases read the Gateways' addresses from n (the
// leader's front-end, once it runs).
func (g *GatewayInfra) NamedBy(n GatewayAddressNames) { g.addrs.named.Store(&n) }

// GatewaysComing says the Gateway front-end runs in this process once it
// leads: until NamedBy, a release is not decided (it is looked at again),
// rather than decided without the Gateways.
func (g *GatewayInfra) GatewaysComing() {
	var coming GatewayAddressNames = gatewaysComing{}
	g.addrs.named.CompareAndSwap(nil, &coming)
}

// gatewaysComing stands for the Gateway front-end until it runs.
type gatewaysComing struct{}

func (gatewaysComing) NamedAddresses() (map[objectref.Ref][]string, error) {
	return nil, errors.New("the Gateways' addresses are not read yet: the Gateway front-end has not started")
}

// gateways tells whether lb is a Gateway's load balancer of this cluster.
func (l *addresses) gateways(lb *exampleapi.LoadBalancer) bool {
	return lb.Tags[lbmodel.TagGatewayName] != "" && lb.Tags[lbmodel.TagClusterID] == l.cfg.ClusterID
}

// ownedBy tells whether lb is Gateway gw's load balancer.
func (l *addresses) ownedBy(lb *exampleapi.LoadBalancer, gw objectref.Ref) bool {
	return l.gateways(lb) && lb.Tags[lbmodel.TagServiceUID] == gw.OwnerTag()
}

// holdFor is HoldAddresses.
func (l *addresses) holdFor(ctx context.Context, u gatewayAddressUse) (string, string, error) {
	if l.api == nil {
		return u.IPv4, u.IPv6, nil
	}
	if u.Take == "" {
		// Most Gateways name none: nothing read, nothing waited for.
		if stale, err := l.staleFor(ctx, u); err != nil || !stale {
			return u.IPv4, u.IPv6, err
		}
	}
	l.decide.Lock()
	defer l.decide.Unlock()
	lbID, err := l.gatewayLoadBalancer(ctx, u)
	if err != nil || lbID == "" {
		return u.IPv4, u.IPv6, err
	}
	var taken *exampleapi.Address
	if u.Take != "" {
		a, why, _, err := l.usableBy(ctx, u.Gateway, u.Take)
		switch {
		case err != nil:
			return "", "", err
		case why != "":
			return "", "", fmt.Errorf("%w: %s", lbmodel.ErrAddressNotUsable, why)
		}
		if a.LoadBalancerID != lbID {
			if err := l.gatewayApply(ctx, u, a, lbID); err != nil {
				return "", "", err
			}
		}
		taken = a
	}
	stale, err := l.staleFor(ctx, u)
	if err != nil {
		return "", "", err
	}
	if taken != nil && !stale {
		return taken.IP, u.IPv6, nil
	}
	if taken == nil && !stale {
		return u.IPv4, u.IPv6, nil
	}
	if err := l.letGoFor(ctx, u, lbID, taken); err != nil {
		return "", "", err
	}
	live, err := l.api.GetLoadBalancer(ctx, lbID)
	if err != nil {
		return "", "", fmt.Errorf("read the load balancer of %s: %w", u.Gateway.Describe(), err)
	}
	return live.IPv4, live.IPv6, nil
}

// gatewayLoadBalancer is u's load balancer's id: u.LoadBalancerID, else
// the one the cloud has of the Gateway's name and uid ("" for none).
func (l *addresses) gatewayLoadBalancer(ctx context.Context, u gatewayAddressUse) (string, error) {
	if u.LoadBalancerID != "" {
		return u.LoadBalancerID, nil
	}
	g := lbmodel.LoadBalancer{Namespace: u.Gateway.Namespace, Name: u.Gateway.Name, UID: u.Gateway.UID}
	name := lbmodel.GatewayName(g, l.cfg.ClusterID)
	list, err := l.api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name, Region: l.cfg.Region})
	if err != nil {
		return "", fmt.Errorf("read the load balancer of %s: %w", u.Gateway.Describe(), err)
	}
	for i := range list {
		if list[i].Name == name && l.ownedBy(&list[i], u.Gateway) {
			return list[i].ID, nil
		}
	}
	return "", nil
}

// staleFor tells whether u's load balancer may hold a reserved address it
// is to let go of, or show one it no longer holds: the status shows an IP
// the last apply did not, or the last apply's IP is a reserved one (the
// load balancer's own changes when one comes or goes). Otherwise nothing
// is read.
func (l *addresses) staleFor(ctx context.Context, u gatewayAddressUse) (bool, error) {
	for _, ip := range u.Shown {
		if ip != u.IPv4 && ip != u.IPv6 {
			return true, nil
		}
	}
	reserved, err := l.reservedIPs(ctx)
	if err != nil {
		return false, fmt.Errorf("%s: %w", u.Gateway.Describe(), err)
	}
	return reserved[u.IPv4] || reserved[u.IPv6], nil
}

// letGoFor detaches, each through its own workspace, the reserved
// addresses on load balancer lbID that u neither takes (taken) nor keeps.
// One no workspace of ours can hold (untagged, made by hand) is left.
func (l *addresses) letGoFor(ctx context.Context, u gatewayAddressUse, lbID string, taken *exampleapi.Address) error {
	live, err := l.api.GetLoadBalancer(ctx, lbID)
	if err != nil {
		return fmt.Errorf("read the load balancer of %s: %w", u.Gateway.Describe(), err)
	}
	for _, ip := range []string{live.IPv4, live.IPv6} {
		if ip == "" || taken != nil && ip == taken.IP {
			continue
		}
		held, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{IP: ip, Region: l.cfg.Region})
		if err != nil {
			return fmt.Errorf("%s: read address %s: %w", u.Gateway.Describe(), ip, err)
		}
		for i := range held {
			a := &held[i]
			if a.LoadBalancerID != lbID || slices.Contains(u.Keep, a.ID) || slices.Contains(u.Keep, a.IP) {
				continue
			}
			if err := l.gatewayApply(ctx, u, a, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// gatewayApply converges reserved address a's workspace to be held by
// load balancer lbID ("": detached) for u's Gateway, importing a when no
// workspace of ours holds it yet.
func (l *addresses) gatewayApply(ctx context.Context, u gatewayAddressUse, a *exampleapi.Address, lbID string) error {
	ns, name, ok := addressOwner(addressWant{Ref: a.ID}, a)
	if !ok {
		klog.V(2).InfoS("Reserved address on a Gateway's load balancer left alone: no namespace owns it", "gateway", u.Gateway.String(), "address", a.ID)
		return nil
	}
	_, exists, err := l.engine.GetAddress(ctx, ns, name)
	if err != nil {
		return err
	}
	addr := specOf(ns, name, a, exists)
	if addr.LoadBalancerID = lbID; lbID != "" {
		addr.Holder = u.Gateway.Describe()
	}
	err = l.apply(ctx, addr, u.Policy, func(string) review.Subject { return u.subject(ns, name) })
	if err != nil {
		return fmt.Errorf("reserved address %s (%s): %w", a.ID, a.IP, err)
	}
	klog.V(2).InfoS("Reserved address converged for a Gateway", "gateway", u.Gateway.String(), "address", ns+"/"+name, "loadBalancer", lbID)
	return nil
}
