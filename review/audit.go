package review

import (
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
)

// Failing to write the audit log is logged, never returned: the
// infrastructure change it describes already happened (or not).

// auditf appends one audit entry for s; p, if set, names the plan.
func (b *Board) auditf(s Subject, out *engine.Outcome, e audit.Entry, p *engine.Plan) {
	if b.audit == nil {
		return
	}
	e.Time, e.Object, e.Workspace, e.Policy = time.Now(), s.String(), out.Workspace, string(out.Policy)
	if e.Actor == "" {
		e.Actor = b.self
	}
	if p != nil {
		e.PlanID, e.Summary = p.ID, p.Summary.String()
	}
	if s.cause != nil {
		e.Details = withDetail(e.Details, "cause", s.cause.String())
	}
	if len(s.carries) > 0 {
		e.Details = withDetail(e.Details, "carries", strings.Join(s.carries, "; "))
	}
	if err := b.audit.Write(e); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

// auditUnlock appends the line of a state lock forced open, or of an
// unlock request that was ignored (why says which).
func (b *Board) auditUnlock(s Subject, workspace, lockID, actor, why string) {
	if b.audit == nil {
		return
	}
	if err := b.audit.Write(audit.Entry{Time: time.Now(), Action: audit.ActionForceUnlock, Object: s.String(), Workspace: workspace,
		Actor: actor, Details: map[string]string{"lockID": lockID, "reason": why}}); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

// now is the time records and audit lines carry.
func now() time.Time { return time.Now() }
