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
)

func newAddressesCmd() *cobra.Command {
	var ns string
	cmd := listingCmd(&cobra.Command{
		Use:   "addresses [-n NAMESPACE] [-o json]",
		Short: "List the reserved addresses the controller keeps, with their owner and holder",
		Long: `addresses lists the reserved addresses the controller keeps (docs/addresses.md),
from their plan records in the controller's namespace: the address (what plan,
history and approve take), its id and IP as last applied, the namespace that
owns it, and who holds it (the Service, and its load balancer) or "-" when it
is reserved and detached; then its latest plan and outcome. An apply's start
clears what the last one showed: while it runs, the id and IP are "-" and the
holder unknown. -n lists one namespace's only.`,
	}, false, func(ctx context.Context, c *cluster, output string, stdout, stderr io.Writer) error {
		return runAddresses(ctx, c, ns, output, stdout, stderr)
	})
	cmd.Flags().StringVarP(&ns, "address-namespace", "n", "", "list only the addresses this namespace owns")
	return cmd
}

// addressItem is one line of addresses -o json.
type addressItem struct {
	Object objectref.Ref `json:"object"`
	ID     string        `json:"id,omitempty"`
	IP     string        `json:"ip,omitempty"`
	// Owner is the namespace the address belongs to.
	Owner string `json:"owner"`
	// LoadBalancerID and Holder say who holds it; empty when detached.
	LoadBalancerID string        `json:"loadBalancerID,omitempty"`
	Holder         string        `json:"holder,omitempty"`
	LastPlan       *records.Plan `json:"lastPlan,omitempty"`
	AppliedAt      *time.Time    `json:"appliedAt,omitempty"`
	// ApplyingSince is when the apply under way started: an apply's start
	// clears the last one's outputs, so id, IP and holder are known again
	// when it ends.
	ApplyingSince *time.Time `json:"applyingSince,omitempty"`
}

func runAddresses(ctx context.Context, c *cluster, ns, output string, stdout, stderr io.Writer) error {
	recs, err := c.addressRecords(ctx, ns)
	if err != nil {
		return err
	}
	var items []addressItem
	for _, r := range recs {
		items = append(items, addressOf(r))
	}
	slices.SortFunc(items, func(a, b addressItem) int {
		return cmp.Or(cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Object.Name, b.Object.Name))
	})
	if output == "json" {
		return writeJSON(stdout, items)
	}
	if len(items) == 0 {
		where := "any namespace"
		if ns != "" {
			where = "namespace " + ns
		}
		fmt.Fprintf(stderr, "No reserved addresses of %s in the plan records of namespace %s.\n", where, c.namespace)
		return nil
	}
	tw := newTable(stdout)
	row(tw, "ADDRESS", "ID", "IP", "OWNER", "HELD BY", "LAST PLAN", "OUTCOME", "AGE")
	for _, it := range items {
		held := "-"
		if it.ApplyingSince != nil {
			held = "unknown: an apply under way (" + age(*it.ApplyingSince) + ")"
		}
		if it.LoadBalancerID != "" {
			held = it.LoadBalancerID
			if it.Holder != "" {
				held = it.Holder + " (" + it.LoadBalancerID + ")"
			}
		}
		plan, outcome, when := "-", "-", "-"
		if p := it.LastPlan; p != nil {
			plan, outcome, when = p.ID, string(p.Outcome), age(p.PlannedAt)
		}
		row(tw, it.Object.Arg(), orDash(it.ID), orDash(it.IP), it.Owner, held, plan, outcome, when)
	}
	return tw.Flush()
}

// addressRecords are the records of the addresses the controller keeps,
// those namespace ns owns ("" for all).
func (c *cluster) addressRecords(ctx context.Context, ns string) ([]*records.Record, error) {
	recs, err := c.records(ctx)
	if err != nil {
		return nil, err
	}
	var out []*records.Record
	for _, r := range recs {
		if r.Object.Kind == objectref.KindAddress && (ns == "" || r.Object.Namespace == ns) {
			out = append(out, r)
		}
	}
	return out, nil
}

// addressOf reads an address's record: its last apply's outputs say what
// it is and who holds it.
func addressOf(r *records.Record) addressItem {
	it := addressItem{Object: r.Object, Owner: r.Object.Namespace, LastPlan: latestPlan(r)}
	if a := r.Applied; a != nil {
		it.ID, it.IP, it.LoadBalancerID, it.Holder = a.Output("id"), a.Output("ip"), a.Output("load_balancer_id"), a.Output("holder")
		at := a.At
		it.AppliedAt = &at
	} else if a := r.Applying; a != nil {
		since := a.StartedAt
		it.ApplyingSince = &since
	}
	return it
}
