package servicelb

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// Reserved addresses (docs/addresses.md, ADR 0019). Who holds an address
// is decided in one place, the leader's address keeper
// (addresskeeper.go); a Service's own reconcile, on whichever replica owns
// it, only reads whether its load balancer holds the address it asks for
// and reports the reserved IP, or waits.

// addressWait is when a Service waiting for the leader to reserve or
// attach its address looks again.
const addressWait = 2 * time.Second

// addresses reads what the reserved addresses are (docs/addresses.md):
// the one a Service asks for, where it is, and the status it gives the
// Service; the leader's keeper (addresskeeper.go) converges them.
type addresses struct {
	*shared
	engine addressEngine
	// api reads the cloud (nil: no reserved addresses).
	api cloudReader
	// reserved are the region's reserved IPs (reservedIPs).
	reserved ttlCache[map[string]bool]
	// decide is held while who holds an address is decided and applied:
	// the keeper's Services and the Gateways (gatewayaddresses.go) never
	// decide one address at once.
	decide sync.Mutex
	// named tells which addresses the Gateways name (NamedBy; nil until
	// the front-end runs here).
	named atomic.Pointer[GatewayAddressNames]
}

// addressWant is the reserved address a Service asks for: the one it
// names (by id or IP), else, with address-keep, the one reserved for it.
type addressWant struct {
	// Ref is the id or IP named; "" for the Service's own.
	Ref string
	// Namespace and Name are the Service's own reserved address (Ref "").
	Namespace, Name string
}

func (w addressWant) String() string {
	if w.Ref != "" {
		return w.Ref
	}
	return w.Namespace + "/" + w.Name
}

// key is w as the address keeper's queue holds it: a string, so that a
// deleted Service's want is queued without reading the cloud.
func (w addressWant) key() string {
	if w.Ref != "" {
		return "ref:" + w.Ref
	}
	return "own:" + w.Namespace + "/" + w.Name
}

func wantOfKey(key string) addressWant {
	if ref, ok := strings.CutPrefix(key, "ref:"); ok {
		return addressWant{Ref: ref}
	}
	ns, name, _ := strings.Cut(strings.TrimPrefix(key, "own:"), "/")
	return addressWant{Namespace: ns, Name: name}
}

// wantOf is the address in asks for; ok is false when it asks for none
// (annotations in error, or on a group member, ask for nothing: their
// reconcile says why).
func (l *addresses) wantOf(in *annotations.Service) (addressWant, bool) {
	switch {
	case in.Err != nil || !ours(in.Service) || in.LB.Group.Name != "":
		// A group member's address is refused by its reconcile.
		return addressWant{}, false
	case in.LB.Address != "":
		return addressWant{Ref: in.LB.Address}, true
	case in.LB.AddressKeep:
		return addressWant{Namespace: in.Namespace, Name: l.engine.ReservedAddressName(in.Service)}, true
	}
	return addressWant{}, false
}

// names tells whether want w is address a (nil: not reserved yet) of
// namespace ns, named name: no cloud read, so the keeper can match every
// Service against one address.
func (w addressWant) names(ns, name string, a *exampleapi.Address) bool {
	switch {
	case w.Ref == "":
		return w.Namespace == ns && w.Name == name
	case a == nil:
		return false
	case annotations.IsAddressID(w.Ref):
		return w.Ref == a.ID
	}
	want, err1 := netip.ParseAddr(w.Ref)
	got, err2 := netip.ParseAddr(a.IP)
	return err1 == nil && err2 == nil && want.Unmap() == got.Unmap()
}

// findAddress reads the cloud's address that w names: nil when there is
// none (the Service's own, not reserved yet; a name nothing answers to).
// The Service's own is taken only with this cluster's and its namespace's
// tags.
func (l *addresses) findAddress(ctx context.Context, w addressWant) (*exampleapi.Address, error) {
	var list []exampleapi.Address
	var err error
	switch {
	case annotations.IsAddressID(w.Ref):
		var a *exampleapi.Address
		if a, err = l.api.GetAddress(ctx, w.Ref); err == nil {
			list = append(list, *a)
		}
	case w.Ref != "":
		list, err = l.api.ListAddresses(ctx, exampleapi.AddressFilter{IP: w.Ref, Region: l.cfg.Region})
	default:
		list, err = l.api.ListAddresses(ctx, exampleapi.AddressFilter{Name: w.Name, Region: l.cfg.Region})
	}
	if err = ignoreNotFound(err); err != nil {
		return nil, fmt.Errorf("read address %s: %w", w, err)
	}
	for i := range list {
		a := &list[i]
		mine := a.Name == w.Name && a.Tags[exampleapi.TagClusterID] == l.cfg.ClusterID && a.Tags[exampleapi.TagNamespace] == w.Namespace
		if a.Region == l.cfg.Region && (w.Ref != "" || mine) {
			return a, nil
		}
	}
	return nil, nil
}

