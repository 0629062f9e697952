package deregistration

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Settings are loadBalancer.targetPools' node lifecycle settings.
type Settings struct {
	// DrainTaints mark a drain under way on an unschedulable node.
	DrainTaints []string
	// MinHealthyShare (0 to 1) of a pool's healthy nodes stays while
	// nodes leave; the rest wait for replacements.
	MinHealthyShare float64
	// SettleTime a node that stopped leaving stays so before it returns.
	SettleTime time.Duration
}

// Planner remembers when each node was last seen leaving and returning.
// It is safe for concurrent use.
type Planner struct {
	settings Settings
	now      func() time.Time

	mu sync.Mutex
	// left: first seen leaving, for the order of departures. back: seen
	// no longer leaving, for the settle time.
	left map[string]time.Time
	back map[string]time.Time
}

// New is a Planner with settings s.
func New(s Settings) *Planner {
	return &Planner{settings: s, now: time.Now, left: map[string]time.Time{}, back: map[string]time.Time{}}
}

// Round is what one look at every node found: the basis of the decisions
// for every pool in one apply.
type Round struct {
	settings Settings
	at       time.Time
	reason   map[string]string
	left     map[string]time.Time
	back     map[string]time.Time
}

// Observe looks at every node of the cluster once and returns the round
// that decides each pool from it. A node not listed is forgotten.
func (p *Planner) Observe(nodes []*corev1.Node) *Round {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := &Round{settings: p.settings, at: p.now(), reason: map[string]string{}, left: map[string]time.Time{}, back: map[string]time.Time{}}
	for _, n := range nodes {
		name := n.Name
		if why := Reason(n, p.settings.DrainTaints); why != "" {
			r.reason[name] = why
			if _, ok := p.left[name]; !ok {
				p.left[name] = r.at
			}
			delete(p.back, name)
		} else if _, was := p.left[name]; was {
			delete(p.left, name)
			p.back[name] = r.at
		}
		if t, ok := p.left[name]; ok {
			r.left[name] = t
		}
		if t, ok := p.back[name]; ok {
			if r.at.Sub(t) >= p.settings.SettleTime {
				delete(p.back, name) // settled: an ordinary node again
			} else {
				r.back[name] = t
			}
		}
	}
	listed := map[string]bool{}
	for _, n := range nodes {
		listed[n.Name] = true
	}
	for _, m := range []map[string]time.Time{p.left, p.back} {
		for name := range m {
			if !listed[name] {
				delete(m, name)
			}
		}
	}
	return r
}

// Candidate is a node a pool's selection picks, with its instance id.
type Candidate struct {
	Node *corev1.Node
	ID   string
}

// Departure is a leaving node of a pool.
type Departure struct {
	Node   string
	ID     string
	Reason string
}

// Decision is one pool's targets for this round, and why.
type Decision struct {
	// Targets are the instance ids the pool forwards to, sorted.
	Targets []string
	// Removed are the leaving nodes that leave the pool in this apply.
	Removed []Departure
	// Waiting are the leaving nodes the floor keeps in the pool for now.
	Waiting []Departure
	// Returning are the nodes that stopped leaving and are not back yet,
	// by name, sorted; Recheck is when the first of them has settled.
	Returning []string
	Recheck   time.Duration
	// Picked is how many nodes the selection picks, Base how many of them
	// are Ready, Floor how many healthy targets the pool keeps, Healthy
	// how many it has after this round.
	Picked, Base, Floor, Healthy int
}

// Empty tells whether the pool is left without a target: no node
// qualifies at all.
func (d Decision) Empty() bool { return len(d.Targets) == 0 }

// WaitMessage says why d's leaving nodes wait, for their events.
func (d Decision) WaitMessage() string {
	return fmt.Sprintf("%d leaving node(s) wait: the pool keeps %d healthy target(s) (%d of %d Ready nodes at the configured minimum share), and has %d",
		len(d.Waiting), d.Floor, d.Floor, d.Base, d.Healthy)
}

// Pool decides the targets of a pool whose selection picks candidates and
// which forwards to applied now (instance ids). A node that does not
// leave and has settled is a target; one returning keeps its place, in or
// out; a leaving node not in the pool stays out, and one in it goes
// unless the floor keeps it: the earliest to leave go first.
func (r *Round) Pool(candidates []Candidate, applied []string) Decision {
	d := Decision{Picked: len(candidates)}
	in := func(c Candidate) bool { return slices.Contains(applied, c.ID) }
	var leaving []Candidate
	targets := map[string]bool{}
	for _, c := range candidates {
		ready := Ready(c.Node)
		if ready {
			d.Base++
		}
		switch _, back := r.back[c.Node.Name]; {
		case r.reason[c.Node.Name] != "":
			if in(c) {
				leaving = append(leaving, c)
				targets[c.ID] = true
			}
			continue
		case back && !in(c):
			d.Returning = append(d.Returning, c.Node.Name)
			if due := r.settings.SettleTime - r.at.Sub(r.back[c.Node.Name]); d.Recheck == 0 || due < d.Recheck {
				d.Recheck = max(due, time.Millisecond)
			}
			continue
		}
		targets[c.ID] = true
	}
	for _, c := range candidates {
		if targets[c.ID] && Ready(c.Node) {
			d.Healthy++
		}
	}
	d.Floor = floor(r.settings.MinHealthyShare, d.Base)
	slices.SortFunc(leaving, func(a, b Candidate) int {
		return cmp.Or(r.left[a.Node.Name].Compare(r.left[b.Node.Name]), cmp.Compare(a.Node.Name, b.Node.Name))
	})
	for _, c := range leaving {
		dep := Departure{Node: c.Node.Name, ID: c.ID, Reason: r.reason[c.Node.Name]}
		ready := Ready(c.Node)
		if ready && d.Healthy-1 < d.Floor {
			d.Waiting = append(d.Waiting, dep)
			continue
		}
		if ready {
			d.Healthy--
		}
		delete(targets, c.ID)
		d.Removed = append(d.Removed, dep)
	}
	for id := range targets {
		d.Targets = append(d.Targets, id)
	}
	slices.Sort(d.Targets)
	slices.Sort(d.Returning)
	return d
}

// floor is how many healthy targets a pool keeps of base Ready nodes:
// share of them rounded up, and at least one while any is Ready.
func floor(share float64, base int) int {
	if base == 0 {
		return 0
	}
	return max(1, int(math.Ceil(share*float64(base)-1e-9)))
}
