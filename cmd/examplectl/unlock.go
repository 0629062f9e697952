package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/records"
)

// terminal is a reader that knows whether it is a terminal (the tests'
// typed answers).
type terminal interface{ IsTerminal() bool }

// stdinIsTerminal says whether confirmation can be asked on in.
func stdinIsTerminal(in io.Reader) bool {
	switch in := in.(type) {
	case terminal:
		return in.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(in.Fd()))
	}
	return false
}

func newUnlockCmd() *cobra.Command {
	var o objectOptions
	var yes bool
	cmd := &cobra.Command{
		Use:   "unlock " + objectArgs + " [--yes]",
		Short: "Force open the Terraform state lock the controller could not take",
		Long: `unlock shows the state lock recorded for a Service (or the route set) - the
lock the controller's last run could not take: its id, holder and age - and,
once confirmed, sets ` + string(annotations.LBForceUnlock) + `=<lock id> on the
Service (for the route set: on its record ConfigMap ccm-plans-<workspace>).
The controller then forces open that lock, and only that one.

Forcing open a lock that a running terraform holds can corrupt the state:
make sure its holder is gone. Confirmation is asked on the terminal; without
one (scripts, CI), --yes is required.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ref, err := o.object(args[0])
			if err != nil {
				return err
			}
			return runUnlock(cmd.Context(), c, ref, yes, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func runUnlock(ctx context.Context, c *cluster, ref records.ObjectRef, yes bool, stdin io.Reader, stdout io.Writer) error {
	t, err := c.resolve(ctx, ref, true)
	if err != nil {
		return err
	}
	if err := checkIncarnation(t); err != nil {
		return err
	}
	lock := t.record.Lock
	if lock == nil || lock.ID == "" {
		return fmt.Errorf("no state lock is recorded for %s: nothing to unlock", describe(ref))
	}
	fmt.Fprintf(stdout, "State lock of %s (workspace %s):\n", describe(ref), t.record.Workspace)
	tw := newTable(stdout)
	row(tw, "  id:", lock.ID)
	row(tw, "  holder:", orDash(lock.Holder))
	row(tw, "  created:", stamp(lock.Created)+" ("+age(lock.Created)+" ago)")
	row(tw, "  seen:", stamp(lock.SeenAt)+" ("+age(lock.SeenAt)+" ago, by the controller's last run)")
	if err := tw.Flush(); err != nil {
		return err
	}
	if !yes {
		if !stdinIsTerminal(stdin) {
			return errors.New("refusing to force-unlock without confirmation: stdin is not a terminal (pass --yes)")
		}
		fmt.Fprintf(stdout, "Forcing open a lock a running terraform holds can corrupt the state.\nForce-unlock %s? [y/N]: ", lock.ID)
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("not confirmed: nothing changed")
		}
	}
	key := string(annotations.LBForceUnlock)
	if err := c.annotate(ctx, t, key, lock.ID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Set %s=%s on %s: the controller forces open this lock on its next run of %s.\n",
		key, lock.ID, c.annotationHolder(t), describe(ref))
	return nil
}