// addressOwner is the namespace and cloud name of the workspace of the
// address w names (a: the cloud's, nil when not reserved yet); ok false
// when the address is nobody's here (untagged: the authorization refuses
// it).
func addressOwner(w addressWant, a *exampleapi.Address) (ns, name string, ok bool) {
	if a == nil {
		return w.Namespace, w.Name, w.Ref == ""
	}
	ns = a.Tags[exampleapi.TagNamespace]
	return ns, a.Name, ns != ""
}

// addressCap tells whether namespace ns has as many reserved addresses of
// this cluster as loadBalancer.addresses.maxPerNamespace allows, and how
// many.
func (l *addresses) addressCap(ctx context.Context, ns string) (full bool, n int, err error) {
	list, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{Region: l.cfg.Region})
	if err != nil {
		return false, 0, fmt.Errorf("count the reserved addresses of namespace %s: %w", ns, err)
	}
	for _, a := range list {
		if a.Tags[exampleapi.TagClusterID] == l.cfg.ClusterID && a.Tags[exampleapi.TagNamespace] == ns {
			n++
		}
	}
	return n >= l.cfg.LoadBalancer.Addresses.MaxPerNamespace, n, nil
}

// capError is the refusal of a reservation past the namespace's cap.
func (l *addresses) capError(svc *v1.Service, n int) error {
	return fmt.Errorf("%s: %s: namespace %s has %d reserved addresses, its cap (loadBalancer.addresses.maxPerNamespace %d): a reviewer may release one (examplectl addresses -n %s; examplectl release), or raise the cap",
		objectref.Service(svc).Describe(), annotations.LBAddressKeep, svc.Namespace, n, l.cfg.LoadBalancer.Addresses.MaxPerNamespace, svc.Namespace)
}

// cloudLoadBalancer is svc's load balancer as the cloud has it now, found
// by its name and the Service's uid tag; nil when there is none.
func (l *addresses) cloudLoadBalancer(ctx context.Context, in *annotations.Service) (*exampleapi.LoadBalancer, error) {
	name := l.engine.LoadBalancerName(in)
	list, err := l.api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name, Region: l.cfg.Region})
	if err != nil {
		return nil, fmt.Errorf("read the load balancer of %s: %w", objectref.Service(in.Service).Describe(), err)
	}
	for i := range list {
		if list[i].Name == name && list[i].Tags[exampleapi.TagServiceUID] == string(in.UID) {
			return &list[i], nil
		}
	}
	return nil, nil
}

// addressed is st, the status of a Service's active load balancer lb,
// with the reserved address it asks for: its IP once lb holds it; until
// then a retry while the leader reserves, attaches or moves it. A Service
// that asks for none but still shows another IP than lb's outputs (it let
// go of one) gets the cloud's address of lb, once no reserved one is left
// on it.
func (l *addresses) addressed(ctx context.Context, subj review.Subject, in *annotations.Service, lb *engine.LoadBalancer, st *v1.LoadBalancerStatus) (*v1.LoadBalancerStatus, error) {
	w, ok := l.wantOf(in)
	if !ok {
		return l.letGo(ctx, in, lb, st)
	}
	svc := in.Service
	if l.api == nil {
		return nil, fmt.Errorf("%s: address %s: %w", objectref.Service(svc).Describe(), w, errNoAddressAPI)
	}
	a, err := l.findAddress(ctx, w)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), err)
	case a == nil && w.Ref != "":
		return nil, fmt.Errorf("%s: %s %s: no reserved address of region %s has it", objectref.Service(svc).Describe(), annotations.LBAddress, w.Ref, l.cfg.Region)
	case a == nil:
		full, n, err := l.addressCap(ctx, svc.Namespace)
		if err != nil {
			return nil, err
		}
		if full {
			err := l.capError(svc, n)
			l.board.Eventf(subj, v1.EventTypeWarning, "AddressCapReached", "%v", err)
			return nil, err
		}
		return nil, api.NewRetryError(fmt.Sprintf("address %s: the leader reserves it", w), addressWait)
	case a.LoadBalancerID == lb.ID:
		return withAddress(st, a), nil
	case a.LoadBalancerID != "":
		l.board.Eventf(subj, v1.EventTypeNormal, "AddressHeld", "Address %s (%s) is held by %s: this Service takes it when that one lets go", a.ID, a.IP, l.holderOf(ctx, svc, a.LoadBalancerID))
		// Not the holder's id: the error reaches the Service's events,
		// and the holder may be another namespace's (AddressHeld says
		// whose, as far as svc may know).
		return nil, api.NewRetryError(fmt.Sprintf("address %s is held by another load balancer", a.ID), provisioningRetry)
	}
	return nil, api.NewRetryError(fmt.Sprintf("address %s: the leader attaches it", a.ID), addressWait)
}

