package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/reviewpage"
)

func newReviewCmd() *cobra.Command {
	var o kubeOptions
	var web bool
	var address string
	cmd := &cobra.Command{
		Use:   "review [--web [--address 127.0.0.1:PORT]]",
		Short: "What waits for review: the queue of plans awaiting approval, or the review page",
		Long: `review lists every plan awaiting approval in the cluster, newest first: the
plan, its object, its changes, who made the change, the policy rules that
hold it, its approvals of the number required, and its age.

With --web it serves the review page on a loopback address instead and
prints its URL: the queue, each plan's resource changes (replacements with
the attributes forcing them), listener changes, rendered HCL against the
last applied, policy verdicts and approvals; each object's history, drift,
lock and audit trail; approve and unlock buttons that ask first. The page
reads and acts with your kubeconfig, as these commands do (it holds no
credentials of its own); it follows changes as they happen. Only the URL's
token opens it, and it refuses requests from other origins. Stop it with
Ctrl-C. See docs/review-page.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.connect()
			if err != nil {
				return err
			}
			if web {
				return runWeb(cmd.Context(), c, address, cmd.OutOrStdout())
			}
			return runQueue(cmd.Context(), c, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&web, "web", false, "serve the review page on a loopback address and print its URL")
	cmd.Flags().StringVar(&address, "address", "127.0.0.1:0", "the page's loopback address (port 0: any free port)")
	return cmd
}

func runQueue(ctx context.Context, c *cluster, stdout, stderr io.Writer) error {
	recs, err := c.records(ctx)
	if err != nil {
		return err
	}
	queue := reviewpage.Queue(recs)
	if len(queue) == 0 {
		fmt.Fprintf(stderr, "No plan is awaiting approval (%d plan records in namespace %s).\n", len(recs), c.namespace)
		return nil
	}
	tw := newTable(stdout)
	row(tw, "PLAN", "OBJECT", "KIND", "CHANGES", "AUTHOR", "VERDICTS", "APPROVALS", "AGE")
	for _, w := range queue {
		p := w.Plan
		row(tw, p.ID, w.Object.Arg(), p.Kind, p.Summary.String(), orDash(strings.Join(p.AuthorSet().Authors, ", ")),
			verdictsCell(p), approvalsCell(w.Record, p), age(p.PlannedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Review one with: examplectl plan OBJECT --plan-id PLAN; approve it with: examplectl approve OBJECT PLAN (or in examplectl review --web)")
	return nil
}
