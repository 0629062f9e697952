package main

import (
	"context"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/records"
)

// planIDPattern is the form of a plan id (runner.Plan.ID).
var planIDPattern = regexp.MustCompile(`^plan-[0-9a-f]{12}$`)

func newApproveCmd() *cobra.Command {
	var o objectOptions
	cmd := &cobra.Command{
		Use:   "approve " + objectArgs + " [PLAN-ID]",
		Short: "Approve a plan awaiting approval (manual apply policy)",
		Long: `approve approves one recorded plan of a Service (or of the route set) that is
awaiting approval, by setting the annotation
` + string(annotations.LBApprovePlan) + `=<plan id> on the Service (for the route
set: on its record ConfigMap ccm-plans-<workspace>). The controller then
applies exactly that saved plan and nothing else.

Without PLAN-ID it approves the latest plan awaiting approval. With one, the
plan must be recorded and awaiting approval: an unknown, applied, failed or
superseded plan is refused, and nothing is annotated. Review the plan first
with examplectl plan.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ref, err := o.object(args[0])
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 2 {
				id = args[1]
			}
			return runApprove(cmd.Context(), c, ref, id, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	return cmd
}

func runApprove(ctx context.Context, c *cluster, ref records.ObjectRef, id string, stdout, stderr io.Writer) error {
	if id != "" && !planIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a plan id (plan-<12 hex digits>; see examplectl history %s)", id, objectColumn(ref))
	}
	t, err := c.resolve(ctx, ref, true)
	if err != nil {
		return err
	}
	if err := checkIncarnation(t); err != nil {
		return err
	}
	p, err := pickApproval(t, id)
	if err != nil {
		return err
	}
	key := string(annotations.LBApprovePlan)
	before, err := c.currentAnnotation(ctx, t, key)
	if err != nil {
		return err
	}
	if err := c.annotate(ctx, t, key, p.ID); err != nil {
		return err
	}
	holder := c.annotationHolder(t)
	fmt.Fprintf(stdout, "Approved %s of %s.\n", planLine(p), describe(ref))
	if before == p.ID {
		fmt.Fprintf(stdout, "(%s already carried this approval.)\n", holder)
	}
	fmt.Fprintf(stdout, "Set %s=%s on %s: the controller applies exactly this saved plan, nothing else.\n", key, p.ID, holder)
	fmt.Fprintln(stdout, "If the object or the cloud changes first, it plans again, and the new plan waits for its own approval.")
	warnIfDecided(ctx, c, t, p.ID, stderr)
	return nil
}

// pickApproval is the plan to approve: id, or the latest awaiting
// approval; refused unless recorded and awaiting approval.
func pickApproval(t *target, id string) (*records.Plan, error) {
	plans := sortPlans(t.record)
	var awaiting *records.Plan
	for i := range plans {
		if plans[i].Outcome == records.AwaitingApproval {
			awaiting = &plans[i]
			break
		}
	}
	what := describe(t.ref)
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
	case p.Outcome != records.AwaitingApproval:
		return nil, fmt.Errorf("refusing to approve %s: it is %s, not awaiting approval (%s)", id, p.Outcome, waiting)
	}
	return p, nil
}

// warnIfDecided re-reads the record: if a newer plan superseded this one
// meanwhile, the controller will ignore the approval.
func warnIfDecided(ctx context.Context, c *cluster, t *target, id string, stderr io.Writer) {
	rec, err := c.store.Get(ctx, t.record.Workspace)
	if err != nil || rec == nil {
		return
	}
	p := rec.Find(id)
	switch {
	case p == nil:
		fmt.Fprintf(stderr, "warning: %s is no longer recorded: the controller will not apply it; see examplectl status\n", id)
	case p.Outcome == records.AwaitingApproval, p.Outcome == records.Applied:
	default:
		fmt.Fprintf(stderr, "warning: %s is now %s; see examplectl history %s\n", id, p.Outcome, objectColumn(t.ref))
	}
}
