package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Poll intervals: short first, since the simulator and most real clouds
// provision in seconds, then backing off so long waits stay cheap.
var (
	pollMin = 100 * time.Millisecond
	pollMax = 2 * time.Second
)

// maxPollErrors is how many polls in a row may fail (after the client's own
// retries) before the wait gives up.
const maxPollErrors = 3

// errGone is returned by waits when the object disappeared.
var errGone = errors.New("the load balancer no longer exists (deleted outside Terraform?)")

// lbFailedError is a load balancer that ended in status error.
type lbFailedError struct {
	id, message string
}

func (e *lbFailedError) Error() string {
	msg := e.message
	if msg == "" {
		msg = "no status message"
	}
	return fmt.Sprintf("load balancer %s failed to provision: %s", e.id, msg)
}

// waitLoadBalancerReady polls until the load balancer leaves provisioning.
// It returns the last read object; status error becomes *lbFailedError.
// The context bounds the wait (timeouts, and cancellation on interrupt).
func waitLoadBalancerReady(ctx context.Context, c *exampleapi.Client, id string) (*exampleapi.LoadBalancer, error) {
	var ready *exampleapi.LoadBalancer
	err := pollLoadBalancer(ctx, c, id, "to become active", func(lb *exampleapi.LoadBalancer, err error) (bool, error) {
		switch {
		case exampleapi.IsNotFound(err):
			return true, errGone
		case err != nil:
			return false, nil
		case lb.Status == exampleapi.LBStatusActive:
			ready = lb
			return true, nil
		case lb.Status == exampleapi.LBStatusError:
			ready = lb
			return true, &lbFailedError{id: id, message: lb.StatusMessage}
		}
		return false, nil
	})
	return ready, err
}

// waitLoadBalancerGone polls until reading the load balancer answers 404.
func waitLoadBalancerGone(ctx context.Context, c *exampleapi.Client, id string) error {
	return pollLoadBalancer(ctx, c, id, "to be deleted", func(_ *exampleapi.LoadBalancer, err error) (bool, error) {
		return exampleapi.IsNotFound(err), nil
	})
}

// pollLoadBalancer reads the load balancer, backing off between reads,
// until done (given each read) ends the wait with its error. Failed reads
// are retried up to maxPollErrors in a row; waiting says what the wait is
// for in its errors, e.g. "to be deleted".
func pollLoadBalancer(ctx context.Context, c *exampleapi.Client, id, waiting string,
	done func(*exampleapi.LoadBalancer, error) (bool, error)) error {
	interval := pollMin
	failures := 0
	for {
		lb, err := c.GetLoadBalancer(ctx, id)
		if over, result := done(lb, err); over {
			return result
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("waiting for load balancer %s %s: %w", id, waiting, ctx.Err())
		case err != nil:
			if failures++; failures >= maxPollErrors {
				return fmt.Errorf("waiting for load balancer %s %s: %w", id, waiting, err)
			}
			tflog.Warn(ctx, "polling load balancer failed; will retry", map[string]any{"id": id, "error": err.Error()})
		default:
			failures = 0
			tflog.Trace(ctx, "still waiting for load balancer "+waiting, map[string]any{"id": id, "status": lb.Status})
		}
		if err := sleep(ctx, interval); err != nil {
			return fmt.Errorf("waiting for load balancer %s %s: %w", id, waiting, err)
		}
		interval = min(interval*3/2, pollMax)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
