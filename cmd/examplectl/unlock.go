package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

func newUnlockCmd() *cobra.Command {
	var yes bool
	var comment string
	cmd := objectCmd(&cobra.Command{
		Use:   "unlock " + objectref.Args + " [--yes] [--comment TEXT]",
		Short: "Ask the controller to force open the Terraform state lock it could not take",
		Long: `unlock shows the state lock recorded for a Service (or the route set) - the
lock the controller's last run could not take: its id, holder and age - and,
once confirmed, creates a StateUnlock (review.example.com/v1) in the
controller's namespace as you: spec.requester is your username as the API
server authenticates you (it checks it), spec.lockID the lock, spec.object
the Service with its uid. The controller then forces open that lock, once,
and only that one.

Forcing open a lock that a running terraform holds can corrupt the state:
make sure its holder is gone. Confirmation is asked on the terminal; without
one (scripts, CI), --yes is required.`,
		Args: cobra.ExactArgs(1),
	}, func(cmd *cobra.Command, c *cluster, ref objectref.Ref, _ []string) error {
		return runUnlock(cmd.Context(), c, ref, yes, comment, cmd.InOrStdin(), cmd.OutOrStdout())
	})
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().StringVar(&comment, "comment", "", "a note for the audit trail (at most 1024 characters)")
	return cmd
}

func runUnlock(ctx context.Context, c *cluster, ref objectref.Ref, yes bool, comment string, stdin io.Reader, stdout io.Writer) error {
	t, err := c.resolveToAct(ctx, ref, comment)
	if err != nil {
		return err
	}
	lock := t.record.Lock
	if lock == nil || lock.ID == "" {
		return fmt.Errorf("no state lock is recorded for %s: nothing to unlock", ref.Describe())
	}
	fmt.Fprintf(stdout, "State lock of %s (workspace %s):\n", termsafe.Line(ref.Describe()), termsafe.Line(t.record.Workspace))
	tw := newTable(stdout)
	row(tw, "  id:", lock.ID)
	row(tw, "  holder:", orDash(lock.Holder))
	row(tw, "  created:", stamp(lock.Created)+" ("+age(lock.Created)+" ago)")
	row(tw, "  seen:", stamp(lock.SeenAt)+" ("+age(lock.SeenAt)+" ago, by the controller's last run)")
	question := "Forcing open a lock a running terraform holds can corrupt the state.\nForce-unlock " + termsafe.Line(lock.ID) + "?"
	user, err := c.confirmAs(ctx, tw, confirmation{stdin: stdin, stdout: stdout, yes: yes, what: "force-unlock", question: question})
	if err != nil {
		return err
	}
	msg, err := c.requestUnlock(ctx, t, user, lock.ID, comment)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}

// requestUnlock creates, as user, the StateUnlock of t's lock lockID.
func (c *cluster) requestUnlock(ctx context.Context, t *recorded, user, lockID, comment string) (string, error) {
	u, err := reviewapi.CreateStateUnlock(ctx, c.dynamic, c.namespace, reviewapi.StateUnlockSpec{
		Object: reviewedObject(t), LockID: lockID, Requester: user, Comment: comment,
	})
	if err != nil {
		return "", c.explainCreate(err, reviewapi.KindStateUnlock)
	}
	return fmt.Sprintf("Created %s %s/%s as %s: the controller forces open lock %s of %s on its next run, once, and only that lock.",
		reviewapi.KindStateUnlock, termsafe.Line(u.Namespace), termsafe.Line(u.Name), termsafe.Line(user), termsafe.Line(lockID), termsafe.Line(t.ref.Describe())), nil
}
