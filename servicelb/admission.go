package servicelb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/webhook"
)

// Admission answers the admission webhooks of LoadBalancer Services:
// the author stamp (mutating) and the preview (validating). Both are
// fail-open: an error answers "allowed", with a warning for the preview.
type Admission struct {
	cfg    *cloudconfig.Config
	lb     *shared
	engine previewEngine
	pods   *podPools
	nodes  corelisters.NodeLister
	// rates are the namespaces' speculative plan budgets, by namespace,
	// of those that previewed since their budget would have refilled.
	mu    sync.Mutex
	rates map[string]*budget
}

// Admission answers the Services' admission webhooks, previewing on the
// nodes nodes lists.
func (l *LoadBalancers) Admission(nodes corelisters.NodeLister) *Admission {
	return &Admission{cfg: l.shared.cfg, lb: l.shared, engine: l.engine, pods: l.podPools, nodes: nodes}
}

// budget is a namespace's limiter and when it last spent from it.
type budget struct {
	*rate.Limiter
	used time.Time
}

// PlanAllowed spends one of ns's speculative plans (webhook.previewsPerMinute).
// A budget unused for as long as it takes to refill is full, the same as
// a new one: it is dropped, so the budgets are those of the namespaces
// previewing now, not of every namespace that ever did.
func (a *Admission) PlanAllowed(ns string) bool {
	w := a.cfg.Webhook
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.rates[ns]
	if !ok {
		refill := time.Duration(float64(w.PreviewBurst) / (float64(w.PreviewsPerMinute) / 60) * float64(time.Second))
		for k, old := range a.rates {
			if now.Sub(old.used) > refill {
				delete(a.rates, k)
			}
		}
		if a.rates == nil {
			a.rates = map[string]*budget{}
		}
		b = &budget{Limiter: rate.NewLimiter(rate.Limit(float64(w.PreviewsPerMinute)/60), w.PreviewBurst)}
		a.rates[ns] = b
	}
	b.used = now
	return b.AllowN(now, 1)
}

// Budgets is how many namespaces' budgets are kept.
func (a *Admission) Budgets() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.rates)
}

// Author stamps review.example.com/author (preview.Author).
func (a *Admission) Author(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	allowed := &admissionv1.AdmissionResponse{Allowed: true}
	cur, old, err := requestServices(req)
	if err != nil || cur == nil {
		return allowed
	}
	value, keep := preview.Author(old, cur, req.UserInfo.Username)
	have, has := cur.Annotations[preview.AuthorAnnotation]
	path := "/metadata/annotations/" + webhook.EscapePointer(preview.AuthorAnnotation)
	var ops []webhook.PatchOp
	switch {
	case keep && has && have == value, !keep && !has:
		return allowed
	case !keep:
		ops = append(ops, webhook.PatchOp{Op: "remove", Path: path})
	case cur.Annotations == nil:
		ops = append(ops, webhook.PatchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{preview.AuthorAnnotation: value}})
	default:
		ops = append(ops, webhook.PatchOp{Op: "add", Path: path, Value: value}) // add replaces a member
	}
	if err := webhook.SetPatch(allowed, ops...); err != nil {
		klog.ErrorS(err, "Author stamp", "service", klog.KRef(req.Namespace, req.Name))
	}
	return allowed
}

// Preview warns what the edit would do to the cloud (preview.Change);
// with webhook.refuse, the controller's own refusals deny it.
func (a *Admission) Preview(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	cur, old, err := requestServices(req)
	if err != nil {
		resp.Warnings = []string{preview.Prefix + "preview unavailable: " + err.Error()}
		return resp
	}
	if cur == nil || cur.Spec.Type != v1.ServiceTypeLoadBalancer {
		if old != nil && old.Spec.Type == v1.ServiceTypeLoadBalancer {
			resp.Warnings = []string{preview.Prefix + "the Service stops being a LoadBalancer: its load balancer is destroyed"}
		}
		return resp
	}
	c := a.change(ctx, old, cur, req.DryRun != nil && *req.DryRun)
	resp.Warnings = c.Warnings()
	if a.cfg.Webhook.Refuse && len(c.Refusals) > 0 {
		resp.Allowed = false
		resp.Result = refusal(c.Refusals)
	}
	return resp
}

