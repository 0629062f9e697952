package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

func newApproveCmd() *cobra.Command {
	var comment string
	cmd := objectCmd(&cobra.Command{
		Use:   "approve " + objectref.Args + " [PLAN-ID] [--comment TEXT]",
		Short: "Approve a plan awaiting approval, as yourself",
		Long: `approve approves one recorded plan of a Service (or of the route set) that is
awaiting approval, by creating a PlanApproval (review.example.com/v1) in the
controller's namespace as you: spec.approver is your username as the API
server authenticates you (it checks it), spec.object the Service with its
uid. Once the plan has as many distinct approvers as the controller requires,
it applies exactly that saved plan and nothing else.

Without PLAN-ID it approves the latest plan awaiting approval. With one, the
plan must be recorded and awaiting approval: an unknown, applied, failed,
denied or superseded plan is refused, as is a second approval by you or an
approval of your own change, and nothing is created. Review the plan first
with examplectl plan.`,
		Args: cobra.RangeArgs(1, 2),
	}, func(cmd *cobra.Command, c *cluster, ref objectref.Ref, args []string) error {
		id := ""
		if len(args) == 1 {
			id = args[0]
		}
		return runApprove(cmd.Context(), c, ref, id, comment, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	cmd.Flags().StringVar(&comment, "comment", "", "a note for the audit trail (at most 1024 characters)")
	return cmd
}

func runApprove(ctx context.Context, c *cluster, ref objectref.Ref, id, comment string, stdout, stderr io.Writer) error {
	if id != "" && !reviewapi.PlanIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a plan id (plan-<12 hex digits>; see examplectl history %s)", id, ref.Arg())
	}
	t, err := c.resolveToAct(ctx, ref, comment)
	if err != nil {
		return err
	}
	done, err := c.approve(ctx, t, id, comment)
	if err != nil {
		return err
	}
	p, a, user := done.plan, done.object, done.user
	fmt.Fprintf(stdout, "Approved %s of %s.\n", planLine(p), termsafe.Line(ref.Describe()))
	fmt.Fprintf(stdout, "Created %s %s/%s as %s.\n", reviewapi.KindPlanApproval, termsafe.Line(a.Namespace), termsafe.Line(a.Name), termsafe.Line(user))
	fmt.Fprintln(stdout, done.next())
	warnIfDecided(ctx, c, t, p.ID, stderr)
	return nil
}

// approved is what an approval created, as whom.
type approved struct {
	plan   *records.Plan
	object *reviewapi.PlanApproval
	user   string
	// who are the plan's distinct approvers now, need how many it needs.
	who  []string
	need int
}

// next says where the plan stands and what happens next.
func (a *approved) next() string {
	who := make([]string, len(a.who))
	for i := range a.who {
		who[i] = termsafe.Line(a.who[i])
	}
	have := len(who)
	s := fmt.Sprintf("Approvals: %d of %d required (%s).\n", have, a.need, strings.Join(who, ", "))
	if have >= a.need {
		s += "The controller applies exactly this saved plan, nothing else.\n"
	} else {
		s += fmt.Sprintf("Once %d more reviewer(s) approve it, the controller applies exactly this saved plan, nothing else.\n", a.need-have)
	}
	return s + "If the object or the cloud changes first, it plans again, and the new plan waits for its own approvals."
}

// approve approves t's plan id (the latest awaiting approval for "") as
// the caller, after the checks the controller would otherwise make
// silently: a plan awaiting approval, not approved by them yet, not of
// their own change.
func (c *cluster) approve(ctx context.Context, t *recorded, id, comment string) (*approved, error) {
	p, err := pickApproval(t, id)
	if err != nil {
		return nil, err
	}
	me, err := c.whoami(ctx)
	if err != nil {
		return nil, err
	}
	user := me.Username
	if a := approvedBy(p, user); a != nil {
		return nil, fmt.Errorf("refusing to approve %s again: the record shows you (%s) approved it %s ago; it needs %d distinct approvers, so another reviewer must approve it",
			p.ID, termsafe.Line(user), age(a.At), t.record.Required())
	}
	if slices.Contains(p.AuthorSet().Authors, user) {
		return nil, fmt.Errorf("refusing to approve %s: you (%s) made a change it plans (the record names you among its authors), and the controller does not count an author's approval; another reviewer must approve it",
			p.ID, termsafe.Line(user))
	}
	a, err := reviewapi.CreatePlanApproval(ctx, c.dynamic, c.namespace, reviewapi.PlanApprovalSpec{
		Object: reviewedObject(t), PlanID: p.ID, Approver: user, ApproverGroups: me.Groups, Comment: comment,
	})
	if err != nil {
		return nil, c.explainCreate(err, reviewapi.KindPlanApproval)
	}
	return &approved{plan: p, object: a, user: user, who: append(p.Approvers(), user), need: t.record.Required()}, nil
}

// pickApproval is the plan to approve: id, or the latest awaiting
// approval; refused unless recorded and awaiting approval.
func pickApproval(t *recorded, id string) (*records.Plan, error) {
	plans := sortPlans(t.record)
	var awaiting *records.Plan
	for i := range plans {
		if plans[i].Outcome == records.AwaitingApproval {
			awaiting = &plans[i]
			break
		}
	}
	what := t.ref.Describe()
	if id == "" {
		if awaiting == nil {
			return nil, fmt.Errorf("no plan of %s is awaiting approval (policy %s); recorded plans: %s", what, orDash(t.record.Policy), planList(plans))
		}
		return awaiting, nil
	}
	var p *records.Plan
	for i := range plans {
		if plans[i].ID == id {
			p = &plans[i]
		}
	}
	waiting := "no plan is awaiting approval"
	if awaiting != nil {
		waiting = awaiting.ID + " is awaiting approval"
	}
	switch {
	case p == nil:
		return nil, fmt.Errorf("refusing to approve %s: it is not a recorded plan of %s (%s; recorded plans: %s)", id, what, waiting, planList(plans))
	case p.Outcome == records.Denied:
		return nil, fmt.Errorf("refusing to approve %s: a policy rule denies it (%s), so it is never applied (%s)", id, verdictsCell(p), waiting)
	case p.Outcome != records.AwaitingApproval:
		return nil, fmt.Errorf("refusing to approve %s: it is %s, not awaiting approval (%s)", id, p.Outcome, waiting)
	}
	return p, nil
}

// warnIfDecided re-reads the record: if a newer plan superseded this one
// meanwhile, the controller will ignore the approval.
func warnIfDecided(ctx context.Context, c *cluster, t *recorded, id string, stderr io.Writer) {
	rec, err := c.store.Get(ctx, t.record.Workspace)
	if err != nil || rec == nil {
		return
	}
	p := rec.Find(id)
	switch {
	case p == nil:
		fmt.Fprintf(stderr, "warning: %s is no longer recorded: the controller will not apply it; see examplectl status\n", termsafe.Line(id))
	case p.Outcome == records.AwaitingApproval, p.Outcome == records.Applied:
	default:
		fmt.Fprintf(stderr, "warning: %s is now %s; see examplectl history %s\n", termsafe.Line(id), termsafe.Line(string(p.Outcome)), termsafe.Line(t.ref.Arg()))
	}
}
