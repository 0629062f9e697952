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

	"github.com/example/cloud-provider-example/records"
)

func newPlanCmd() *cobra.Command {
	var o objectOptions
	var planID string
	cmd := &cobra.Command{
		Use:   "plan " + objectArgs + " [--plan-id ID]",
		Short: "Show a recorded plan: Terraform's plan text and the rendered HCL",
		Long: `plan prints the latest recorded plan of a Service (or of the route set):
what it is (kind, outcome, changes, times), Terraform's human-readable plan
(from the record's Secret) and the rendered root module (main.tf) it was made
from. --plan-id shows an older plan; the record keeps only the current
rendering, which is flagged when that plan was made from another one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ref, err := o.object(args[0])
			if err != nil {
				return err
			}
			return runPlan(cmd.Context(), c, ref, planID, cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&planID, "plan-id", "", "show this plan (see history) instead of the latest")
	return cmd
}

func runPlan(ctx context.Context, c *cluster, ref records.ObjectRef, planID string, w io.Writer) error {
	t, err := c.resolve(ctx, ref, false)
	if err != nil {
		return err
	}
	rec := t.record
	plans := sortPlans(rec)
	if len(plans) == 0 {
		return fmt.Errorf("no plans recorded yet for %s", describe(ref))
	}
	p := &plans[0]
	if planID != "" {
		if p = rec.Find(planID); p == nil {
			return fmt.Errorf("%s has no recorded plan %s; recorded: %s", describe(ref), planID, planList(plans))
		}
	}
	text, err := c.store.PlanText(ctx, rec.Workspace, p.ID)
	if err != nil && !errors.Is(err, records.ErrNotFound) && !apierrors.IsNotFound(err) {
		return c.explain(err, "read the text of "+p.ID)
	}

	fmt.Fprintf(w, "=== %s of %s (workspace %s)\n", p.ID, describe(ref), rec.Workspace)
	tw := newTable(w)
	row(tw, "kind:", p.Kind)
	row(tw, "outcome:", string(p.Outcome)+approveHint(ref, p))
	row(tw, "changes:", p.Summary.String())
	row(tw, "policy:", orDash(p.Policy))
	row(tw, "planned:", stamp(p.PlannedAt)+" ("+age(p.PlannedAt)+" ago)")
	if p.DecidedAt != nil {
		row(tw, "decided:", stamp(*p.DecidedAt)+" ("+age(*p.DecidedAt)+" ago)")
	}
	if p.Error != "" {
		row(tw, "error:", firstLine(p.Error, 200))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\n=== terraform plan %s\n", p.ID)
	if strings.TrimSpace(text) == "" {
		fmt.Fprintln(w, "(no plan text recorded)")
	} else {
		fmt.Fprint(w, ensureNewline(text))
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
		fmt.Fprintf(w, "\n=== %s (%s)\n", name, note)
		fmt.Fprint(w, ensureNewline(rec.Files[name]))
	}
	return nil
}

// madeFromFiles says whether p was planned from the record's files: its
// HCL hash is theirs or, as the files are the latest rendering, the latest
// plan's.
func madeFromFiles(rec *records.Record, latest, p records.Plan) bool {
	return p.HCLHash == "" || p.HCLHash == filesHash(rec.Files) || p.HCLHash == latest.HCLHash
}

// approveHint tells how to approve a plan that waits for it.
func approveHint(ref records.ObjectRef, p *records.Plan) string {
	if p.Outcome != records.AwaitingApproval {
		return ""
	}
	return fmt.Sprintf(" (approve: examplectl approve %s %s)", objectColumn(ref), p.ID)
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
		io.WriteString(h, files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}
