package exampleapi

import (
	"context"
	"fmt"
	"slices"
)

// Tenant tags name the tenant a Kubernetes controller's cloud objects
// belong to: the cluster and the namespace.
const (
	TagClusterID = "k8s.example.com/cluster-id"
	TagNamespace = "k8s.example.com/service-namespace"
)

// A controller's load balancer also names the Service it serves: by name,
// for people, and by uid, the owner key that tells a Service created again
// under its name from the one before.
const (
	TagServiceName = "k8s.example.com/service-name"
	TagServiceUID  = "k8s.example.com/service-uid"
)

// TenantTags are the owner keys of the rule that a load balancer may
// serve a certificate only of its own tenant: where a certificate carries
// them, the load balancer's tags must carry the same values (a certificate
// without them, such as one a platform team uploaded by hand, is anyone's
// as far as the cloud's objects tell; the controller decides who may name
// it).
var TenantTags = []string{TagClusterID, TagNamespace}

// OwnerConflicts applies the ownership rule for taking over an existing
// object (import, adoption): keys are the tag keys whose values name the
// owner (a cluster id, a Kubernetes Service uid), want the tags of the
// configuration taking it over, got the existing object's tags. Every
// owner key that got has with a value other than want's (or that want
// does not set at all) shows another owner and is a conflict. An owner key
// got lacks is no conflict: an untagged object belongs to nobody yet.
//
// The result is human readable, one entry per key, sorted; empty means the
// object may be taken over.
func OwnerConflicts(want, got map[string]string, keys []string) []string {
	var out []string
	for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		g, tagged := got[k]
		if !tagged {
			continue
		}
		switch w, ok := want[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("tag %q is %q, and this configuration sets no such tag", k, g))
		case w != g:
			out = append(out, fmt.Sprintf("tag %q is %q, not this configuration's %q", k, g, w))
		}
	}
	return out
}

// StrayCertificates are the certificates of region whose tags hold every
// owner tag and that no load balancer serves but the owner's own (tags
// holding owner too): what an interrupted apply may have uploaded and
// could not record, also while the load balancer it created unrecorded
// still serves it. Whether the owner's state holds one is the caller's
// to tell.
func (c *Client) StrayCertificates(ctx context.Context, region string, owner map[string]string) ([]Certificate, error) {
	certs, err := c.ListCertificates(ctx, CertificateFilter{Region: region})
	if err != nil {
		return nil, err
	}
	certs = slices.DeleteFunc(certs, func(c Certificate) bool { return !HasTags(c.Tags, owner) })
	if len(certs) == 0 {
		return nil, nil
	}
	lbs, err := c.ListLoadBalancers(ctx, LoadBalancerFilter{Region: region})
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, lb := range lbs {
		if HasTags(lb.Tags, owner) {
			continue
		}
		for _, l := range lb.Listeners {
			for _, id := range l.CertificateIDs {
				served[id] = true
			}
		}
	}
	return slices.DeleteFunc(certs, func(c Certificate) bool { return served[c.ID] }), nil
}

// PoolUsers are, for each key of pools, the load balancers of region that
// forward to a target pool whose tags hold every one of its tags: what
// keeps the cloud from deleting that pool.
func (c *Client) PoolUsers(ctx context.Context, region string, pools map[string]map[string]string) (map[string][]string, error) {
	tps, err := c.ListTargetPools(ctx, TargetPoolFilter{Region: region})
	if err != nil {
		return nil, err
	}
	lbs, err := c.ListLoadBalancers(ctx, LoadBalancerFilter{Region: region})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for key, tags := range pools {
		for _, tp := range tps {
			if !HasTags(tp.Tags, tags) {
				continue
			}
			for _, lb := range lbs {
				if lb.UsesPool(tp.ID) {
					out[key] = append(out[key], lb.ID)
				}
			}
		}
	}
	return out, nil
}

// HasTags tells whether tags holds every one of want, with its value.
func HasTags(tags, want map[string]string) bool {
	for k, v := range want {
		if tags[k] != v {
			return false
		}
	}
	return true
}
