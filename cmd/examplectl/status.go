package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/shard"
)

func newStatusCmd() *cobra.Command {
	return listingCmd(&cobra.Command{
		Use:   "status [-o json|wide]",
		Short: "List every object the controller keeps plan records for",
		Long: `status lists the plan records in the controller's namespace: one line per
Service (ns/name), load balancer group (group:ns/name) and for the route set
(routes), with the apply policy, the
latest plan (id, outcome, changes as +add ~change -destroy, its approvals of
the number required with who approved and how long ago, who made the change
when known, the policy rules that flagged it), the last drift check, a state
lock the controller could not take, and the age of the latest plan. The
OBJECT column is what plan, history, approve and unlock take. With sharding,
REPLICA names the replica that owns each object now, from the shard Leases
(the leader for the route set and the pools; - while a shard is handed
over); it needs list on Leases in the controller's namespace. -o wide adds
the workspace (the key of the record's objects and of the Terraform state)
and a group's members (the first sets its load balancer);
-o json has everything, the latest plan in full. After the objects come
the nodes leaving the target pools: waiting while the floor of healthy
targets keeps them, or draining (no new connections) until when.`,
	}, true, runStatus)
}

// statusItem is one line of status -o json.
type statusItem struct {
	Object    objectref.Ref `json:"object"`
	Workspace string        `json:"workspace"`
	Policy    string        `json:"policy"`
	// RequiredApprovals is how many distinct approvers a plan needs.
	RequiredApprovals int               `json:"requiredApprovals"`
	LastPlan          *records.Plan     `json:"lastPlan,omitempty"`
	Drift             *records.Drift    `json:"drift,omitempty"`
	Lock              *records.LockInfo `json:"lock,omitempty"`
	// Applying is the apply under way, or one that never reported and
	// that the object's next plan records interrupted.
	Applying *records.ApplyStart `json:"applying,omitempty"`
	// Members are a load balancer group's member Services.
	Members []objectref.Ref `json:"members,omitempty"`
	// Leaving are the nodes leaving the target pools (their record only).
	Leaving []records.LeavingNode `json:"leaving,omitempty"`
	// Replica owns the object now, when the controller is sharded.
	Replica   string    `json:"replica,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func runStatus(ctx context.Context, c *cluster, output string, stdout, stderr io.Writer) error {
	recs, err := c.records(ctx)
	if err != nil {
		return err
	}
	items := make([]statusItem, 0, len(recs))
	for _, r := range recs {
		it := statusItem{Object: r.Object, Workspace: r.Workspace, Policy: r.Policy, RequiredApprovals: r.Required(), Drift: r.Drift, Lock: r.Lock, Applying: r.Applying,
			Members: r.Members, Leaving: r.Leaving, UpdatedAt: r.UpdatedAt}
		it.LastPlan = latestPlan(r)
		items = append(items, it)
	}
	sharded := ownersOf(ctx, c, items, stderr)
	slices.SortFunc(items, func(a, b statusItem) int {
		return cmp.Or(
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Workspace, b.Workspace),
		)
	})
	if output == "json" {
		return writeJSON(stdout, items)
	}
	if len(items) == 0 {
		fmt.Fprintf(stderr, "No plan records in namespace %s.\n", c.namespace)
		return nil
	}
	tw := newTable(stdout)
	wide := output == "wide"
	// cells drops the workspace (the second cell) and the members (the
	// last) unless wide, and the replica (before the members) unless
	// sharded.
	cells := func(c ...string) []string {
		if !sharded {
			c = append(c[:len(c)-2], c[len(c)-1])
		}
		if wide {
			return c
		}
		return append(c[:1], c[2:len(c)-1]...)
	}
	row(tw, cells("OBJECT", "WORKSPACE", "POLICY", "LAST PLAN", "OUTCOME", "CHANGES", "APPROVALS", "AUTHOR", "VERDICTS", "DRIFT", "LOCK", "AGE", "REPLICA", "MEMBERS")...)
	for _, it := range items {
		plan, outcome, changes, author, planned := "-", "-", "-", "-", it.UpdatedAt
		p := it.LastPlan
		if p != nil {
			plan, outcome, changes, author, planned = p.ID, string(p.Outcome), p.Summary.String(), orDash(p.Author), p.PlannedAt
		}
		lock := "-"
		if it.Lock != nil {
			lock = it.Lock.ID
		}
		rec := &records.Record{RequiredApprovals: it.RequiredApprovals}
		row(tw, cells(it.Object.Arg(), it.Workspace, orDash(it.Policy), plan, outcome, changes,
			approvalsCell(rec, p), author, verdictsCell(p), driftColumn(it.Drift), lock, age(planned), orDash(it.Replica), membersCell(it.Members))...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeLeaving(stdout, items)
}

// ownersOf sets each item's replica from the shard Leases and reports
// whether the controller is sharded. Status does not fail for them: a
// reviewer without list on Leases gets the rest and a note why not.
func ownersOf(ctx context.Context, c *cluster, items []statusItem, stderr io.Writer) bool {
	owners, err := shard.ReadOwners(ctx, c.client, c.namespace, shard.ControllerPrefix, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "No REPLICA column: %v (it needs list on leases.coordination.k8s.io in %s).\n", err, c.namespace)
		return false
	}
	if owners == nil {
		return false
	}
	for i := range items {
		switch ref := items[i].Object; ref.Kind {
		case objectref.KindRouteSet, objectref.KindTargetPools:
			items[i].Replica = owners.Leader
		default:
			items[i].Replica = owners.Of(ref.Key())
		}
	}
	return true
}

// writeLeaving lists the nodes leaving the target pools, after the
// objects: waiting for the floor of healthy targets, or draining (out of
// the pool, open connections kept) until when.
func writeLeaving(w io.Writer, items []statusItem) error {
	var leaving []records.LeavingNode
	for _, it := range items {
		leaving = append(leaving, it.Leaving...)
	}
	if len(leaving) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nNodes leaving the target pools:")
	tw := newTable(w)
	row(tw, "NODE", "INSTANCE", "POOL", "STATE", "REASON", "SINCE", "UNTIL")
	for _, l := range leaving {
		until := "-"
		if l.Until != nil {
			until = stamp(*l.Until)
		}
		row(tw, l.Node, l.Instance, l.Pool, l.State, l.Reason, age(l.Since), until)
	}
	return tw.Flush()
}

// driftColumn: yes/no and how long ago it was checked, or - if never.
func driftColumn(d *records.Drift) string {
	if d == nil {
		return "-"
	}
	found := "no"
	if d.Detected {
		found = "yes"
	}
	return fmt.Sprintf("%s (%s)", found, age(d.CheckedAt))
}
