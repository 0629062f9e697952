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
	interval := pollMin
	failures := 0
	for {
		lb, err := c.GetLoadBalancer(ctx, id)
		switch {
		case exampleapi.IsNotFound(err):
			return nil, errGone
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("waiting for load balancer %s: %w", id, ctx.Err())
		case err != nil:
			failures++
			if failures >= maxPollErrors {
				return nil, fmt.Errorf("waiting for load balancer %s: %w", id, err)
			}
			tflog.Warn(ctx, "polling load balancer failed; will retry", map[string]any{"id": id, "error": err.Error()})
		case lb.Status == exampleapi.LBStatusActive:
			return lb, nil
		case lb.Status == exampleapi.LBStatusError:
			return lb, &lbFailedError{id: id, message: lb.StatusMessage}
		default:
			failures = 0
			tflog.Trace(ctx, "load balancer not ready yet", map[string]any{"id": id, "status": lb.Status})
		}
		if err := sleep(ctx, interval); err != nil {
			return nil, fmt.Errorf("waiting for load balancer %s to become active: %w", id, err)
		}
		interval = min(interval*3/2, pollMax)
	}
}

// waitLoadBalancerGone polls until reading the load balancer answers 404.
func waitLoadBalancerGone(ctx context.Context, c *exampleapi.Client, id string) error {
	interval := pollMin
	failures := 0
	for {
		_, err := c.GetLoadBalancer(ctx, id)
		switch {
		case exampleapi.IsNotFound(err):
			return nil
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("waiting for load balancer %s to be deleted: %w", id, ctx.Err())
		case err != nil:
			if failures++; failures >= maxPollErrors {
				return fmt.Errorf("waiting for load balancer %s to be deleted: %w", id, err)
			}
		}
		if err := sleep(ctx, interval); err != nil {
			return fmt.Errorf("waiting for load balancer %s to be deleted: %w", id, err)
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
