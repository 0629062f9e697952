package preview

import (
	"fmt"
	"slices"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// Prefix starts every warning, so a reader knows who says it.
const Prefix = "example-cloud-controller-manager: "

// maxWarning is what the API server keeps of one warning (longer ones
// may be truncated).
const maxWarning = 256

// Change is what an edit of a Service would do.
type Change struct {
	// Old and New are the load balancer's shape before and after; Old is
	// nil for a Service that gets its first load balancer.
	Old, New *renderer.Shape
	// Plan is the speculative plan; nil when only the renderings were
	// compared, Fallback says why.
	Plan     *runner.Speculation
	Fallback string
	// Verdicts are the policy rules that match the plan.
	Verdicts []policy.Verdict
	// Policy is the apply policy in force (the stricter of the cluster's
	// and the Service's); Approvals how many a held plan needs.
	Policy    annotations.ApplyPolicy
	Approvals int
	// Refusals are the controller's own refusals of the new Service.
	Refusals []string
}

// Outcome is a change's kind, as exit statuses give it (examplectl
// preview, like terraform plan -detailed-exitcode).
type Outcome int

const (
	NoChange      Outcome = 0
	Changes       Outcome = 2
	NeedsApproval Outcome = 3
	Refused       Outcome = 1
)

// outcomeWords name the outcomes in the last warning, which examplectl
// preview reads (ParseOutcome).
var outcomeWords = map[Outcome]string{NoChange: "no-change", Changes: "change", NeedsApproval: "needs-approval", Refused: "refused"}

// OutcomeLine is the last warning's start: "...: preview outcome: change".
const OutcomeLine = Prefix + "preview outcome: "

func (o Outcome) String() string { return outcomeWords[o] }

// ParseOutcome finds the outcome among a preview's warnings; ok is false
// when none says it (no preview ran: the webhook is not installed, or
// the controller is down).
func ParseOutcome(warnings []string) (o Outcome, ok bool) {
	for _, w := range warnings {
		if word, found := strings.CutPrefix(w, OutcomeLine); found {
			for o, name := range outcomeWords {
				if name == word {
					return o, true
				}
			}
		}
	}
	return 0, false
}

// Outcome is what c amounts to.
func (c Change) Outcome() Outcome {
	switch {
	case len(c.Refusals) > 0 || policy.Denied(c.Verdicts) != nil:
		return Refused
	case !c.changes():
		return NoChange
	case c.held():
		return NeedsApproval
	}
	return Changes
}

func (c Change) changes() bool {
	if c.Plan != nil {
		return c.Plan.HasChanges
	}
	return c.Old == nil || !equalShapes(*c.Old, *c.New)
}

func (c Change) held() bool {
	return c.Policy != annotations.ApplyAuto || len(c.Verdicts) > 0
}

// Warnings are the change in a reviewer's words, each short enough for
// the API server to keep whole.
func (c Change) Warnings() []string {
	out := c.lines()
	return append(out, OutcomeLine+c.Outcome().String())
}

func (c Change) lines() []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, clip(Prefix+fmt.Sprintf(format, args...)))
	}
	for _, r := range c.Refusals {
		add("the controller would refuse this Service: %s", r)
	}
	if len(c.Refusals) > 0 {
		return out
	}
	switch {
	case c.Plan != nil && !c.Plan.HasChanges:
		add("no cloud change (terraform plan)")
		return out
	case c.Plan != nil:
		add("cloud change (terraform plan): %s", c.Plan.Summary)
		for _, line := range resourceLines(c.Plan) {
			add("%s", line)
		}
		if line := delayLine(c.Plan); line != "" {
			add("%s", line)
		}
	case c.Old == nil:
		add("a new load balancer %s (%s) will be created (from the rendering%s)", c.New.Name, c.New.Type, because(c.Fallback))
	case !c.changes():
		add("no cloud change (from the rendering%s)", because(c.Fallback))
		return out
	default:
		add("cloud change (from the rendering%s, not a terraform plan)", because(c.Fallback))
		for _, line := range replacementLines(*c.Old, *c.New) {
			add("%s", line)
		}
	}
	for _, line := range listenerLines(c.Old, c.New) {
		add("%s", line)
	}
	for _, line := range settingLines(c.Old, c.New) {
		add("%s", line)
	}
	if d := policy.Denied(c.Verdicts); d != nil {
		add("rule %s denies this change: %s", d.Rule, d.Message)
		return out
	}
	for _, v := range c.Verdicts {
		add("rule %s holds this change for approval (%d needed): %s", v.Rule, c.Approvals, v.Message)
	}
	switch c.Policy {
	case annotations.ApplyManual:
		add("apply policy manual: the plan waits for %d approval(s) before it is applied", c.Approvals)
	case annotations.ApplyPlanOnly:
		add("apply policy plan-only: the plan is recorded and never applied")
	}
	return out
}

