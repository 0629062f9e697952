package shard

import (
	"context"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// ControllerPrefix names the controller's set of Leases.
const ControllerPrefix = "example-ccm"

// Owners is who holds each shard of a set, as its Leases say: what
// `examplectl status` shows. It only reads.
type Owners struct {
	// holders is each shard's holder; "" when free or expired.
	holders []string
	// Leader is the live replica that says it leads (the route set's and
	// the target pools' owner), "" for none seen.
	Leader string
}

// ReadOwners lists the set's Leases in namespace. The number of shards is
// the one the most recently renewed live replica counts; a shard whose
// Lease was not renewed within its duration (by the API server's times
// against now: an observer's reading, not the replicas' own judgement)
// has no holder. Nil without error when no replica of the set is live:
// the controller is not sharded.
func ReadOwners(ctx context.Context, client kubernetes.Interface, namespace, prefix string, now time.Time) (*Owners, error) {
	all, err := leases{client: client, namespace: namespace, prefix: prefix}.list(ctx)
	if err != nil {
		return nil, err
	}
	shards, newest, leader := 0, time.Time{}, ""
	for _, l := range all {
		n, err := strconv.Atoi(l.Annotations[annotationShards])
		if l.Labels[LabelRole] != roleMember || err != nil || n < 1 || !live(l, now) {
			continue
		}
		if at := l.Spec.RenewTime.Time; at.After(newest) {
			shards, newest = n, at
		}
		if l.Annotations[annotationLeader] == "true" {
			leader = ptr.Deref(l.Spec.HolderIdentity, "")
		}
	}
	if shards == 0 {
		return nil, nil
	}
	o := &Owners{holders: make([]string, shards), Leader: leader}
	for i := range shards {
		if l := all[leaseName(prefix, i)]; l != nil && live(l, now) {
			o.holders[i] = ptr.Deref(l.Spec.HolderIdentity, "")
		}
	}
	return o, nil
}

// Of is the replica holding key's shard, "" for none.
func (o *Owners) Of(key string) string { return o.holders[Of(key, len(o.holders))] }

// live: l was renewed within its duration before now.
func live(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return now.Sub(l.Spec.RenewTime.Time) <= time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
}
