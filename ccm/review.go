package ccm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/redact"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// review turns what the engine decided into what people read: events on
// the Service (the route set's on its record ConfigMap), the plan record,
// the audit log and metrics; and it answers the engine's questions about
// approvals and kept plans.
type review struct {
	cfg       *cloudconfig.Config
	client    kubernetes.Interface
	store     *records.Store // nil until the CCM has a Kubernetes client
	audit     *audit.Log
	recorder  record.EventRecorder
	approvals *approvals
	phases    phases
	// self is the controller's own user, as the API server knows it: the
	// actor of what it does on its own (auto applies, stale unlocks).
	self string

	// said remembers one-time messages (an ignored approval, a retired
	// annotation) already reported.
	said sync.Map

	// credentials reads the state backend's credentials now, for the
	// redactors; redacted is when it last did.
	credentials func() []string
	redactedAt  atomic.Int64
	// secrets scrub event messages as the audit log scrubs its lines:
	// events are read by whoever may read the object's namespace.
	secrets *redact.Scrubber

	// warm answers the first record reads after a start.
	warm warmRecords
}

// credentialsRefresh is how often rotated backend credentials are added
// to the audit log's redactor.
const credentialsRefresh = time.Minute

// redactCredentials registers the backend's current credentials with the
// redactors, at most once per credentialsRefresh.
func (v *review) redactCredentials() {
	last := v.redactedAt.Load()
	if v.credentials == nil || (last != 0 && time.Since(time.Unix(0, last)) < credentialsRefresh) {
		return
	}
	if v.redactedAt.CompareAndSwap(last, time.Now().UnixNano()) {
		v.redact(v.credentials()...)
	}
}

// redact keeps secret values out of events and the audit log.
func (v *review) redact(values ...string) {
	v.secrets.Add(values...)
	if v.audit != nil {
		v.audit.Redact(values...)
	}
}

func newReview(cfg *cloudconfig.Config, log *audit.Log) *review {
	return &review{cfg: cfg, audit: log, recorder: &record.FakeRecorder{}, self: "example-cloud-controller-manager",
		approvals: newApprovals(cfg.Review.Namespace, cfg.Review.Approvals.Required), secrets: redact.New()}
}

func (v *review) setClient(client kubernetes.Interface, recorder record.EventRecorder) {
	v.client = client
	v.store = records.NewStore(client, v.cfg.Review.Namespace, v.cfg.Review.Keep)
	v.recorder = recorder
}

// subject is the object a reconcile is about.
type subject struct {
	ref   objectref.Ref
	event runtime.Object // where events go
	kind  string         // records.KindChange, KindDestroy or KindDrift
	// author made the change planned, as the API server vouched; "" when
	// unknown.
	author string
	// object is the object as policy rules see it.
	meta metav1.ObjectMeta
	// members are a group's member Services: as policy rules see them,
	// then (set after the reconcile) as its record keeps them.
	members []*v1.Service
}

func (s subject) String() string { return s.ref.String() }

// eventf records an event on s's object, secrets scrubbed (an error's
// text may quote a credential).
func (v *review) eventf(s subject, typ, reason, format string, args ...any) {
	if s.event != nil {
		v.recorder.Event(s.event, typ, reason, v.secrets.String(fmt.Sprintf(format, args...)))
	}
}

// once reports a message the first time it is seen.
func (v *review) once(key string) bool {
	_, seen := v.said.LoadOrStore(key, true)
	return !seen
}

