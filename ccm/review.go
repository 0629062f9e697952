package ccm

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

// review turns what the engine decided into what people read: events on
// the Service, the plan record next to it, the audit log and metrics.
type review struct {
	cfg      *Config
	client   kubernetes.Interface
	store    *records.Store // nil until the CCM has a Kubernetes client
	audit    *audit.Log
	recorder record.EventRecorder
	phases   phases
}

func newReview(cfg *Config, log *audit.Log) *review {
	return &review{cfg: cfg, audit: log, recorder: &record.FakeRecorder{}}
}

func (v *review) setClient(client kubernetes.Interface, recorder record.EventRecorder) {
	v.client = client
	v.store = records.NewStore(client, v.cfg.Review.Namespace, v.cfg.Review.Keep)
	v.recorder = recorder
}

// subject is the object a reconcile is about.
type subject struct {
	ref   records.ObjectRef
	event runtime.Object // nil for the route set (no object to put events on)
	kind  string         // records.KindChange, KindDestroy or KindDrift
}

func serviceSubject(svc *v1.Service, kind string) subject {
	return subject{ref: records.ObjectRef{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}, event: svc, kind: kind}
}

var routeSetRef = records.ObjectRef{Kind: "RouteSet", Name: "cluster"}

func (s subject) String() string {
	if s.ref.Namespace == "" {
		return s.ref.Kind + " " + s.ref.Name
	}
	return s.ref.Kind + " " + s.ref.Namespace + "/" + s.ref.Name
}

func (v *review) eventf(s subject, typ, reason, format string, args ...any) {
	if s.event != nil {
		v.recorder.Eventf(s.event, typ, reason, format, args...)
	}
}

// report records one reconcile. Failing to record is logged, never
// returned: the infrastructure change already happened (or not).
func (v *review) report(ctx context.Context, s subject, out *engine.Outcome, err error) {
	if out == nil || out.Workspace == "" {
		if err != nil {
			v.failedEvent(s, err)
		}
		return
	}
	var wait *engine.AwaitingApprovalError
	awaiting := errors.As(err, &wait)
	if err != nil && !awaiting {
		v.failedEvent(s, err)
	}
	now := time.Now()
	if p := out.Superseded; p != nil {
		v.eventf(s, v1.EventTypeNormal, "PlanSuperseded", "Plan %s superseded: the Service, its nodes or the cloud changed", p.ID)
		v.auditf(s, out, "supersede", p, "", nil)
	}
	if p := out.Planned; p != nil && p.HasChanges {
		if s.kind == records.KindDrift {
			driftDetected.Inc()
			v.eventf(s, v1.EventTypeWarning, "DriftDetected", "Drift detected: %s (%d resources changed outside Terraform)", p.ID, len(p.Summary.Drift))
			v.auditf(s, out, "drift", p, "", nil)
		}
		v.eventf(s, v1.EventTypeNormal, "Planned", "Planned %s (%s)", p.ID, p.Summary)
		v.auditf(s, out, "plan", p, "", nil)
		if out.Awaiting == p && out.Policy == annotations.ApplyManual {
			v.eventf(s, v1.EventTypeNormal, "AwaitingApproval", "AwaitingApproval %s (%s): approve with annotation %s=%s or `examplectl approve`",
				p.ID, p.Summary, annotations.LBApprovePlan, p.ID)
		}
	}
	if out.IgnoredApproval != "" && out.Awaiting != nil {
		v.eventf(s, v1.EventTypeWarning, "ApprovalIgnored", "Approval of %s ignored: the plan awaiting approval is %s", out.IgnoredApproval, out.Awaiting.ID)
		v.auditf(s, out, "approve", nil, "ignored", map[string]string{"approved": out.IgnoredApproval, "awaiting": out.Awaiting.ID})
	}
	if p := out.Applied; p != nil && p.HasChanges {
		if out.Policy == annotations.ApplyManual {
			v.auditf(s, out, "approve", p, "approved", nil)
		}
		action := "apply"
		if p.Destroy {
			action = "destroy"
		}
		v.eventf(s, v1.EventTypeNormal, "Applied", "Applied %s (%s)", p.ID, p.Summary)
		v.auditf(s, out, action, p, string(records.Applied), nil)
	}
	if out.Result != nil {
		for _, w := range out.Result.Warnings {
			v.eventf(s, v1.EventTypeWarning, "TerraformWarning", "%s", w)
		}
	}
	if err != nil && !awaiting {
		v.auditf(s, out, "apply", out.Planned, string(records.Failed), map[string]string{"error": err.Error()})
	}
	v.setPhase(out, err, awaiting)
	if out.Applied != nil && out.Applied.Destroy {
		v.deleteRecord(ctx, out.Workspace) // records go with the workspace
		return
	}
	v.updateRecord(ctx, s, out, err, awaiting, now)
}

func (v *review) setPhase(out *engine.Outcome, err error, awaiting bool) {
	switch {
	case out.Applied != nil && out.Applied.Destroy:
		v.phases.set(out.Workspace, "")
	case awaiting && out.Policy == annotations.ApplyPlanOnly:
		v.phases.set(out.Workspace, "planned")
	case awaiting:
		v.phases.set(out.Workspace, "awaiting-approval")
	case err != nil:
		v.phases.set(out.Workspace, "failed")
	default:
		v.phases.set(out.Workspace, "applied")
	}
}

