package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

func newPlanCmd() *cobra.Command {
	var planID string
	cmd := objectCmd(&cobra.Command{
		Use:   "plan " + objectref.Args + " [--plan-id ID]",
		Short: "Show a recorded plan: Terraform's plan text and the rendered HCL",
		Long: `plan prints the latest recorded plan of a Service (or of the route set):
what it is (kind, outcome, changes, times, who made the change when known,
its approvals - who, when, with which PlanApproval and comment - of the
number required, the policy rules that flagged it and what they said, the
SHA-256 of its saved plan file), Terraform's human-readable plan (from the
record's ConfigMaps) and the rendered root module (main.tf) it was made
from. --plan-id shows an older plan; the record keeps only the current
rendering, which is flagged when that plan was made from another one.`,
		Args: cobra.ExactArgs(1),
	}, func(cmd *cobra.Command, c *cluster, ref objectref.Ref, _ []string) error {
		return runPlan(cmd.Context(), c, ref, planID, cmd.OutOrStdout())
	})
	cmd.Flags().StringVar(&planID, "plan-id", "", "show this plan (see history) instead of the latest")
	return cmd
}

func runPlan(ctx context.Context, c *cluster, ref objectref.Ref, planID string, w io.Writer) error {
	t, err := c.resolve(ctx, ref, false)
	if err != nil {
		return err
	}
	rec := t.record
	plans := sortPlans(rec)
	if len(plans) == 0 {
		return fmt.Errorf("no plans recorded yet for %s", ref.Describe())
	}
	p := &plans[0]
	if planID != "" {
		if p = rec.Find(planID); p == nil {
			return fmt.Errorf("%s has no recorded plan %s; recorded: %s", ref.Describe(), planID, planList(plans))
		}
	}
	text, err := c.store.PlanText(ctx, rec.Workspace, p.ID)
	if err != nil && !errors.Is(err, records.ErrNotFound) && !apierrors.IsNotFound(err) {
		return c.explain(err, "read the text of "+p.ID)
	}

	// Every text of the record is shown with its control characters
	// escaped (termsafe): the cells by row, the plan text and files here.
	fmt.Fprintf(w, "=== %s of %s (workspace %s)\n", termsafe.Line(p.ID), termsafe.Line(ref.Describe()), termsafe.Line(rec.Workspace))
	tw := newFields(w)
	row(tw, "kind:", p.Kind)
	if ref.Kind == objectref.KindServiceGroup {
		row(tw, "members:", membersCell(rec.Members))
	}
	row(tw, "outcome:", string(p.Outcome)+outcomeHint(ref, p))
	row(tw, "changes:", p.Summary.String())
	row(tw, "policy:", orDash(p.Policy))
	if p.Author != "" {
		row(tw, "author:", p.Author)
	}
	if p.Outcome == records.AwaitingApproval || len(p.Approvals) > 0 {
		// The number required is today's: only a waiting plan is held to it.
		summary := fmt.Sprintf("%d of %d required", len(p.Approvers()), rec.Required())
		if p.Outcome != records.AwaitingApproval {
			summary = fmt.Sprintf("%d approver(s)", len(p.Approvers()))
		}
		row(tw, "approvals:", summary)
		for _, a := range p.Approvals {
			row(tw, "", "  "+approvalLine(a))
		}
	}
	for i, v := range p.Verdicts {
		label := ""
		if i == 0 {
			label = "verdicts:"
		}
		row(tw, label, fmt.Sprintf("%s (%s): %s", v.Rule, v.Effect, v.Message))
	}
	row(tw, "planned:", stamp(p.PlannedAt)+" ("+age(p.PlannedAt)+" ago)")
	if p.DecidedAt != nil {
		row(tw, "decided:", stamp(*p.DecidedAt)+" ("+age(*p.DecidedAt)+" ago)")
	}
	if p.SavedSHA256 != "" {
		row(tw, "saved plan:", "sha256 "+p.SavedSHA256)
	}
	if p.Error != "" {
		row(tw, "error:", firstLine(p.Error, 200))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n=== terraform plan %s\n", termsafe.Line(p.ID))
	switch {
	case strings.TrimSpace(text) == "" && ref.Kind == objectref.KindPodPool && p.Outcome == records.Applied:
		// ADR 24: a rollout's membership changes skip terraform's show.
		fmt.Fprintln(w, "(a pod pool's plan applied under the pools' policy is recorded without its text: its targets are in main.tf below)")
	case strings.TrimSpace(text) == "":
		fmt.Fprintln(w, "(no plan text recorded)")
	default:
		fmt.Fprint(w, termsafe.Text(ensureNewline(text)))
	}

	if len(rec.Files) == 0 {
		fmt.Fprintln(w, "\n=== rendered files\n(none recorded)")
		return nil
	}
	note := "the rendering " + p.ID + " was made from"
	if !madeFromFiles(rec, plans[0], *p) {
		note = fmt.Sprintf("the current rendering: %s was made from another one (sha256 %s), which the record no longer keeps", p.ID, p.HCLHash)
	}
	for _, name := range slices.Sorted(maps.Keys(rec.Files)) {
		fmt.Fprintf(w, "\n=== %s (%s)\n", termsafe.Line(name), termsafe.Line(note))
		fmt.Fprint(w, termsafe.Text(ensureNewline(rec.Files[name])))
	}
	return nil
}

// madeFromFiles says whether p was planned from the record's files: its
// HCL hash is theirs or, as the files are the latest rendering, the latest
// plan's.
func madeFromFiles(rec *records.Record, latest, p records.Plan) bool {
	return p.HCLHash == "" || p.HCLHash == filesHash(rec.Files) || p.HCLHash == latest.HCLHash
}

// outcomeHint tells how to approve a plan that waits for it, and that a
// denied one is never applied.
func outcomeHint(ref objectref.Ref, p *records.Plan) string {
	switch p.Outcome {
	case records.AwaitingApproval:
		return fmt.Sprintf(" (approve: examplectl approve %s %s)", ref.Arg(), p.ID)
	case records.Denied:
		return " (a policy rule denies it: it is never applied)"
	}
	return ""
}

// approvalLine is "bob at 2025-06-01T11:57:00Z (3m ago), PlanApproval x: LGTM".
func approvalLine(a records.Approval) string {
	s := fmt.Sprintf("%s at %s (%s ago)", a.By, stamp(a.At), age(a.At))
	if a.Object != "" {
		s += ", " + reviewapi.KindPlanApproval + " " + a.Object
	}
	if a.Comment != "" {
		s += ": " + firstLine(a.Comment, 120)
	}
	return termsafe.Line(s)
}

// planList is "plan-a (applied), plan-b (superseded)", newest first.
func planList(plans []records.Plan) string {
	if len(plans) == 0 {
		return "none"
	}
	var parts []string
	for _, p := range plans {
		parts = append(parts, fmt.Sprintf("%s (%s)", p.ID, p.Outcome))
	}
	return strings.Join(parts, ", ")
}

func ensureNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// filesHash is renderer.Module.Hash of the recorded files (the test checks
// it agrees with the renderer): a sha256 over the sorted, length-prefixed
// names and contents.
func filesHash(files map[string]string) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(files[name]))
		h.Write([]byte(files[name])) // a hash.Hash never fails
	}
	return hex.EncodeToString(h.Sum(nil))
}