// change is what turning old into cur (old nil: creating cur) would do:
// from a speculative plan for a dry run, from the renderings for an edit
// being stored (the controller plans it right after; a plan there would
// make every Service update wait for terraform).
func (a *Admission) change(ctx context.Context, old, cur *v1.Service, dryRun bool) (c preview.Change) {
	c = preview.Change{Approvals: a.cfg.Review.Approvals.Required}
	in := annotations.Read(cur)
	if err := a.lb.refs.authorize(ctx, in); err != nil && err != in.Err { //nolint:errorlint // in.Err itself: told below
		c.Refusals = append(c.Refusals, err.Error())
	}
	ann := in.LB
	if in.Err != nil {
		c.Refusals = append(c.Refusals, in.Err.Error())
	} else if err := a.engine.CheckService(in); err != nil {
		c.Refusals = append(c.Refusals, err.Error())
	}
	if len(c.Refusals) > 0 {
		return c
	}
	c.Policy = a.lb.policy(ann)
	shape, err := a.engine.LoadBalancerShape(in)
	if err != nil {
		c.Refusals = append(c.Refusals, err.Error())
		return c
	}
	c.New = &shape
	if old != nil && old.Spec.Type == v1.ServiceTypeLoadBalancer {
		if s, err := a.engine.LoadBalancerShape(annotations.Read(old)); err == nil {
			c.Old = &s
		}
	}
	// Without a plan, the rules judge what the renderings say.
	defer func() {
		if c.Plan == nil && len(c.Refusals) == 0 {
			c.Verdicts = a.engine.EvaluateRendered(c.RenderedResources(), policyObject(cur))
		}
	}()
	if g := ann.Group.In(cur.Namespace); g.Name != "" {
		c.Fallback = "a member of load balancer group " + g.Namespace + "/" + g.Name + ", whose plan is the group's"
		return c
	}
	if old == nil {
		return c // nothing in the state: the rendering is the plan
	}
	if !preview.ChangesRendered(old, cur) {
		c.Fallback = "the edit changes nothing the controller renders"
		return c
	}
	if !dryRun {
		c.Fallback = "not a dry run: the controller's plan follows"
		return c
	}
	if !a.PlanAllowed(cur.Namespace) {
		c.Fallback = fmt.Sprintf("namespace %s used its %d previews a minute", cur.Namespace, a.cfg.Webhook.PreviewsPerMinute)
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Webhook.PreviewBudget.Duration)
	defer cancel()
	sp, verdicts, err := a.plan(ctx, in)
	switch {
	case err == nil:
		c.Plan, c.Verdicts = sp, verdicts
	case errors.Is(err, engine.ErrNoState):
		c.Fallback = "no state yet"
	case errors.As(err, new(*noPodPoolError)):
		c.Fallback = err.Error()
	case errors.Is(err, engine.ErrBusy) || ctx.Err() != nil:
		c.Fallback = fmt.Sprintf("terraform did not answer within %s", a.cfg.Webhook.PreviewBudget.Duration)
	default:
		c.Fallback = "the plan failed: " + err.Error()
	}
	if err != nil {
		klog.V(2).InfoS("Preview fell back to the rendering", "service", klog.KObj(cur), "reason", c.Fallback)
	}
	return c
}

// plan is the speculative plan of cur on the nodes, or target pool, the
// service controller would give it.
func (a *Admission) plan(ctx context.Context, in *annotations.Service) (*engine.Speculation, []engine.Verdict, error) {
	obj := policyObject(in.Service)
	if in.LB.Pods() {
		pods, err := a.podPools(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		return a.engine.PreviewLoadBalancer(ctx, in, nil, "", pods, obj)
	}
	poolID := ""
	if !a.cfg.LoadBalancer.TargetPools.Disabled {
		if sel, ok, err := engine.Selection(in); err == nil && ok {
			if poolID, err = a.engine.TargetPoolID(ctx, sel); err != nil {
				return nil, nil, err
			}
		}
	}
	var nodes []*v1.Node
	if poolID == "" {
		all, err := a.nodes.List(labels.Everything())
		if err != nil {
			return nil, nil, err
		}
		nodes = balancedNodes(all)
	}
	return a.engine.PreviewLoadBalancer(ctx, in, nodes, poolID, nil, obj)
}

// noPodPoolError: a pod pool the Service forwards to does not exist yet,
// so there is no plan to preview (its first reconcile makes it).
type noPodPoolError struct{ port lbmodel.ServicePort }

func (e *noPodPoolError) Error() string {
	return fmt.Sprintf("the pod pool of %s does not exist yet (the Service's first reconcile creates it)", e.port)
}

// podPools are the existing pod pools of in's ports, made by nobody: the
// leader's as it keeps them, else as their state records them.
func (a *Admission) podPools(ctx context.Context, in *annotations.Service) (map[lbmodel.ServicePort]string, error) {
	ports, err := engine.PodPorts(in)
	if err != nil {
		return nil, err
	}
	ids, missing, err := a.pods.known(ctx, ports)
	switch {
	case err != nil:
		return nil, err
	case missing != nil:
		return nil, &noPodPoolError{port: *missing}
	}
	return ids, nil
}

// policyObject is svc as policy rules see it.
func policyObject(svc *v1.Service) engine.PolicyObject {
	return engine.PolicyObject{Kind: objectref.KindService, Namespace: svc.Namespace, Name: svc.Name, Labels: svc.Labels, Annotations: svc.Annotations}
}

// balancedNodes are the nodes the service controller hands a load
// balancer (its stable node set: not being deleted, not excluded by
// label, not tainted for deletion by the cluster autoscaler).
func balancedNodes(all []*v1.Node) []*v1.Node {
	var out []*v1.Node
	for _, n := range all {
		if !n.DeletionTimestamp.IsZero() {
			continue
		}
		if engine.Excluded(n) {
			continue
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			tainted = tainted || t.Key == toBeDeletedTaint
		}
		if !tainted {
			out = append(out, n)
		}
	}
	return out
}

// toBeDeletedTaint is the cluster autoscaler's (the service controller's
// ToBeDeletedTaint).
const toBeDeletedTaint = "ToBeDeletedByClusterAutoscaler"

// requestServices decodes the request's Service and old Service (nil when
// absent).
func requestServices(req *admissionv1.AdmissionRequest) (cur, old *v1.Service, err error) {
	decode := func(raw []byte) (*v1.Service, error) {
		if len(raw) == 0 {
			return nil, nil
		}
		var s v1.Service
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode Service: %w", err)
		}
		return &s, nil
	}
	if cur, err = decode(req.Object.Raw); err != nil {
		return nil, nil, err
	}
	if old, err = decode(req.OldObject.Raw); err != nil {
		return nil, nil, err
	}
	return cur, old, nil
}

// refusal is the denial's status: the controller's refusals.
func refusal(reasons []string) *metav1.Status {
	return &metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonInvalid, Code: http.StatusUnprocessableEntity,
		Message: "the example cloud controller would refuse this Service: " + strings.Join(reasons, "; ")}
}