// report records one reconcile. Failing to record is logged, never
// returned: the infrastructure change already happened (or not).
func (v *review) report(ctx context.Context, s subject, out *engine.Outcome, err error) {
	v.redactCredentials()
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	awaiting, isDenied := errors.As(err, &wait), errors.As(err, &denied)
	failed := err != nil && !awaiting && !isDenied && !errors.Is(err, engine.ErrSkipped)
	if failed {
		v.failedEvent(s, err)
	}
	if out == nil || out.Workspace == "" {
		return
	}
	if err == nil && out.Result != nil && out.Result.FastPath && out.Superseded == nil {
		v.phases.set(out.Workspace, "applied")
		return // nothing happened that the record does not say already
	}
	if out.Recovered != "" {
		v.eventf(s, v1.EventTypeWarning, "LoadBalancerRecovered", "Load balancer %s, created by an apply that could not record it, is back in the state: the deletion destroys it", out.Recovered)
		v.auditf(s, out, audit.Entry{Action: "import", Outcome: "recovered", Details: map[string]string{"id": out.Recovered}}, nil)
	}
	if p := out.Superseded; p != nil {
		v.eventf(s, v1.EventTypeNormal, "PlanSuperseded", "Plan %s superseded: the object, its nodes or the cloud changed", p.ID)
		v.auditf(s, out, audit.Entry{Action: "supersede", Actor: v.self}, p)
		v.approvals.removeForPlan(ctx, s.ref, p.ID)
	}
	if p := out.Planned; p != nil && p.HasChanges {
		if s.kind == records.KindDrift {
			driftDetected.Inc()
			v.eventf(s, v1.EventTypeWarning, "DriftDetected", "Drift detected: %s (%d resources changed outside Terraform)", p.ID, len(p.Summary.Drift))
			v.auditf(s, out, audit.Entry{Action: audit.ActionDrift}, p)
		}
		v.eventf(s, v1.EventTypeNormal, "Planned", "Planned %s (%s)", p.ID, p.Summary)
		v.auditf(s, out, audit.Entry{Action: audit.ActionPlan, Details: verdictDetails(out)}, p)
	}
	v.reportDecision(ctx, s, out, denied)
	if out.Result != nil {
		for _, w := range out.Result.Warnings {
			v.eventf(s, v1.EventTypeWarning, "TerraformWarning", "%s", w)
		}
	}
	if failed {
		v.auditf(s, out, audit.Entry{Action: audit.ActionApply, Outcome: string(records.Failed), Error: err.Error()}, cmp.Or(out.Attempted, out.Planned))
	}
	v.setPhase(out, err, awaiting, isDenied)
	if out.Applied != nil && out.Applied.Destroy {
		v.deleteRecord(ctx, out.Workspace) // records go with the workspace
		return
	}
	v.updateRecord(ctx, s, out, err, now())
}

// reportDecision reports what became of the plan decided: denied,
// awaiting approval (and the approvals not counted), or applied.
func (v *review) reportDecision(ctx context.Context, s subject, out *engine.Outcome, denied *engine.DeniedError) {
	fresh := out.Awaiting != nil && out.Planned == out.Awaiting
	switch {
	case denied != nil && fresh:
		v.eventf(s, v1.EventTypeWarning, "PlanDenied", "Plan %s denied by policy rule %s: %s", denied.PlanID, denied.Verdict.Rule, denied.Verdict.Message)
		v.auditf(s, out, audit.Entry{Action: "deny", Outcome: string(records.Denied), Details: verdictDetails(out)}, out.Awaiting)
	case out.Awaiting != nil && denied == nil && fresh && out.Policy != annotations.ApplyPlanOnly:
		v.eventf(s, v1.EventTypeNormal, "AwaitingApproval", "AwaitingApproval %s (%s): %s; approve with `examplectl approve %s %s`",
			out.Awaiting.ID, out.Awaiting.Summary, v.why(out), s.ref.Arg(), out.Awaiting.ID)
	}
	for _, msg := range out.Approval.Ignored {
		if v.once("ignored\x00" + msg) {
			v.eventf(s, v1.EventTypeWarning, "ApprovalIgnored", "%s", msg)
			v.auditf(s, out, audit.Entry{Action: audit.ActionApprove, Outcome: "ignored", Details: map[string]string{"reason": msg}}, out.Awaiting)
		}
	}
	p := out.Awaiting
	if p == nil {
		p = out.Applied
	}
	if p != nil {
		for _, who := range out.Approval.Approvers {
			if v.once("approved\x00" + p.ID + "\x00" + who) {
				v.auditf(s, out, audit.Entry{Action: audit.ActionApprove, Actor: who, Outcome: "counted",
					Details: map[string]string{"approvals": fmt.Sprintf("%d of %d", len(out.Approval.Approvers), v.cfg.Review.Approvals.Required)}}, p)
			}
		}
	}
	if p := out.Applied; p != nil && p.HasChanges {
		action, actor := audit.ActionApply, v.self
		if p.Destroy {
			action = audit.ActionDestroy
		}
		by := ""
		if len(out.Approval.Approvers) > 0 {
			actor = strings.Join(out.Approval.Approvers, ", ")
			by = " approved by " + actor
		}
		v.eventf(s, v1.EventTypeNormal, "Applied", "Applied %s (%s)%s", p.ID, p.Summary, by)
		details := verdictDetails(out)
		if s.author != "" {
			details = withDetail(details, "author", s.author)
		}
		v.auditf(s, out, audit.Entry{Action: action, Actor: actor, Outcome: string(records.Applied), Details: details}, p)
		v.approvals.removeForPlan(ctx, s.ref, p.ID)
	}
}

