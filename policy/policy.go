// Package policy decides, with rules written in CEL, what a plan may do
// without a person: a rule that matches a plan either holds it for
// approval or denies it, with a message. Rules are compiled (and
// type-checked) once, at start-up, and evaluated on every plan with
// changes, against the plan's resource actions (from terraform's plan
// stream), the object (kind, namespace, name, labels, annotations) and,
// only for rules that read them, the planned attribute values.
package policy

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// Effect is what a matching rule does to a plan.
type Effect string

// Effects.
const (
	// RequireApproval holds the plan until reviewers approve it, also
	// under the auto policy.
	RequireApproval Effect = "require-approval"
	// Deny: the plan is never applied.
	Deny Effect = "deny"
)

// Rule is one rule of the cloud config's review.policy.rules.
type Rule struct {
	// Name identifies the rule in verdicts, events and errors.
	Name string `json:"name"`
	// When is a CEL expression over object, plan and values that is true
	// for the plans the rule flags.
	When    string `json:"when"`
	Effect  Effect `json:"effect"`
	Message string `json:"message"`
}

// Object is the object a plan is for, as rules see it.
type Object struct {
	// Kind is Service, RouteSet, TargetPools or ServiceGroup.
	Kind      string `cel:"kind"`
	Namespace string `cel:"namespace"`
	Name      string `cel:"name"`
	// Labels and Annotations are the object's; a ServiceGroup's are its
	// first member's (the one that sets the load balancer).
	Labels      map[string]string `cel:"labels"`
	Annotations map[string]string `cel:"annotations"`
	// Members are a ServiceGroup's member Services (empty for others).
	Members []Member `cel:"members"`
}

// Member is one member Service of a ServiceGroup.
type Member struct {
	Namespace   string            `cel:"namespace"`
	Name        string            `cel:"name"`
	Labels      map[string]string `cel:"labels"`
	Annotations map[string]string `cel:"annotations"`
}

// Plan is what a plan does, as rules see it.
type Plan struct {
	// Kind is change, destroy or drift.
	Kind string `cel:"kind"`
	// Resources are the planned changes, one per resource instance.
	Resources []Resource `cel:"resources"`
	Add       int64      `cel:"add"`
	Change    int64      `cel:"change"`
	Remove    int64      `cel:"remove"`
	Import    int64      `cel:"import"`
	// Forget counts the resources the state forgets and the cloud keeps
	// (a hand-over's removed blocks).
	Forget int64 `cel:"forget"`
}

// Resource is one planned resource change.
type Resource struct {
	Address string `cel:"address"`
	Type    string `cel:"type"`
	// Action is create, update, delete, replace, read, noop, move, import or remove.
	Action string `cel:"action"`
	Reason string `cel:"reason"`
	// Importing: the change imports an existing object (an import block).
	Importing bool `cel:"importing"`
}

// Input is everything a rule may read. Values maps a resource address to
// {"before": ..., "after": ...}, the attribute values of terraform's JSON
// plan; it is filled only when some rule reads it (NeedsValues).
type Input struct {
	Object Object
	Plan   Plan
	Values map[string]any
}

// Verdict is what one rule said of a plan.
type Verdict struct {
	Rule    string `json:"rule"`
	Effect  Effect `json:"effect"`
	Message string `json:"message"`
}

// Rules are compiled rules.
type Rules struct {
	rules  []compiled
	values bool
}

type compiled struct {
	Rule
	prg cel.Program
}

// costLimit bounds one rule's evaluation: a plan of a few hundred
// resources stays far below it, a runaway comprehension does not.
const costLimit = 10_000_000

func env() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(ext.ParseStructTags(true), reflect.TypeOf(Object{}), reflect.TypeOf(Member{}), reflect.TypeOf(Plan{}), reflect.TypeOf(Resource{})),
		ext.Strings(),
		cel.Variable("object", cel.ObjectType("policy.Object")),
		cel.Variable("plan", cel.ObjectType("policy.Plan")),
		cel.Variable("values", cel.MapType(cel.StringType, cel.DynType)),
	)
}