// updateRecord writes the outcome into the object's plan record.
func (v *review) updateRecord(ctx context.Context, s subject, out *engine.Outcome, err error, awaiting bool, now time.Time) {
	if v.store == nil {
		return
	}
	_, uerr := v.store.Update(ctx, out.Workspace, func(r *records.Record) error {
		r.Object, r.Workspace, r.Policy, r.UpdatedAt = s.ref, out.Workspace, string(out.Policy), now
		if len(out.Files) > 0 {
			r.Files = map[string]string{}
			for k, f := range out.Files {
				r.Files[k] = string(f)
			}
		}
		if p := out.Superseded; p != nil {
			decide(r, p.ID, records.Superseded, "", now)
		}
		if p := out.Planned; p != nil && p.HasChanges && r.Find(p.ID) == nil {
			r.Plans = append([]records.Plan{{
				ID: p.ID, Kind: kindOf(s, p), HCLHash: p.Hash, InputsDigest: out.InputsDigest, Summary: p.Summary, Policy: string(out.Policy),
				Outcome: records.AwaitingApproval, PlannedAt: now, Text: p.Text,
			}}, r.Plans...)
			if out.Policy == annotations.ApplyPlanOnly {
				r.Plans[0].Outcome = records.Planned
			}
		}
		if p := out.Applied; p != nil {
			decide(r, p.ID, records.Applied, "", now)
			r.Lock = nil
		}
		if s.kind == records.KindDrift {
			if r.Drift == nil {
				r.Drift = &records.Drift{}
			}
			r.Drift.CheckedAt, r.Drift.Detected = now, false
			if p := out.Planned; p != nil && p.HasChanges {
				r.Drift.Detected, r.Drift.LastDetectedAt, r.Drift.PlanID, r.Drift.Resources = true, &now, p.ID, p.Summary.Drift
			}
		}
		if err != nil && !awaiting {
			if p := out.Planned; p != nil && p.HasChanges {
				decide(r, p.ID, records.Failed, err.Error(), now)
			}
			if id, holder, created, ok := runner.HeldLock(err); ok {
				r.Lock = &records.LockInfo{ID: id, Holder: holder, Created: created, SeenAt: now}
			}
		}
		return nil
	})
	if uerr != nil {
		klog.ErrorS(uerr, "cannot update plan record", "object", s.String(), "workspace", out.Workspace)
	}
}

func decide(r *records.Record, id string, o records.Outcome, msg string, now time.Time) {
	if p := r.Find(id); p != nil {
		p.Outcome, p.Error, p.DecidedAt = o, msg, &now
	}
}

func kindOf(s subject, p *runner.Plan) string {
	if p.Destroy {
		return records.KindDestroy
	}
	return s.kind
}

func (v *review) deleteRecord(ctx context.Context, workspace string) {
	if v.store == nil {
		return
	}
	if err := v.store.Delete(ctx, workspace); err != nil {
		klog.ErrorS(err, "cannot delete plan record", "workspace", workspace)
	}
}

// lock is the state lock recorded for workspace, if any.
func (v *review) lock(ctx context.Context, workspace string) *records.LockInfo {
	if v.store == nil {
		return nil
	}
	r, err := v.store.Get(ctx, workspace)
	if err != nil || r == nil {
		return nil
	}
	return r.Lock
}

// routeAnnotations reads approve-plan and force-unlock from the route set's
// record ConfigMap (the route set has no object of its own to annotate).
func (v *review) routeAnnotations(ctx context.Context, workspace string) (approve, unlock string) {
	if v.client == nil {
		return "", ""
	}
	cm, err := v.client.CoreV1().ConfigMaps(v.cfg.Review.Namespace).Get(ctx, "ccm-plans-"+workspace, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			klog.V(2).InfoS("cannot read route set record", "err", err)
		}
		return "", ""
	}
	return cm.Annotations[string(annotations.LBApprovePlan)], cm.Annotations[string(annotations.LBForceUnlock)]
}

func (v *review) failedEvent(s subject, err error) {
	reason := "ApplyFailed"
	var re *runner.Error
	switch {
	case errors.Is(err, runner.ErrStateLocked):
		reason = "StateLocked"
	case errors.As(err, &re) && re.Op == "plan":
		reason = "PlanFailed"
	case !errors.As(err, &re):
		reason = "ReconcileFailed"
	}
	v.eventf(s, v1.EventTypeWarning, reason, "%v", err)
}

// auditf appends one audit entry.
func (v *review) auditf(s subject, out *engine.Outcome, action string, p *runner.Plan, outcome string, details map[string]string) {
	if v.audit == nil {
		return
	}
	e := audit.Entry{Time: time.Now(), Action: action, Object: s.String(), Workspace: out.Workspace,
		Policy: string(out.Policy), Outcome: outcome, Details: details}
	if p != nil {
		e.PlanID, e.Summary = p.ID, p.Summary.String()
	}
	if err := v.audit.Write(e); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

// forceUnlock opens job's state lock when lockID (a person's force-unlock
// annotation) names the lock the record says is in the way; only then.
func (v *review) forceUnlock(ctx context.Context, r *runner.Runner, subj subject, lockID string, job runner.Job) {
	lock := v.lock(ctx, job.Key)
	if lock == nil || lock.ID != lockID {
		return
	}
	if err := r.ForceUnlock(ctx, job, lockID); err != nil {
		klog.ErrorS(err, "force-unlock failed", "object", subj.String(), "lockID", lockID)
		return
	}
	v.forceUnlocked(subj, job.Key, lockID, "requested by annotation "+string(annotations.LBForceUnlock))
}

// forceUnlocked records a lock forced open (stale, or on request).
func (v *review) forceUnlocked(s subject, workspace, lockID, why string) {
	if v.audit != nil {
		_ = v.audit.Write(audit.Entry{Time: time.Now(), Action: "force-unlock", Object: s.String(), Workspace: workspace,
			Details: map[string]string{"lockID": lockID, "reason": why}})
	}
	v.eventf(s, v1.EventTypeWarning, "ForceUnlocked", "Forced open Terraform state lock %s (%s)", lockID, why)
}
