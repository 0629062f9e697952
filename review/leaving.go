package review

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/records"
)

// ReportLeaving keeps on the pools' record (workspace) the nodes leaving
// the target pools, as examplectl status shows them, and writes an audit
// line for each node that left a pool in the apply just made (departed).
func (b *Board) ReportLeaving(ctx context.Context, s Subject, workspace string, leaving, departed []records.LeavingNode) {
	for _, d := range departed {
		details := map[string]string{"node": d.Node, "reason": d.Reason, "pool": d.Pool}
		if d.Until != nil {
			details["until"] = d.Until.UTC().Format(time.RFC3339)
		}
		if b.audit != nil {
			if err := b.audit.Write(audit.Entry{Time: d.Since, Action: audit.ActionDeregister, Object: s.String(), Workspace: workspace,
				Actor: b.self, Details: details}); err != nil {
				klog.ErrorS(err, "cannot write audit log")
			}
		}
	}
	if b.store == nil {
		return
	}
	if _, err := b.store.Update(ctx, workspace, func(r *records.Record) error {
		r.Object, r.Workspace = s.ref, workspace
		r.Leaving = leaving
		return nil
	}); err != nil {
		klog.ErrorS(err, "cannot record the nodes leaving the target pools", "workspace", workspace)
	}
}
