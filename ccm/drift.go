package ccm

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// driftWorker plans every known object against the refreshed cloud each
// interval (jittered, a bounded number at once) and reports what changed
// outside Terraform; under auto the engine also corrects it.
type driftWorker struct {
	engine *engine.Engine
	review *review
	cfg    DriftConfig
}

func newDriftWorker(e *engine.Engine, rv *review, cfg DriftConfig) *driftWorker {
	return &driftWorker{engine: e, review: rv, cfg: cfg}
}

func (d *driftWorker) run(ctx context.Context) {
	klog.InfoS("drift checks started", "interval", d.cfg.Interval.Duration, "concurrency", d.cfg.Concurrency)
	for {
		// Up to 10 % jitter, so replicas and restarts do not line up.
		wait := d.cfg.Interval.Duration + time.Duration(rand.Int64N(int64(d.cfg.Interval.Duration/10)+1))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		d.checkAll(ctx)
	}
}

// checkAll checks every known object once.
func (d *driftWorker) checkAll(ctx context.Context) {
	sem := make(chan struct{}, max(d.cfg.Concurrency, 1))
	for _, o := range d.engine.Known() {
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

func (d *driftWorker) check(ctx context.Context, o engine.Known) {
	s := subject{ref: routeSetRef, kind: records.KindDrift}
	if o.Service != nil {
		s = serviceSubject(o.Service, records.KindDrift)
	}
	out, err := d.engine.CheckDrift(ctx, o)
	d.review.report(ctx, s, out, err)
	if err != nil {
		klog.ErrorS(err, "drift check failed", "object", o.Key)
	}
}
