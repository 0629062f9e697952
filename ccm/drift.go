package ccm

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// driftWorker plans every known object against the refreshed cloud each
// interval (jittered, a bounded number at once) and reports what changed
// outside Terraform; under auto the engine also corrects it.
type driftWorker struct {
	engine *engine.Engine
	board  driftReviewer
	// client re-reads Services (nil: drift checks of Services run
	// unguarded).
	client kubernetes.Interface
	cfg    cloudconfig.DriftConfig
	// members finds a group's members now (nil: drift checks of groups
	// run unguarded).
	members func(g annotations.Group) []*v1.Service
}

func newDriftWorker(e *engine.Engine, board driftReviewer, client kubernetes.Interface, cfg cloudconfig.DriftConfig) *driftWorker {
	return &driftWorker{engine: e, board: board, client: client, cfg: cfg}
}

func (d *driftWorker) run(ctx context.Context) {
	klog.InfoS("drift checks started", "interval", d.cfg.Interval.Duration, "concurrency", d.cfg.Concurrency)
	// A sweep, then the interval from its end with up to 10 % jitter, so
	// replicas and restarts do not line up. The first sweep, at start,
	// finds nothing converged yet.
	utilwait.JitterUntilWithContext(ctx, d.checkAll, d.cfg.Interval.Duration, 0.1, true)
}

// checkAll checks every known object once.
func (d *driftWorker) checkAll(ctx context.Context) {
	sem := make(chan struct{}, max(d.cfg.Concurrency, 1))
	known := d.engine.Known()
	klog.InfoS("drift sweep started", "objects", len(known))
	for _, o := range known {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		go func() {
			defer func() { <-sem }()
			d.check(ctx, o)
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
}

func (d *driftWorker) check(ctx context.Context, k engine.Known) {
	var guard engine.Guard
	switch {
	case k.Service != nil:
		guard = d.guardService(k.Service)
	case k.Group != nil:
		guard = d.guardGroup(annotations.Group{Namespace: k.Group.Namespace, Name: k.Group.Name}, k.Group)
	}
	s := d.board.DriftSubject(ctx, k)
	_, err := d.board.Run(ctx, &s, k.Review.Policy, func(rv engine.Review) (*engine.Outcome, error) {
		k.Review = rv
		return d.engine.CheckDrift(ctx, k, guard)
	})
	if errors.Is(err, engine.ErrSkipped) || errors.Is(err, engine.ErrGone) {
		klog.V(2).InfoS("drift check skipped: the object changed or went away since the sweep began", "object", k.Ref)
		return
	}
	if err != nil {
		klog.ErrorS(err, "drift check failed", "object", k.Ref)
	}
}

// guardGroup checks, under the workspace's lock, that the group's
// members (from the informer) are those the check plans for.
func (d *driftWorker) guardGroup(g annotations.Group, snap *engine.KnownGroup) engine.Guard {
	return func(context.Context) error {
		if d.members == nil {
			return nil
		}
		now := lbmodel.Group{Namespace: g.Namespace, Name: g.Name, Members: d.members(g)}
		was := lbmodel.Group{Namespace: g.Namespace, Name: g.Name, Members: snap.Members}
		if engine.GroupInputs(now, nil, snap.PoolID) != engine.GroupInputs(was, nil, snap.PoolID) {
			return engine.ErrSkipped
		}
		return nil
	}
}

// guardService re-reads the Service from the API server (under the
// workspace's lock): a check runs only for the Service as it is now, not
// as the sweep found it.
func (d *driftWorker) guardService(snap *v1.Service) engine.Guard {
	return func(ctx context.Context) error {
		if d.client == nil {
			return nil
		}
		cur, err := d.client.CoreV1().Services(snap.Namespace).Get(ctx, snap.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return engine.ErrSkipped
		case err != nil:
			return fmt.Errorf("drift check: read %s: %w", objectref.Service(snap).Describe(), err)
		case cur.UID != snap.UID || cur.DeletionTimestamp != nil || engine.ServiceInputs(cur, nil) != engine.ServiceInputs(snap, nil):
			return engine.ErrSkipped
		}
		return nil
	}
}
