package shard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// Config is one replica's part in a set of shards.
type Config struct {
	Client kubernetes.Interface
	// Namespace holds the Leases: the controller's own.
	Namespace string
	// Prefix names the set's Leases (<prefix>-shard-<i>,
	// <prefix>-replica-<hash>) and labels them.
	Prefix string
	// Identity is this replica's, unique among the live ones (a pod name
	// and uid).
	Identity string
	// Shards is the number of shards; every replica must agree on it.
	Shards int
	// LeaseDuration is how long a Lease holds without renewal; a replica
	// that stops renewing loses its shards after it (the failover time).
	LeaseDuration time.Duration
	// RenewPeriod is how often the Leases are renewed and looked at
	// (default LeaseDuration/4).
	RenewPeriod time.Duration
	// Clock is the replica's clock (default the real one).
	Clock clock.PassiveClock
	// OnMove hears of every shard this replica takes or gives back: from
	// and to name the replicas ("" for none).
	OnMove func(shard int, from, to string)
	// Leads, if set, tells whether this replica leads now (holds the
	// cluster-wide workspaces); its Lease says so, for readers
	// (ReadOwners).
	Leads func() bool
}

// Holder holds one replica's shards.
type Holder struct {
	cfg    Config
	leases leases
	// margin is how long before its lease runs out a replica stops owning
	// a shard: the other replicas' clocks may run a little fast.
	margin time.Duration

	mu sync.Mutex
	// renewed is, per shard held, when (on this clock) the write that
	// last renewed it was sent.
	renewed map[int]time.Time
	// taken is, per shard held, the generation it was taken in: a shard
	// lost and taken again, however briefly, comes back with a new one.
	taken      map[int]uint64
	generation uint64
	// observed is, per Lease name, its last resource version and when it
	// was first seen.
	observed map[string]observation
}

type observation struct {
	version string
	since   time.Time
}

// New checks cfg and returns its Holder; Run starts it.
func New(cfg Config) (*Holder, error) {
	switch {
	case cfg.Client == nil || cfg.Namespace == "" || cfg.Prefix == "" || cfg.Identity == "":
		return nil, errors.New("shard: client, namespace, prefix and identity are required")
	case cfg.Shards < 1:
		return nil, fmt.Errorf("shard: %d shards: want at least 1", cfg.Shards)
	case cfg.LeaseDuration < time.Second:
		return nil, fmt.Errorf("shard: lease duration %s: want at least 1s", cfg.LeaseDuration)
	}
	if cfg.RenewPeriod <= 0 {
		cfg.RenewPeriod = cfg.LeaseDuration / 4
	}
	if cfg.RenewPeriod >= cfg.LeaseDuration/2 {
		return nil, fmt.Errorf("shard: renew period %s: want under half the lease duration %s", cfg.RenewPeriod, cfg.LeaseDuration)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Holder{cfg: cfg, margin: cfg.LeaseDuration / 10, renewed: map[int]time.Time{}, taken: map[int]uint64{}, observed: map[string]observation{},
		leases: leases{client: cfg.Client, namespace: cfg.Namespace, prefix: cfg.Prefix, identity: cfg.Identity, duration: cfg.LeaseDuration, shards: cfg.Shards}}, nil
}

// Shards is the number of shards.
func (h *Holder) Shards() int { return h.cfg.Shards }

// Owns tells whether this replica may act on shard i now: it holds it and
// renewed it recently enough that no other replica can have taken it.
func (h *Holder) Owns(i int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.renewed[i]
	return ok && h.cfg.Clock.Since(at) < h.cfg.LeaseDuration-h.margin
}

// OwnsKey is Owns of key's shard.
func (h *Holder) OwnsKey(key string) bool { return h.Owns(Of(key, h.cfg.Shards)) }

// Holds tells whether this replica holds shard i: it took it and has not
// given it back or seen it taken. A shard held is not owned for a moment
// when a renewal is late (a slow API server): its objects are still this
// replica's to queue, not to act on until it owns it again.
func (h *Holder) Holds(i int) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.renewed[i]
	return ok
}

// HoldsKey is Holds of key's shard.
func (h *Holder) HoldsKey(key string) bool { return h.Holds(Of(key, h.cfg.Shards)) }

// Held are the shards held, each with the generation it was taken in.
func (h *Holder) Held() map[int]uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.taken)
}

// LeaseName is the name of shard i's Lease.
func (h *Holder) LeaseName(i int) string { return leaseName(h.cfg.Prefix, i) }

// Identity is this replica's.
func (h *Holder) Identity() string { return h.cfg.Identity }

// Owned are the shards this replica owns now.
func (h *Holder) Owned() []int {
	var out []int
	for i := range h.cfg.Shards {
		if h.Owns(i) {
			out = append(out, i)
		}
	}
	return out
}

// Run holds the replica's share of the shards until ctx ends, then gives
// them back and retires the replica's Lease, so the others take them at
// once. A replica that dies instead loses them after the lease duration.
func (h *Holder) Run(ctx context.Context) {
	t := time.NewTicker(h.cfg.RenewPeriod)
	defer t.Stop()
	for {
		if err := h.step(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "shards: one round failed; next round", "identity", h.cfg.Identity)
		}
		select {
		case <-ctx.Done():
			h.stop()
			return
		case <-t.C:
		}
	}
}

