package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

func newReleaseCmd() *cobra.Command {
	var o kubeOptions
	var ns, comment string
	var yes bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "release <address:ns/name | address:name [-n ns] | addr-ID | IP> [--yes] [--comment TEXT]",
		Short: "Ask the controller to release a kept reserved address for good: its IP goes back to the region",
		Long: `release shows a reserved address the controller keeps (as examplectl
addresses lists it: by its address:NS/NAME, its id or its IP) and, once
confirmed, creates an AddressRelease (review.example.com/v1) in the
controller's namespace as you: spec.requester is your username as the API
server authenticates you (it checks it), spec.address the address. The
controller then plans the destroy of the address's workspace, with you as
the change's author: another reviewer approves it (examplectl approve
address:NS/NAME); your own approval does not count.

Releasing is irreversible: the IP goes back to the region, and DNS records
and allow-lists pointing at it reach whoever gets it next. It is refused,
before anything is created, for an address with no plan record (an id or IP
is read from the address's last apply: while an apply of an address is
under way, it waits for it within --wait), one a load balancer holds (as of
its last apply), one with a plan awaiting approval (a move, or a release
already asked) and one already released; the controller also refuses it
while a Service allowed to take the address names it. Confirmation is asked
on the terminal; without one (scripts, CI), --yes is required. It then waits (--wait)
for the controller's decision: the release planned, waiting for another
reviewer, or refused, which fails the command with the controller's words.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkComment(comment); err != nil {
				return err
			}
			c, err := o.connect()
			if err != nil {
				return err
			}
			return runRelease(cmd.Context(), c, args[0], ns, yes, comment, wait, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&ns, "address-namespace", "n", "", "the namespace that owns the address (for address:NAME; with an id or IP, look only among its addresses)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().StringVar(&comment, "comment", "", "a note for the audit trail (at most 1024 characters)")
	cmd.Flags().DurationVar(&wait, "wait", 30*time.Second, "how long to wait for the controller's decision (the release planned, or refused), and for an address's apply under way when it is named by id or IP; 0 does not wait")
	return cmd
}

func runRelease(ctx context.Context, c *cluster, arg, ns string, yes bool, comment string, wait time.Duration, stdin io.Reader, stdout, stderr io.Writer) error {
	r, err := c.findAddress(ctx, arg, ns, wait, stderr)
	if err != nil {
		return err
	}
	it := addressOf(r)
	if err := checkReleasable(r, it); err != nil {
		return err
	}
	ref := objectref.Address(r.Object.Namespace, r.Object.Name)
	fmt.Fprintf(stdout, "Release of %s (workspace %s):\n", termsafe.Line(ref.Arg()), termsafe.Line(r.Workspace))
	tw := newTable(stdout)
	row(tw, "  id:", orDash(it.ID))
	row(tw, "  ip:", orDash(it.IP))
	row(tw, "  owner:", "namespace "+it.Owner)
	row(tw, "  held by:", "nothing (reserved, detached)")
	if it.AppliedAt != nil {
		row(tw, "  applied:", stamp(*it.AppliedAt)+" ("+age(*it.AppliedAt)+" ago)")
	}
	ip := termsafe.Line(orDash(it.IP))
	question := "Releasing it cannot be undone: the IP goes back to the region, and DNS records and allow-lists pointing at " + ip +
		" will reach whoever gets it next.\nRelease " + termsafe.Line(ref.Arg()) + " (" + ip + ")?"
	user, err := c.confirmAs(ctx, tw, confirmation{stdin: stdin, stdout: stdout, yes: yes, what: "release an address", question: question})
	if err != nil {
		return err
	}
	a, msg, err := c.requestRelease(ctx, r, user, comment)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	if wait <= 0 {
		fmt.Fprintf(stdout, "It waits for another reviewer's approval: examplectl approve %s. Your own approval does not count.\n", termsafe.Line(ref.Arg()))
		return nil
	}
	return c.awaitRelease(ctx, a, r.Workspace, wait, stdout)
}

// requestRelease creates the AddressRelease of r's address as user (the
// command's and the review page's), and says what it did.
func (c *cluster) requestRelease(ctx context.Context, r *records.Record, user, comment string) (*reviewapi.AddressRelease, string, error) {
	ref, it := objectref.Address(r.Object.Namespace, r.Object.Name), addressOf(r)
	a, err := reviewapi.CreateAddressRelease(ctx, c.dynamic, c.namespace, reviewapi.AddressReleaseSpec{
		Address: ref, Requester: user, Comment: comment,
	})
	if err != nil {
		return nil, "", c.explainCreate(err, reviewapi.KindAddressRelease)
	}
	return a, fmt.Sprintf("Created %s %s/%s as %s: the controller plans the release of %s (%s, %s), a destroy of its workspace.",
		reviewapi.KindAddressRelease, termsafe.Line(a.Namespace), termsafe.Line(a.Name), termsafe.Line(user),
		termsafe.Line(ref.Arg()), termsafe.Line(orDash(it.ID)), termsafe.Line(orDash(it.IP))), nil
}

// released tells whether r's latest plan is an applied destroy: the
// address went back to the region.
func released(r *records.Record) bool {
	p := latestPlan(r)
	return p != nil && p.Kind == records.KindDestroy && p.Outcome == records.Applied
}

// checkReleasable refuses what the controller would refuse, or what would
// go wrong, before anything is created: an address released already, one
// with a plan awaiting approval, one a load balancer holds.
func checkReleasable(r *records.Record, it addressItem) error {
	arg := r.Object.Arg()
	if released(r) {
		p := latestPlan(r)
		when := p.PlannedAt
		if p.DecidedAt != nil {
			when = *p.DecidedAt
		}
		return fmt.Errorf("refusing to release %s: it is released already (its destroy %s was applied %s ago): its IP went back to the region",
			arg, p.ID, age(when))
	}
	for _, p := range sortPlans(r) {
		if p.Outcome != records.AwaitingApproval {
			continue
		}
		if p.Kind == records.KindDestroy {
			return fmt.Errorf("refusing to release %s: its release is asked already: %s awaits another reviewer's approval: examplectl approve %s %s",
				arg, planLine(&p), arg, p.ID)
		}
		return fmt.Errorf("refusing to release %s: %s, a move of it, awaits approval: it cannot be released before that plan is decided (examplectl approve %s %s)",
			arg, planLine(&p), arg, p.ID)
	}
	if it.LoadBalancerID != "" {
		holder, who := it.LoadBalancerID, "its holder"
		if it.Holder != "" {
			holder = it.Holder + " (" + it.LoadBalancerID + ")"
		}
		// The holder output is "Service ns/name" or "Gateway ns/name".
		for _, kind := range []string{objectref.KindService, objectref.KindGateway} {
			if strings.HasPrefix(it.Holder, kind+" ") {
				who = "the " + kind
			}
		}
		as := ""
		if it.AppliedAt != nil {
			as = " as of its last apply (" + age(*it.AppliedAt) + " ago)"
		}
		// The record lags the cloud: a load balancer destroyed lets go at
		// once, the record at the address's next apply, seconds later.
		return fmt.Errorf("refusing to release %s: %s holds it%s, and it cannot be released while a load balancer holds it: %s must let go of it first (once it has, the address's next apply records it detached)",
			arg, holder, as, who)
	}
	return nil
}