func because(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// resourceLines name each resource the plan touches, and for a
// replacement the attributes that force it.
func resourceLines(sp *runner.Speculation) []string {
	forced := map[string][]string{}
	if sp.JSON != nil {
		for _, rc := range sp.JSON.ResourceChanges {
			if rc == nil || rc.Change == nil || !rc.Change.Actions.Replace() {
				continue
			}
			forced[rc.Address] = replacePaths(rc.Change)
		}
	}
	var out []string
	for _, r := range sp.Summary.Resources {
		verb, ok := verbs[r.Action]
		if !ok {
			continue
		}
		line := fmt.Sprintf("%s %s", verb, r.Address)
		if paths := forced[r.Address]; len(paths) > 0 {
			line += " (because " + strings.Join(paths, ", ") + " changes)"
		}
		out = append(out, line)
	}
	return out
}

// delayLine says a change of the deregistration delay the load balancer
// asks of its shared target pool (renderer.DelayOutput): no resource of
// the Service's changes, but the pool follows once the plan is applied.
func delayLine(sp *runner.Speculation) string {
	if sp.JSON == nil {
		return ""
	}
	c := sp.JSON.OutputChanges[renderer.DelayOutput]
	if c == nil || c.Actions.NoOp() {
		return ""
	}
	seconds := func(v any) string {
		if n, ok := v.(float64); ok {
			return fmt.Sprintf("%gs", n)
		}
		return "the cluster's"
	}
	return fmt.Sprintf("the deregistration delay asked of the target pool: %s -> %s (the shared pool follows once this plan is applied)", seconds(c.Before), seconds(c.After))
}

// verbs are the plan actions a reviewer reads, as they read them.
var verbs = map[string]string{
	"create": "adds", "update": "changes in place", "delete": "destroys", "replace": "REPLACES",
	"import": "imports", "move": "moves", "remove": "forgets",
}

// replacePaths are the top attribute names forcing a replacement.
func replacePaths(c *tfjson.Change) []string {
	var out []string
	for _, p := range c.ReplacePaths {
		steps, ok := p.([]any)
		if !ok || len(steps) == 0 {
			continue
		}
		if name, ok := steps[0].(string); ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// replacementLines are the rendering's changes that replace the load
// balancer (a new address).
func replacementLines(old, cur renderer.Shape) []string {
	var out []string
	if old.Internal != cur.Internal {
		out = append(out, fmt.Sprintf("REPLACES the load balancer (internal %t -> %t): it gets a new address", old.Internal, cur.Internal))
	}
	if old.IPFamily != cur.IPFamily {
		out = append(out, fmt.Sprintf("REPLACES the load balancer (ip family %s -> %s): it gets a new address", old.IPFamily, cur.IPFamily))
	}
	return out
}

// clip keeps s within what the API server keeps of a warning.
func clip(s string) string {
	if len(s) <= maxWarning {
		return s
	}
	return s[:maxWarning-3] + "..."
}

// RenderedResources is what a plan would do to the load balancer, read
// from the renderings alone (for the policy rules when no plan could be
// made): created, replaced (internal or IP family changes), changed, or
// nothing.
func (c Change) RenderedResources() []runner.ResourceChange {
	rc := runner.ResourceChange{Address: renderer.LoadBalancerAddress, Type: renderer.LoadBalancerType}
	switch {
	case c.New == nil:
		return nil
	case c.Old == nil:
		rc.Action = "create"
	case len(replacementLines(*c.Old, *c.New)) > 0:
		rc.Action = "replace"
	case !equalShapes(*c.Old, *c.New):
		rc.Action = "update"
	default:
		return nil
	}
	return []runner.ResourceChange{rc}
}