// step is one round: announce, look, decide, act.
func (h *Holder) step(ctx context.Context) error {
	all, err := h.leases.list(ctx)
	if err != nil {
		return err
	}
	now := h.cfg.Clock.Now()
	leads := h.cfg.Leads != nil && h.cfg.Leads()
	if err := h.leases.announce(ctx, all[memberName(h.cfg.Prefix, h.cfg.Identity)], now, leads); err != nil {
		return err
	}
	v := h.look(all, now)
	a := decide(v)
	var errs []error
	for _, i := range a.give {
		h.drop(i) // stop acting before anyone may start
		cur := all[leaseName(h.cfg.Prefix, i)]
		if err := h.leases.write(ctx, i, cur, "", h.cfg.Clock.Now()); err != nil {
			errs = append(errs, fmt.Errorf("give back shard %d: %w", i, err))
			continue
		}
		h.moved(i, h.cfg.Identity, "")
	}
	for _, i := range a.renew {
		h.hold(ctx, i, all[leaseName(h.cfg.Prefix, i)], &errs)
	}
	for _, i := range a.take {
		cur := all[leaseName(h.cfg.Prefix, i)]
		from := ""
		if cur != nil {
			from = ptr.Deref(cur.Spec.HolderIdentity, "")
		}
		if h.hold(ctx, i, cur, &errs) {
			h.moved(i, from, h.cfg.Identity)
		}
	}
	// What this replica holds but the Leases no longer say it does (taken
	// after a pause longer than the lease): not its own any more.
	h.mu.Lock()
	for i := range h.renewed {
		if !slices.Contains(a.renew, i) && !slices.Contains(a.take, i) {
			delete(h.renewed, i)
			delete(h.taken, i)
		}
	}
	h.mu.Unlock()
	return errors.Join(errs...)
}

// hold writes this replica as shard i's holder; it owns the shard from
// the time the write was sent, if it succeeds.
func (h *Holder) hold(ctx context.Context, i int, cur *coordinationv1.Lease, errs *[]error) bool {
	sent := h.cfg.Clock.Now()
	if err := h.leases.write(ctx, i, cur, h.cfg.Identity, sent); err != nil {
		h.drop(i)
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			// Another replica wrote the Lease first: the next round sees it.
			klog.V(2).InfoS("shards: another replica took the shard first", "shard", i, "identity", h.cfg.Identity)
			return false
		}
		*errs = append(*errs, fmt.Errorf("hold shard %d: %w", i, err))
		return false
	}
	h.mu.Lock()
	if _, ok := h.renewed[i]; !ok {
		h.generation++
		h.taken[i] = h.generation
	}
	h.renewed[i] = sent
	h.mu.Unlock()
	return true
}

func (h *Holder) drop(i int) {
	h.mu.Lock()
	delete(h.renewed, i)
	delete(h.taken, i)
	h.mu.Unlock()
}

func (h *Holder) moved(i int, from, to string) {
	klog.InfoS("shard moved", "shard", i, "from", from, "to", to)
	if h.cfg.OnMove != nil {
		h.cfg.OnMove(i, from, to)
	}
}

// look turns the listed Leases into a view, judging each Lease's age on
// this replica's clock from when it was seen to change.
func (h *Holder) look(all map[string]*coordinationv1.Lease, now time.Time) view {
	h.mu.Lock()
	defer h.mu.Unlock()
	next := make(map[string]observation, len(all))
	since := func(l *coordinationv1.Lease) time.Time {
		o, ok := h.observed[l.Name]
		if !ok || o.version != l.ResourceVersion {
			o = observation{version: l.ResourceVersion, since: now}
		}
		next[l.Name] = o
		return o.since
	}
	v := view{self: h.cfg.Identity, now: now, duration: h.cfg.LeaseDuration, live: 1, shards: make([]seen, h.cfg.Shards)}
	self := memberName(h.cfg.Prefix, h.cfg.Identity)
	for name, l := range all {
		switch l.Labels[LabelRole] {
		case roleMember:
			if name != self && now.Sub(since(l)) <= h.cfg.LeaseDuration {
				v.live++
			}
		case roleShard:
			// A shard outside this replica's count (another configuration) is not its to hold.
			if i, err := strconv.Atoi(l.Annotations[annotationShard]); err == nil && i >= 0 && i < len(v.shards) && name == leaseName(h.cfg.Prefix, i) {
				v.shards[i] = seen{holder: ptr.Deref(l.Spec.HolderIdentity, ""), since: since(l)}
			}
		}
	}
	h.observed = next
	return v
}

// stop gives back every shard held and retires the replica's Lease.
func (h *Holder) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.LeaseDuration)
	defer cancel()
	all, err := h.leases.list(ctx)
	if err != nil {
		klog.ErrorS(err, "shards: cannot give them back on stop; they move after the lease duration")
		return
	}
	for _, i := range h.Owned() {
		h.drop(i)
		if err := h.leases.write(ctx, i, all[leaseName(h.cfg.Prefix, i)], "", h.cfg.Clock.Now()); err != nil {
			klog.ErrorS(err, "shards: cannot give one back on stop", "shard", i)
			continue
		}
		h.moved(i, h.cfg.Identity, "")
	}
	if err := h.leases.retire(ctx); err != nil {
		klog.ErrorS(err, "shards: cannot retire the replica's Lease")
	}
}
