package shard

import (
	"context"
	"fmt"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Labels on every Lease of a set: which set, and whether the Lease is a
// shard's or a replica's.
const (
	LabelSet   = "shard.example.com/set"
	LabelRole  = "shard.example.com/role"
	roleShard  = "shard"
	roleMember = "replica"
	// annotationShard is a shard Lease's shard number.
	annotationShard = "shard.example.com/shard"
	// annotationShards is, on a replica's Lease, the number of shards it
	// counts: what a reader of the Leases hashes keys with (ReadOwners).
	annotationShards = "shard.example.com/shards"
	// annotationLeader is, on a replica's Lease, "true" while it leads.
	annotationLeader = "shard.example.com/leader"
)

// leases reads and writes one set's Leases.
type leases struct {
	client    kubernetes.Interface
	namespace string
	prefix    string
	identity  string
	duration  time.Duration
	shards    int
}

// list is every Lease of the set, by name.
func (l leases) list(ctx context.Context) (map[string]*coordinationv1.Lease, error) {
	list, err := l.client.CoordinationV1().Leases(l.namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelSet + "=" + l.prefix})
	if err != nil {
		return nil, fmt.Errorf("list shard leases in %s: %w", l.namespace, err)
	}
	out := make(map[string]*coordinationv1.Lease, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

func (l leases) spec(holder string, now time.Time) coordinationv1.LeaseSpec {
	t := metav1.NewMicroTime(now)
	return coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(l.duration.Seconds())),
		AcquireTime: &t, RenewTime: &t}
}

// announce renews the replica's own Lease, creating it the first time,
// with the number of shards it counts and whether it leads.
func (l leases) announce(ctx context.Context, cur *coordinationv1.Lease, now time.Time, leads bool) error {
	name := memberName(l.prefix, l.identity)
	notes := map[string]string{annotationShards: strconv.Itoa(l.shards)}
	if leads {
		notes[annotationLeader] = "true"
	}
	if cur == nil {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.namespace,
			Labels:      map[string]string{LabelSet: l.prefix, LabelRole: roleMember},
			Annotations: notes}, Spec: l.spec(l.identity, now)}
		_, err := l.client.CoordinationV1().Leases(l.namespace).Create(ctx, lease, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("announce replica %s: %w", l.identity, err)
		}
		return nil
	}
	next := cur.DeepCopy()
	next.Annotations = notes
	next.Spec.HolderIdentity = ptr.To(l.identity)
	next.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now))
	next.Spec.LeaseDurationSeconds = ptr.To(int32(l.duration.Seconds()))
	if _, err := l.client.CoordinationV1().Leases(l.namespace).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("announce replica %s: %w", l.identity, err)
	}
	return nil
}

// retire deletes the replica's own Lease: the others count one replica
// fewer at once.
func (l leases) retire(ctx context.Context) error {
	err := l.client.CoordinationV1().Leases(l.namespace).Delete(ctx, memberName(l.prefix, l.identity), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("retire replica %s: %w", l.identity, err)
	}
	return nil
}

// write sets shard i's holder (renewing it when holder is already the
// holder); cur is the Lease as listed (nil: none yet). The update carries
// cur's resource version, so of two replicas racing for a shard one wins
// and the other gets a conflict.
func (l leases) write(ctx context.Context, i int, cur *coordinationv1.Lease, holder string, now time.Time) error {
	if cur == nil {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: leaseName(l.prefix, i), Namespace: l.namespace,
			Labels:      map[string]string{LabelSet: l.prefix, LabelRole: roleShard},
			Annotations: map[string]string{annotationShard: strconv.Itoa(i)}}, Spec: l.spec(holder, now)}
		_, err := l.client.CoordinationV1().Leases(l.namespace).Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	next := cur.DeepCopy()
	t := metav1.NewMicroTime(now)
	if prev := ptr.Deref(cur.Spec.HolderIdentity, ""); prev != holder {
		next.Spec.HolderIdentity = ptr.To(holder)
		next.Spec.AcquireTime = &t
		if holder != "" {
			next.Spec.LeaseTransitions = ptr.To(ptr.Deref(cur.Spec.LeaseTransitions, 0) + 1)
		}
	}
	next.Spec.RenewTime = &t
	next.Spec.LeaseDurationSeconds = ptr.To(int32(l.duration.Seconds()))
	_, err := l.client.CoordinationV1().Leases(l.namespace).Update(ctx, next, metav1.UpdateOptions{})
	return err
}
