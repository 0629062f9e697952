package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/termsafe"
)

// addressQuery is what an argument naming an address matches.
type addressQuery struct {
	match func(*records.Record) bool
	// what says what was looked for, in an error.
	what string
	// ns is the namespace looked in ("" for all).
	ns string
	// byName: address:NS/NAME, which a record names whatever its apply.
	byName bool
}

// queryOf reads arg: address:NS/NAME (or address:NAME in namespace ns),
// an address id or an IP; with an id or IP, of namespace ns only if it is
// set.
func (c *cluster) queryOf(arg, ns string) (addressQuery, error) {
	q := addressQuery{ns: ns}
	switch ip, ipErr := netip.ParseAddr(arg); {
	case strings.HasPrefix(arg, "address:"):
		ref, err := objectref.Parse(arg, ns, c.defaultNamespace)
		if err != nil {
			return q, err
		}
		q.ns, q.what, q.byName = ref.Namespace, "for "+ref.Arg(), true
		q.match = func(r *records.Record) bool { return r.Object.Name == ref.Name }
	case strings.HasPrefix(arg, "addr-"):
		q.what = "of an address with id " + arg
		q.match = func(r *records.Record) bool { return addressOf(r).ID == arg }
	case ipErr == nil:
		q.what = "of an address with IP " + ip.String()
		q.match = func(r *records.Record) bool {
			got, err := netip.ParseAddr(addressOf(r).IP)
			return err == nil && got == ip
		}
	default:
		return q, fmt.Errorf("%q is not an address: want address:NS/NAME, address:NAME -n NS, an address id (addr-...) or an IP, as examplectl addresses lists them", arg)
	}
	return q, nil
}

// findAddress is the record of the address arg names (queryOf), among
// the address records examplectl addresses lists. An id or IP is read
// from a record's last apply, which an apply's start clears
// (records.Record.Applied): while no record matches and some address's
// apply is under way, it waits for those applies to end, within d,
// saying so on stderr.
func (c *cluster) findAddress(ctx context.Context, arg, ns string, d time.Duration, stderr io.Writer) (*records.Record, error) {
	q, err := c.queryOf(arg, ns)
	if err != nil {
		return nil, err
	}
	var found, unknown []*records.Record
	said := false
	look := func(context.Context) (bool, error) {
		recs, err := c.addressRecords(ctx, q.ns)
		if err != nil {
			return false, err
		}
		found = slices.DeleteFunc(slices.Clone(recs), func(r *records.Record) bool { return !q.match(r) })
		unknown = nil
		if len(found) == 0 && !q.byName {
			unknown = slices.DeleteFunc(recs, func(r *records.Record) bool { return !idUnknown(r) })
		}
		applying := slices.ContainsFunc(unknown, func(r *records.Record) bool { return r.Applying != nil })
		if applying && !said && d > 0 {
			fmt.Fprintf(stderr, "No address the controller keeps shows %s yet, and %s: waiting for it to end (at most %s).\n",
				arg, unknownWhy(unknown), d)
			said = true
		}
		return !applying, nil
	}
	if d <= 0 {
		_, err = look(ctx)
	} else {
		err = wait.PollUntilContextTimeout(ctx, releasePoll, d, true, look)
	}
	if err != nil && !(wait.Interrupted(err) && ctx.Err() == nil) {
		return nil, err
	}
	if len(found) == 0 {
		return nil, q.notFound(c.namespace, unknown)
	}
	return q.pick(arg, found)
}

// pick is the record among found (each matching arg) that arg means: an
// IP (or a name) may be left in the record of an address released since:
// the one not released wins, then the newest.
func (q addressQuery) pick(arg string, found []*records.Record) (*records.Record, error) {
	slices.SortStableFunc(found, func(a, b *records.Record) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	live := slices.DeleteFunc(slices.Clone(found), released)
	if len(live) > 1 && !q.byName {
		args := make([]string, len(live))
		for i, r := range live {
			args[i] = r.Object.Arg()
		}
		return nil, fmt.Errorf("%s names more than one address the controller keeps (%s): name one as address:NS/NAME", arg, strings.Join(args, ", "))
	}
	if len(live) > 0 {
		return live[0], nil
	}
	return found[0], nil
}

// notFound is the error of a query no record matches, in the records of
// namespace recordsNS; unknown are the addresses whose id and IP are not
// known now: one of them may be the one asked for.
func (q addressQuery) notFound(recordsNS string, unknown []*records.Record) error {
	where := ""
	if q.ns != "" && !q.byName {
		where = " of namespace " + q.ns
	}
	err := fmt.Errorf("no plan record %s%s in namespace %s: it is not an address the controller keeps (examplectl addresses lists them; is --namespace the controller's namespace?)",
		q.what, where, recordsNS)
	if len(unknown) > 0 {
		err = fmt.Errorf("no plan record %s%s in namespace %s now: %s, and an address's id and IP are read from its last apply: name it as address:NS/NAME, or ask again once the apply ends",
			q.what, where, recordsNS, unknownWhy(unknown))
	}
	return err
}

// idUnknown tells whether r's record does not show the address's id and
// IP now although it may have one: an apply under way, or its latest plan
// failed to apply (the state may have changed).
func idUnknown(r *records.Record) bool {
	if r.Applied != nil {
		return false
	}
	if r.Applying != nil {
		return true
	}
	p := latestPlan(r)
	return p != nil && p.Outcome == records.Failed
}

// unknownWhy says why the ids and IPs of the addresses unknown are not
// known (idUnknown).
func unknownWhy(unknown []*records.Record) string {
	whys := make([]string, 0, len(unknown))
	for _, r := range unknown {
		why := termsafe.Line(r.Object.Arg()) + "'s last apply failed"
		if a := r.Applying; a != nil {
			why = termsafe.Line(r.Object.Arg()) + "'s apply is under way (started " + age(a.StartedAt) + " ago)"
		}
		whys = append(whys, why)
	}
	return strings.Join(whys, "; ")
}
