package shard

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// TestReadOwners: what a reader makes of a set's Leases, decided from
// them alone (client-go's fake clientset stands in for the API server
// here; TestShardsOverReplicas reads real ones).
func TestReadOwners(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	lease := func(name, role, holder string, renewed time.Duration, notes map[string]string) *coordinationv1.Lease {
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ccm", Labels: map[string]string{LabelSet: "p", LabelRole: role}, Annotations: notes},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(15)),
				RenewTime: ptr.To(metav1.NewMicroTime(now.Add(-renewed)))}}
	}
	member := func(id string, shards string, renewed time.Duration, leads bool) *coordinationv1.Lease {
		notes := map[string]string{annotationShards: shards}
		if leads {
			notes[annotationLeader] = "true"
		}
		return lease(memberName("p", id), roleMember, id, renewed, notes)
	}
	shardLease := func(i int, holder string, renewed time.Duration) *coordinationv1.Lease {
		return lease(leaseName("p", i), roleShard, holder, renewed, nil)
	}

	// No live replica: not sharded (or nobody there to say how).
	o, err := ReadOwners(t.Context(), fake.NewClientset(member("gone", "2", time.Minute, true), shardLease(0, "gone", time.Minute)), "ccm", "p", now)
	if err != nil || o != nil {
		t.Fatalf("only expired Leases: ReadOwners = %+v, %v; want nil", o, err)
	}

	// Two shards: one held, one whose holder stopped renewing. The count
	// is the most recently renewed replica's (an older one may count
	// another until it restarts).
	client := fake.NewClientset(
		member("a", "2", time.Second, true), member("b", "7", 5*time.Second, false),
		shardLease(0, "a", 2*time.Second), shardLease(1, "b", 20*time.Second))
	o, err = ReadOwners(t.Context(), client, "ccm", "p", now)
	if err != nil || o == nil {
		t.Fatalf("ReadOwners = %v, %v", o, err)
	}
	if len(o.holders) != 2 || o.Leader != "a" {
		t.Errorf("ReadOwners = %d shards, leader %q; want 2 and a", len(o.holders), o.Leader)
	}
	for k := range 20 {
		key := "Service/shop/web-" + string(rune('a'+k))
		want := map[int]string{0: "a", 1: ""}[Of(key, 2)]
		if got := o.Of(key); got != want {
			t.Errorf("%s (shard %d) is held by %q, want %q", key, Of(key, 2), got, want)
		}
	}
}
