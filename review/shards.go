package review

import (
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/audit"
)

// SetReplica names this replica in every audit line it writes
// (sharding: which replica planned and applied what).
func (b *Board) SetReplica(name string) {
	if b.audit != nil {
		b.audit.SetReplica(name)
	}
}

// ShardMoved reports a shard this replica took (to is this replica) or
// gave back (from is): an event on the shard's Lease and an audit line,
// both naming the two replicas ("" for none: a free shard, a shard left
// free).
func (b *Board) ShardMoved(lease string, shard int, from, to string) {
	klog.InfoS("Shard moved", "shard", shard, "from", from, "to", to)
	obj := &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Namespace: b.cfg.Review.Namespace, Name: lease},
	}
	b.recorder.Eventf(obj, v1.EventTypeNormal, "ShardMoved", "shard %d moved from %s to %s", shard, orNone(from), orNone(to))
	if b.audit == nil {
		return
	}
	if err := b.audit.Write(audit.Entry{Time: time.Now(), Action: audit.ActionShardMove, Object: "Lease " + b.cfg.Review.Namespace + "/" + lease,
		Details: map[string]string{"shard": strconv.Itoa(shard), "from": from, "to": to}}); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

func orNone(replica string) string {
	if replica == "" {
		return "no replica"
	}
	return replica
}
