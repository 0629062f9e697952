package servicelb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// references decides, before anything is rendered, every reference a
// Service makes outside itself (tenancy): the Service's own reconcile and
// the group membership of every member go through it.
type references struct {
	authorizer *tenancy.Authorizer
	certs      ttlCache[map[string]string]
	lbs        ttlCache[map[string]string]
	names      ttlCache[map[string]string]
	addrs      ttlCache[cloudAddress]
	// grants are the cluster's ReferenceGrants, watched.
	grants *referencegrants.Watch
}

// How long what references read from the cloud is kept: a certificate's
// tenant tags do not change (they name who uploaded it). ReferenceGrants
// are watched instead (referencegrants.Watch).
const (
	certificateTagsTTL = time.Minute
	// loadBalancerTagsTTL: a load balancer to adopt is read again each
	// minute while its Service names it (its tags change once adopted).
	loadBalancerTagsTTL = time.Minute
	// loadBalancerNameTTL: whose a name is changes when a load balancer
	// is created or deleted; a stale answer only delays a refusal or an
	// allowance (the cloud still refuses a second load balancer of a name).
	loadBalancerNameTTL = 30 * time.Second
	// addressTTL: an address's id and owner tags do not change while it
	// exists; kept a moment so that N Services naming one (a tenant's,
	// naming another team's) cost one cloud read per look of the keeper,
	// not N. One not found is kept as long: a refusal's latency must not
	// tell an address that exists from one that does not.
	addressTTL = 2 * time.Second
	// referencesTimeout bounds the reads of a membership check, which
	// has no caller's context.
	referencesTimeout = 30 * time.Second
)

// grantsFirstList bounds how long a read of the grants waits for their
// first list: the controller's reconciles start with it; a guest must not
// be dropped at a restart because its grant was not listed yet.
const grantsFirstList = 10 * time.Second

func newReferences(cfg *cloudconfig.Config, api cloudReader) *references {
	r := &references{grants: referencegrants.New(referencegrants.Options{
		Name: "referencegrants", Consents: "guests in its load balancer groups", FirstList: grantsFirstList})}
	r.authorizer = &tenancy.Authorizer{
		ClusterID:       cfg.ClusterID,
		Shared:          cfg.LoadBalancer.SharedCertificates,
		AdoptionAllowed: cfg.LoadBalancer.Adoption.Allows,
	}
	if api != nil {
		r.authorizer.CertificateTags = cloudTags(&r.certs, certificateTagsTTL, func(ctx context.Context, id string) (map[string]string, bool, error) {
			c, err := api.GetCertificate(ctx, id)
			if err != nil {
				return nil, false, ignoreNotFound(err)
			}
			return c.Tags, true, nil
		})
		r.authorizer.LoadBalancerTags = cloudTags(&r.lbs, loadBalancerTagsTTL, func(ctx context.Context, id string) (map[string]string, bool, error) {
			lb, err := api.GetLoadBalancer(ctx, id)
			if err != nil {
				return nil, false, ignoreNotFound(err)
			}
			return lb.Tags, true, nil
		})
		r.authorizer.LoadBalancerByName = cloudTags(&r.names, loadBalancerNameTTL, func(ctx context.Context, name string) (map[string]string, bool, error) {
			l, err := api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name, Region: cfg.Region})
			if err != nil {
				return nil, false, fmt.Errorf("list load balancers named %q: %w", name, err)
			}
			i := slices.IndexFunc(l, func(lb exampleapi.LoadBalancer) bool { return lb.Name == name })
			if i < 0 {
				return nil, false, nil
			}
			return l[i].Tags, true, nil
		})
		r.authorizer.Address = func(ctx context.Context, ref string) (string, map[string]string, bool, error) {
			a, err := r.addrs.get(ref, addressTTL, func() (cloudAddress, error) { return readAddress(ctx, api, cfg.Region, ref) })
			return a.id, a.tags, a.id != "", err
		}
	}
	return r
}

// cloudAddress is what references read of a reserved address: its id and
// tags, zero for none of the region.
type cloudAddress struct {
	id   string
	tags map[string]string
}

// readAddress reads reserved address ref (an id or an IP) of region.
func readAddress(ctx context.Context, api cloudReader, region, ref string) (cloudAddress, error) {
	var a *exampleapi.Address
	if annotations.IsAddressID(ref) {
		got, err := api.GetAddress(ctx, ref)
		if err != nil {
			return cloudAddress{}, ignoreNotFound(err)
		}
		a = got
	} else {
		l, err := api.ListAddresses(ctx, exampleapi.AddressFilter{IP: ref, Region: region})
		if err != nil {
			return cloudAddress{}, fmt.Errorf("list addresses of IP %s: %w", ref, err)
		}
		if len(l) == 0 {
			return cloudAddress{}, nil
		}
		a = &l[0]
	}
	if a.Region != region {
		return cloudAddress{}, nil
	}
	return cloudAddress{id: a.ID, tags: maps.Clone(a.Tags)}, nil
}

