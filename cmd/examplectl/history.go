package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/termsafe"
)

func newHistoryCmd() *cobra.Command {
	var output string
	cmd := objectCmd(&cobra.Command{
		Use:   "history " + objectref.Args + " [-o json]",
		Short: "List the recorded plans of a Service or of the route set, newest first",
		Long: `history lists every plan the record keeps for a Service (or the route set),
newest first: id, kind (change, destroy, drift), outcome, changes, its
approvals (of the number required, who and how long ago), who made the
change when known, the policy rules that flagged it, when it was planned and
decided, and the first line of its error. -o json has the whole error, the
approvals with their times and comments, the rules' messages and the changed
resources. examplectl plan --plan-id ID shows one.`,
		Args:    cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error { return checkOutput(output, false) },
	}, func(cmd *cobra.Command, c *cluster, ref objectref.Ref, _ []string) error {
		return runHistory(cmd.Context(), c, ref, output, cmd.OutOrStdout())
	})
	outputFlag(cmd, &output, false)
	return cmd
}

func runHistory(ctx context.Context, c *cluster, ref objectref.Ref, output string, w io.Writer) error {
	t, err := c.resolve(ctx, ref, false)
	if err != nil {
		return err
	}
	plans := sortPlans(t.record)
	if output == "json" {
		if plans == nil {
			plans = []records.Plan{}
		}
		return writeJSON(w, plans)
	}
	if t.ref.Kind == objectref.KindServiceGroup {
		fmt.Fprintf(w, "Members of %s: %s\n\n", termsafe.Line(t.ref.Describe()), membersCell(t.record.Members))
	}
	tw := newTable(w)
	row(tw, "PLAN", "KIND", "OUTCOME", "CHANGES", "APPROVALS", "AUTHOR", "VERDICTS", "PLANNED", "DECIDED", "ERROR")
	for _, p := range plans {
		decided := "-"
		if p.DecidedAt != nil {
			decided = stamp(*p.DecidedAt)
		}
		row(tw, p.ID, p.Kind, string(p.Outcome), p.Summary.String(), approvalsCell(t.record, &p), orDash(p.Author),
			verdictsCell(&p), stamp(p.PlannedAt), decided, orDash(firstLine(p.Error, 80)))
	}
	return tw.Flush()
}