// applyStarting writes the audit line of an apply before it starts.
func (v *review) applyStarting(s subject, pol annotations.ApplyPolicy, p *runner.Plan, approvers []string) {
	action, actor := audit.ActionApply, v.self
	if p.Destroy {
		action = audit.ActionDestroy
	}
	if len(approvers) > 0 {
		actor = strings.Join(approvers, ", ")
	}
	v.auditf(s, &engine.Outcome{Policy: pol, Workspace: p.Workspace}, audit.Entry{Action: action, Actor: actor, Outcome: "started"}, p)
}

// why says why a plan waits: the manual policy or the rules that flagged it.
func (v *review) why(out *engine.Outcome) string {
	need := fmt.Sprintf("needs %d approval(s)", v.cfg.Review.Approvals.Required)
	if len(out.Verdicts) == 0 {
		return need + " (manual policy)"
	}
	var rules []string
	for _, vd := range out.Verdicts {
		rules = append(rules, fmt.Sprintf("rule %s: %s", vd.Rule, vd.Message))
	}
	return need + " (" + strings.Join(rules, "; ") + ")"
}

func verdictDetails(out *engine.Outcome) map[string]string {
	if len(out.Verdicts) == 0 {
		return nil
	}
	var parts []string
	for _, vd := range out.Verdicts {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", vd.Rule, vd.Effect, vd.Message))
	}
	return map[string]string{"verdicts": strings.Join(parts, "; ")}
}

func withDetail(m map[string]string, k, val string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = val
	return m
}

func (v *review) setPhase(out *engine.Outcome, err error, waiting, denied bool) {
	switch {
	case out.Applied != nil && out.Applied.Destroy:
		v.phases.set(out.Workspace, "")
	case denied:
		v.phases.set(out.Workspace, "denied")
	case waiting && out.Policy == annotations.ApplyPlanOnly:
		v.phases.set(out.Workspace, "planned")
	case waiting:
		v.phases.set(out.Workspace, "awaiting-approval")
	case err != nil && !errors.Is(err, engine.ErrSkipped):
		v.phases.set(out.Workspace, "failed")
	case err == nil:
		v.phases.set(out.Workspace, "applied")
	}
}

func (v *review) failedEvent(s subject, err error) {
	v.eventf(s, v1.EventTypeWarning, failedReason(err), "%v", err)
}

// failedReason is the event reason of a failed reconcile.
func failedReason(err error) string {
	reason := "ApplyFailed"
	var re *runner.Error
	var ae *annotations.Error
	var ie *renderer.InputError
	var tm *renderer.TooManyListenersError
	var pe *renderer.UnsupportedProtocolError
	var cs *CertificateSecretError
	var cu *CertificatesUnsupportedError
	switch {
	case errors.As(err, &cs):
		reason = "CertificateSecretInvalid" // the tenant's Secret to fix; nothing was planned
	case errors.As(err, &cu):
		reason = "CertificatesUnsupported"
	case errors.As(err, &ae), errors.As(err, &ie), errors.As(err, &tm), errors.As(err, &pe):
		reason = "InvalidService" // the tenant's to fix; nothing was planned
	case errors.Is(err, runner.ErrOwnerMismatch):
		reason = "WorkspaceOwnedByAnother"
	case errors.Is(err, runner.ErrStateLocked):
		reason = "StateLocked"
	case errors.As(err, &re) && re.Op == "plan":
		reason = "PlanFailed"
	case !errors.As(err, &re):
		reason = "ReconcileFailed"
	}
	return reason
}

// auditf appends one audit entry for s; p, if set, names the plan.
func (v *review) auditf(s subject, out *engine.Outcome, e audit.Entry, p *runner.Plan) {
	if v.audit == nil {
		return
	}
	e.Time, e.Object, e.Workspace, e.Policy = time.Now(), s.String(), out.Workspace, string(out.Policy)
	if e.Actor == "" {
		e.Actor = v.self
	}
	if p != nil {
		e.PlanID, e.Summary = p.ID, p.Summary.String()
	}
	if err := v.audit.Write(e); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

// retiredAnnotations reports, once per value, an annotation that no
// longer does anything.
func (v *review) retiredAnnotations(s subject, ann map[string]string) {
	for name, why := range annotations.Retired {
		if val, ok := ann[string(name)]; ok && v.once("retired\x00"+s.ref.UID+"\x00"+string(name)+"\x00"+val) {
			v.eventf(s, v1.EventTypeWarning, "RetiredAnnotation", "Annotation %s is ignored: %s", name, why)
		}
	}
}

// now is the time records and audit lines carry.
func now() time.Time { return time.Now() }