// cloudTags is a tenancy source of a cloud object's tags, kept in c for
// ttl: read says whether the object exists and, if so, its tags. An
// object without tags exists all the same (nobody's), so it is kept as an
// empty map; a missing one as nil.
func cloudTags(c *ttlCache[map[string]string], ttl time.Duration, read func(ctx context.Context, key string) (map[string]string, bool, error)) func(context.Context, string) (map[string]string, bool, error) {
	return func(ctx context.Context, key string) (map[string]string, bool, error) {
		tags, err := c.get(key, ttl, func() (map[string]string, error) {
			tags, found, err := read(ctx, key)
			if err != nil || !found {
				return nil, err
			}
			if tags = maps.Clone(tags); tags == nil {
				tags = map[string]string{}
			}
			return tags, nil
		})
		return tags, tags != nil, err
	}
}

func ignoreNotFound(err error) error {
	if exampleapi.IsNotFound(err) {
		return nil
	}
	return err
}

// watchGrants lets the references read ReferenceGrants, from a watch
// that runs until ctx ends (referencegrants.Watch). Without it (or without the CRD
// in the cluster) no namespace consents.
func (r *references) watchGrants(ctx context.Context, dyn dynamic.Interface) {
	r.grants.Start(ctx, referencegrants.FromDynamic(dyn))
	r.authorizer.Grants = r.grants.Read
	r.authorizer.GrantsNow = liveGrants(dyn) // unread.go
}

// authorize decides every reference svc's annotations make: of the
// values that parsed when some did not (in.Err), so that an error
// elsewhere lets no group or certificate of another namespace through.
// Refused then, the annotations' error is the one returned: it is the
// first to fix. Without references (nil) every reference outside the
// Service's namespace is refused.
func (r *references) authorize(ctx context.Context, in *annotations.Service) error {
	if r == nil {
		r = &references{authorizer: &tenancy.Authorizer{}}
	}
	err := r.authorizer.Authorize(ctx, objectref.Service(in.Service), tenancy.References(in.Service, &in.LB))
	if err != nil && in.Err != nil {
		return in.Err
	}
	return err
}

// consent decides only svc's joining a group of another namespace (nil
// when it names none): whether a guest left out was left out for want of
// its group's namespace's consent.
func (r *references) consent(ctx context.Context, svc *v1.Service) error {
	if r == nil {
		r = &references{authorizer: &tenancy.Authorizer{}}
	}
	lb, err := annotations.Parse(svc.Annotations)
	if err != nil {
		return nil //nolint:nilerr // the renderer reports bad annotations, with the field
	}
	var groups []tenancy.Reference
	for _, ref := range tenancy.References(svc, &lb) {
		if ref.Kind == tenancy.Group {
			groups = append(groups, ref)
		}
	}
	return r.authorizer.Authorize(ctx, objectref.Service(svc), groups)
}

// admitsNow tells whether group g (of another namespace) takes svc as a
// member by the grants read so far: consent decided by the same rule,
// without waiting for the grants' first list (the shard filter asks from
// the informer's handlers, which must not block); until then nobody
// consents.
func (r *references) admitsNow(svc *v1.Service, g annotations.Group) bool {
	if r == nil {
		return false
	}
	refs := tenancy.References(svc, &annotations.LoadBalancer{Group: g})
	return r.authorizer.Authorize(noWait, objectref.Service(svc), refs) == nil
}

// noWait is a context already done: a grants read under it answers from
// what was read so far (referencegrants.Watch.Read waits for the first list only
// while its context lives), and any read from the API server fails at
// once (nothing is asked of it: a refusal is the shards' answer then).
var noWait = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// ttlCache keeps values by key for a while. A failed read is not kept:
// the last value read stands in for it (a passing fault of the cloud or
// the API server must not flip a group's membership), and without one
// the read's error is returned. It holds what was read within twice its
// ttl (a stand-in older than that is no answer), at most ttlCacheSize
// keys: tenants choose the keys (annotation values), so it is bounded by
// neither the objects nor time otherwise.
type ttlCache[V any] struct {
	mu sync.Mutex
	m  map[string]cached[V]
}

// ttlCacheSize bounds each ttlCache; past it the oldest read goes.
const ttlCacheSize = 4096

type cached[V any] struct {
	v  V
	at time.Time
}

func (c *ttlCache[V]) get(key string, ttl time.Duration, read func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && time.Since(e.at) < ttl {
		return e.v, nil
	}
	v, err := read()
	if err != nil {
		if ok && time.Since(e.at) < 2*ttl {
			return e.v, nil
		}
		return v, err
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cached[V]{}
	}
	if _, had := c.m[key]; !had {
		c.evict(now, ttl)
	}
	c.m[key] = cached[V]{v: v, at: now}
	return v, nil
}

// evict drops what was read more than twice ttl ago and, while the cache
// is full, the oldest read (c.mu held).
func (c *ttlCache[V]) evict(now time.Time, ttl time.Duration) {
	for k, e := range c.m {
		if now.Sub(e.at) >= 2*ttl {
			delete(c.m, k)
		}
	}
	for len(c.m) >= ttlCacheSize {
		oldest, at := "", now
		for k, e := range c.m {
			if !e.at.After(at) {
				oldest, at = k, e.at
			}
		}
		delete(c.m, oldest)
	}
}

func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
