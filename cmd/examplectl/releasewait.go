package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

// The leader takes a release request up within seconds: release waits
// for that first decision, so that a refusal, which only the controller
// can see (a Service of another namespace naming the address), reaches
// the person who asked rather than an event they would have to look for.

// releasePoll is how often release looks for the controller's decision.
const releasePoll = 500 * time.Millisecond

// awaitRelease waits, up to d, for the controller's first decision on
// request a, of the address whose record is workspace's: its destroy
// planned and waiting for another reviewer (said, with the command that
// approves it), or the request refused (an error in the controller's
// words). Neither in time, it says how to follow the request, and why
// the controller waits when it said so (ReleaseWaits).
func (c *cluster) awaitRelease(ctx context.Context, a *reviewapi.AddressRelease, workspace string, d time.Duration, stdout io.Writer) error {
	arg := a.Spec.Address.Arg()
	var planned *records.Plan
	var refused string
	// The calls run under ctx, not the wait's deadline: a client that
	// sees the deadline near fails at once (its rate limiter), which is
	// not a failure of the request.
	err := wait.PollUntilContextTimeout(ctx, releasePoll, d, true, func(context.Context) (bool, error) {
		var err error
		if refused, err = c.releaseEvent(ctx, "ReleaseRefused", a.Name); err != nil || refused != "" {
			return true, err
		}
		planned, err = c.releasePlanned(ctx, workspace)
		return planned != nil, err
	})
	switch {
	case refused != "":
		return fmt.Errorf("the controller refused the release: %s", termsafe.Line(refused))
	case planned != nil:
		fmt.Fprintf(stdout, "The controller planned %s: it waits for another reviewer's approval: examplectl approve %s %s. Your own approval does not count.\n",
			planLine(planned), termsafe.Line(arg), planned.ID)
		return nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		waits, err := c.releaseEvent(ctx, "ReleaseWaits", a.Name)
		if err != nil {
			return err
		}
		if waits != "" {
			fmt.Fprintf(stdout, "The controller has not decided it within %s: %s\nexamplectl status %s shows the release once planned.\n",
				d, termsafe.Line(waits), termsafe.Line(arg))
			return nil
		}
		fmt.Fprintf(stdout, "The controller has not taken it up within %s (its leader looks every few seconds): examplectl status %s shows the release once planned.\n",
			d, termsafe.Line(arg))
		return nil
	}
	return fmt.Errorf("waiting for the controller's decision on %s %s: %w", reviewapi.KindAddressRelease, a.Name, err)
}

// releaseEvent is the message of the event of reason (ReleaseRefused,
// ReleaseWaits) the controller wrote for request name, "" when there is
// none.
func (c *cluster) releaseEvent(ctx context.Context, reason, name string) (string, error) {
	evs, err := c.client.CoreV1().Events(c.namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + reason})
	switch {
	case apierrors.IsForbidden(err):
		return "", nil // without the right, only a plan is seen in time
	case err != nil:
		return "", err
	}
	for _, ev := range evs.Items {
		if strings.HasPrefix(ev.Message, reviewapi.KindAddressRelease+" "+name+" by ") {
			return ev.Message, nil
		}
	}
	return "", nil
}

// releasePlanned is the destroy of workspace awaiting approval, nil when
// there is none: release refuses to ask while one waits, so one now is
// the plan of the request just made.
func (c *cluster) releasePlanned(ctx context.Context, workspace string) (*records.Plan, error) {
	r, err := c.store.Get(ctx, workspace)
	if err != nil || r == nil {
		return nil, err
	}
	return r.AwaitingDestroy(true), nil
}
