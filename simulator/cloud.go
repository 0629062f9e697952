package simulator

import (
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// cloud is the operations layer: the business rules of the Example cloud on
// top of the bbolt store. HTTP handlers decode, call one operation and
// encode; they hold no rules of their own.
type cloud struct {
	db  *bolt.DB
	now func() time.Time
	// provisionDelay is read at creation time, so a runtime change of the
	// fault switches applies to load balancers created afterwards.
	provisionDelay   func() time.Duration
	lbPublicPoolSize int
	lbPublicPrefix   netip.Prefix
	// changed is told of every write, for the data plane (one pending
	// signal is enough: the plane is compiled from the whole store).
	changed chan struct{}
	// planeAt is the time of the store the data plane serves (nil
	// without a data plane): see lbNow.
	planeAt atomic.Pointer[time.Time]
}

// lbNow is the time the API reads load balancers' status at: now, or,
// with a data plane, the time of the store it last took. A load balancer
// becomes active on the clock (its ReadyAt), and the plane binds it when
// it compiles the store after that: reading status at the plane's time,
// the API never reports active an address that does not answer yet.
func (c *cloud) lbNow() time.Time {
	now := c.now()
	if t := c.planeAt.Load(); t != nil && t.Before(now) {
		return *t
	}
	return now
}

// view runs fn in a read transaction.
func (c *cloud) view(fn func(tx *bolt.Tx) error) error { return c.db.View(fn) }

// update runs fn in a write transaction; bbolt fsyncs before it returns, so
// the change is durable before anyone is told about it.
func (c *cloud) update(fn func(tx *bolt.Tx) error) error {
	if err := c.db.Update(fn); err != nil {
		return err
	}
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

// checkIfMatch compares an If-Match header with the current version. An
// empty header means an unconditional write; "*" matches any version.
func checkIfMatch(ifMatch string, version int64) error {
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	want := strings.Trim(strings.TrimPrefix(strings.TrimSpace(ifMatch), "W/"), `"`)
	if want == strconv.FormatInt(version, 10) {
		return nil
	}
	return preconditionFailed("If-Match %s does not match the current version %s", ifMatch, etag(version))
}