// Compile checks and compiles rules. Every problem is reported, each
// naming its rule.
func Compile(rules []Rule) (*Rules, error) {
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("policy: cel environment: %w", err)
	}
	out := &Rules{}
	var errs []error
	seen := map[string]bool{}
	for i, r := range rules {
		c, usesValues, err := compile(e, r)
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if err == nil && seen[r.Name] {
			err = errors.New("another rule has this name")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %q: %w", name, err))
			continue
		}
		seen[r.Name] = true
		out.rules = append(out.rules, c)
		out.values = out.values || usesValues
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func compile(e *cel.Env, r Rule) (compiled, bool, error) {
	switch {
	case strings.TrimSpace(r.Name) == "":
		return compiled{}, false, errors.New("name is required")
	case r.Effect != RequireApproval && r.Effect != Deny:
		return compiled{}, false, fmt.Errorf("effect %q: want %q or %q", r.Effect, RequireApproval, Deny)
	case strings.TrimSpace(r.When) == "":
		return compiled{}, false, errors.New("when is required")
	case strings.TrimSpace(r.Message) == "":
		return compiled{}, false, errors.New("message is required (it is what people read when the rule flags a plan)")
	}
	ast, iss := e.Compile(r.When)
	if iss.Err() != nil {
		return compiled{}, false, fmt.Errorf("when: %w", iss.Err())
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return compiled{}, false, fmt.Errorf("when: the expression is of type %s, want bool", ast.OutputType())
	}
	prg, err := e.Program(ast, cel.CostLimit(costLimit))
	if err != nil {
		return compiled{}, false, fmt.Errorf("when: %w", err)
	}
	usesValues := false
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref.Name == "values" {
			usesValues = true
		}
	}
	return compiled{Rule: r, prg: prg}, usesValues, nil
}

// NeedsValues tells whether some rule reads attribute values, which cost
// a terraform show -json per plan.
func (r *Rules) NeedsValues() bool { return r != nil && r.values }

// Len is the number of rules.
func (r *Rules) Len() int {
	if r == nil {
		return 0
	}
	return len(r.rules)
}

// Evaluate returns the verdicts of the rules that match in. A rule that
// fails to evaluate flags the plan with its own effect: a broken rule must
// not let a plan through.
func (r *Rules) Evaluate(in Input) []Verdict {
	if r == nil {
		return nil
	}
	if in.Values == nil {
		in.Values = map[string]any{}
	}
	if in.Object.Labels == nil {
		in.Object.Labels = map[string]string{}
	}
	if in.Object.Annotations == nil {
		in.Object.Annotations = map[string]string{}
	}
	in.Object.Members = append([]Member{}, in.Object.Members...) // filled in below: not the caller's
	for i, m := range in.Object.Members {
		if m.Labels == nil {
			in.Object.Members[i].Labels = map[string]string{}
		}
		if m.Annotations == nil {
			in.Object.Members[i].Annotations = map[string]string{}
		}
	}
	if in.Plan.Resources == nil {
		in.Plan.Resources = []Resource{}
	}
	act := map[string]any{"object": in.Object, "plan": in.Plan, "values": in.Values}
	var out []Verdict
	for _, c := range r.rules {
		v, _, err := c.prg.Eval(act)
		switch {
		case err != nil:
			out = append(out, Verdict{Rule: c.Name, Effect: c.Effect, Message: fmt.Sprintf("%s (the rule failed to evaluate: %v)", c.Message, err)})
		case v.Value() == true:
			out = append(out, Verdict{Rule: c.Name, Effect: c.Effect, Message: c.Message})
		}
	}
	return out
}

// Denied is the first deny verdict, if any.
func Denied(vs []Verdict) *Verdict {
	for i := range vs {
		if vs[i].Effect == Deny {
			return &vs[i]
		}
	}
	return nil
}

// Held tells whether a verdict requires approval (or denies).
func Held(vs []Verdict) bool { return len(vs) > 0 }
