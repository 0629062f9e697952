package ccm

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
)

// targetPool makes sure the target pool of svc's node selection exists
// and follows the nodes, and returns its id; "" when svc lists its nodes
// itself (pools disabled, or a selection too long to name on a pool).
// The pools are one object of their own, with their record, review and
// events (on the record's ConfigMap), like the route set.
func (l *loadBalancers) targetPool(ctx context.Context, svc *v1.Service, nodes []*v1.Node) (string, error) {
	if l.cfg.LoadBalancer.TargetPools.Disabled {
		return "", nil
	}
	sel, ok, err := renderer.Selection(svc)
	if err != nil || !ok {
		return "", err
	}
	_, j, err := l.engine.RenderTargetPools(nil)
	if err != nil {
		return "", err
	}
	subj := l.board.PoolsSubject(j.Key, records.KindChange)
	rv := l.board.For(ctx, subj, annotations.ApplyPolicy(l.cfg.LoadBalancer.TargetPools.ApplyPolicy))
	id, out, err := l.engine.ReconcileTargetPools(ctx, sel, nodes, rv)
	l.board.Report(ctx, subj, out, err)
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait), errors.As(err, &denied):
		return "", api.NewRetryError(fmt.Sprintf("target pools: %v", err), approvalRetry)
	case err != nil:
		return "", fmt.Errorf("target pools: %w", err)
	}
	return id, nil
}