// holderOf names, for svc's event, what holds an address: a Service or
// Gateway of its namespace by name, one of another namespace only as
// such.
func (l *addresses) holderOf(ctx context.Context, svc *v1.Service, lbID string) string {
	lb, err := l.api.GetLoadBalancer(ctx, lbID)
	switch {
	case err != nil:
		return "another load balancer" // whose is not known: maybe another namespace's
	case l.gateways(lb) && lb.Tags[exampleapi.TagNamespace] == svc.Namespace:
		return "Gateway " + svc.Namespace + "/" + lb.Tags[lbmodel.TagGatewayName]
	case l.gateways(lb):
		return "a Gateway of another namespace"
	case lb.Tags[exampleapi.TagNamespace] == svc.Namespace && lb.Tags[exampleapi.TagServiceName] != "":
		return "Service " + svc.Namespace + "/" + lb.Tags[exampleapi.TagServiceName]
	case lb.Tags[exampleapi.TagNamespace] != "":
		return "a Service of another namespace"
	}
	return "load balancer " + lbID
}

// withAddress is st with a's IP in place of its family's.
func withAddress(st *v1.LoadBalancerStatus, a *exampleapi.Address) *v1.LoadBalancerStatus {
	out := st.DeepCopy()
	v6 := a.Family == exampleapi.AddressFamilyIPv6
	for i, ing := range out.Ingress {
		if ip, err := netip.ParseAddr(ing.IP); err == nil && ip.Is6() == v6 {
			out.Ingress[i].IP = a.IP
		}
	}
	return out
}

// reservedIPsTTL is how long the region's reserved IPs are kept: a
// Service that asks for no address looks them up at each reconcile.
const reservedIPsTTL = 10 * time.Second

// reservedIPs are the IPs of the region's reserved addresses, read at most
// once per reservedIPsTTL.
func (l *addresses) reservedIPs(ctx context.Context) (map[string]bool, error) {
	return l.reserved.get("", reservedIPsTTL, func() (map[string]bool, error) {
		list, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{Region: l.cfg.Region})
		if err != nil {
			return nil, fmt.Errorf("list the reserved addresses: %w", err)
		}
		ips := make(map[string]bool, len(list))
		for _, a := range list {
			ips[a.IP] = true
		}
		return ips, nil
	})
}

// letGo is st for a Service that asks for no reserved address. Its load
// balancer's recorded outputs are stale after an address came or went
// (the cloud moves the load balancer's own address then): when the status
// shows another IP than they do, or they show a reserved IP, the address
// is read from the cloud. While a reserved address is still on the load
// balancer (the leader moves it away) the Service waits; after, it shows
// the cloud's address.
func (l *addresses) letGo(ctx context.Context, in *annotations.Service, lb *engine.LoadBalancer, st *v1.LoadBalancerStatus) (*v1.LoadBalancerStatus, error) {
	if l.api == nil {
		return st, nil
	}
	stale := false
	for _, ing := range in.Status.LoadBalancer.Ingress {
		stale = stale || ing.IP != "" && ing.IP != lb.IPv4 && ing.IP != lb.IPv6
	}
	if !stale {
		reserved, err := l.reservedIPs(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", objectref.Service(in.Service).Describe(), err)
		}
		stale = reserved[lb.IPv4] || reserved[lb.IPv6]
	}
	if !stale {
		return st, nil
	}
	live, err := l.api.GetLoadBalancer(ctx, lb.ID)
	if err != nil {
		return nil, fmt.Errorf("%s: read load balancer %s: %w", objectref.Service(in.Service).Describe(), lb.ID, err)
	}
	for _, ip := range []string{live.IPv4, live.IPv6} {
		if ip == "" {
			continue
		}
		held, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{IP: ip, Region: l.cfg.Region})
		if err != nil {
			return nil, fmt.Errorf("%s: read address %s: %w", objectref.Service(in.Service).Describe(), ip, err)
		}
		for _, a := range held {
			if a.LoadBalancerID == lb.ID {
				return nil, api.NewRetryError(fmt.Sprintf("reserved address %s (%s) leaves load balancer %s first", a.ID, a.IP, lb.ID), addressWait)
			}
		}
	}
	return status(&engine.LoadBalancer{ID: lb.ID, IPv4: live.IPv4, IPv6: live.IPv6, Hostname: live.Hostname}, in, nil), nil
}

// addressAsked tells whether the address-related fields of a Service
// changed between old and cur: what the address keeper looks again for.
func addressAsked(old, cur *v1.Service) bool {
	return !reflect.DeepEqual(old.Annotations, cur.Annotations) || old.Spec.LoadBalancerIP != cur.Spec.LoadBalancerIP ||
		old.Spec.Type != cur.Spec.Type || !reflect.DeepEqual(old.Spec.LoadBalancerClass, cur.Spec.LoadBalancerClass) ||
		(old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) || !reflect.DeepEqual(old.Status.LoadBalancer, cur.Status.LoadBalancer)
}

// serviceOf unwraps an informer's object, a deleted one's too.
func serviceOf(obj any) (*v1.Service, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	svc, ok := obj.(*v1.Service)
	return svc, ok
}

var errNoAddressAPI = errors.New("no Example API client: reserved addresses are read from the cloud")
