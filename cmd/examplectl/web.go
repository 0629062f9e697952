package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/reviewpage"
)

// runWeb serves the review page until interrupted.
func runWeb(ctx context.Context, c *cluster, address string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	me, err := c.whoami(ctx)
	if err != nil {
		return err
	}
	srv, err := reviewpage.Listen(ctx, reviewpage.Config{
		Client: c.client, Dynamic: c.dynamic, Store: c.store, Namespace: c.namespace,
		Actions: &pageActions{c: c}, User: me.Username,
	}, address)
	if err != nil {
		return c.explain(err, "start the review page")
	}
	fmt.Fprintf(stdout, "Review page for %s (records in namespace %s):\n  %s\nIt acts as you, with your kubeconfig. Stop it with Ctrl-C.\n", me.Username, c.namespace, srv.URL())
	return srv.Serve(ctx)
}

// pageActions are the page's approve, unlock and release: what those
// commands do, for a record the page names by workspace.
type pageActions struct{ c *cluster }

// recorded is workspace's record with its live Service, checked as the
// commands check it, once the action's comment is.
func (a *pageActions) recorded(ctx context.Context, workspace, comment string) (*recorded, error) {
	if err := checkComment(comment); err != nil {
		return nil, err
	}
	rec, err := a.c.store.Get(ctx, workspace)
	if err != nil {
		return nil, a.c.explain(err, "get plan record "+workspace)
	}
	if rec == nil {
		return nil, fmt.Errorf("no plan record of workspace %s: its object may have been deleted", workspace)
	}
	t, err := a.c.resolveToAct(ctx, rec.Object, "")
	if err != nil {
		return nil, err
	}
	if t.record.Workspace != workspace {
		return nil, fmt.Errorf("%s is now planned in workspace %s, not %s: reload the page", rec.Object.Describe(), t.record.Workspace, workspace)
	}
	return t, nil
}

func (a *pageActions) Approve(ctx context.Context, workspace, planID, comment string) (string, error) {
	if !reviewapi.PlanIDPattern.MatchString(planID) {
		return "", fmt.Errorf("%q is not a plan id", planID)
	}
	t, err := a.recorded(ctx, workspace, comment)
	if err != nil {
		return "", err
	}
	done, err := a.c.approve(ctx, t, planID, comment)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Approved %s of %s as %s (%s %s). %s", done.plan.ID, t.ref.Describe(), done.user,
		reviewapi.KindPlanApproval, done.object.Name, done.next()), nil
}

func (a *pageActions) Unlock(ctx context.Context, workspace, lockID, comment string) (string, error) {
	t, err := a.recorded(ctx, workspace, comment)
	if err != nil {
		return "", err
	}
	lock := t.record.Lock
	switch {
	case lock == nil:
		return "", errors.New("no state lock is recorded any more: nothing to unlock")
	case lock.ID != lockID:
		return "", fmt.Errorf("the recorded lock is now %s, not %s: look at it again before forcing it open", lock.ID, lockID)
	}
	me, err := a.c.whoami(ctx)
	if err != nil {
		return "", err
	}
	return a.c.requestUnlock(ctx, t, me.Username, lockID, comment)
}

// Release asks for the release of workspace's address, which the page
// showed at ip: refused, as examplectl release refuses, before anything is
// created, and when the address is no longer at ip (the page was stale).
func (a *pageActions) Release(ctx context.Context, workspace, ip, comment string) (string, error) {
	t, err := a.recorded(ctx, workspace, comment)
	if err != nil {
		return "", err
	}
	if t.ref.Kind != objectref.KindAddress {
		return "", fmt.Errorf("%s is no reserved address: only an address is released", t.ref.Describe())
	}
	it := addressOf(t.record)
	if it.IP != ip {
		return "", fmt.Errorf("%s is now at %s, not %s: look at it again before releasing it", t.ref.Describe(), orDash(it.IP), ip)
	}
	if err := checkReleasable(t.record, it); err != nil {
		return "", err
	}
	me, err := a.c.whoami(ctx)
	if err != nil {
		return "", err
	}
	_, msg, err := a.c.requestRelease(ctx, t.record, me.Username, comment)
	if err != nil {
		return "", err
	}
	return msg + " Another reviewer approves it; your own approval does not count.", nil
}

var _ reviewpage.Actions = (*pageActions)(nil)
