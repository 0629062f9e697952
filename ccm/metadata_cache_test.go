package ccm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/example/cloud-provider-example/exampleapi"
)

// cacheClock is a settable clock for the cache's TTLs.
type cacheClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *cacheClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *cacheClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestMetadataCache(ttl time.Duration) (*metadataCache, *cacheClock) {
	clock := &cacheClock{t: time.Unix(1_700_000_000, 0)}
	c := newMetadataCache(ttl)
	c.now = clock.now
	return c, clock
}

// fetchCount counts a fetch's calls.
type fetchCount struct{ atomic.Int32 }

// want fails t unless the fetch ran n times by then (when says when).
func (c *fetchCount) want(t *testing.T, n int32, when string) {
	t.Helper()
	if got := c.Load(); got != n {
		t.Fatalf("fetches %s = %d, want %d", when, got, n)
	}
}

// countingFetch answers md (or err) and counts its calls.
func countingFetch(md *exampleapi.InstanceMetadata, err error) (fetchFunc, *fetchCount) {
	var n fetchCount
	return func(context.Context) (*exampleapi.InstanceMetadata, error) {
		n.Add(1)
		return md, err
	}, &n
}

var (
	cacheTestMD   = &exampleapi.InstanceMetadata{ID: "i-1", Name: "node-1", Region: "ex-west-1", Zone: "ex-west-1a"}
	cacheErr404   = &exampleapi.APIError{Op: "MetadataInstance", StatusCode: http.StatusNotFound, Code: exampleapi.CodeNotFound}
	cacheErr503   = &exampleapi.APIError{Op: "MetadataInstance", StatusCode: http.StatusServiceUnavailable}
	cacheTestTTL  = 10 * time.Second
	cacheTestKeys = []string{idKey("i-1"), nameKey("ex-west-1", "node-1")}
)

func TestMetadataCacheHitWithinTTL(t *testing.T) {
	t.Parallel()
	c, clock := newTestMetadataCache(cacheTestTTL)
	fetch, n := countingFetch(cacheTestMD, nil)
	for range 5 {
		md, err := c.get(t.Context(), idKey("i-1"), fetch)
		if err != nil || md != cacheTestMD {
			t.Fatalf("get = %v, %v", md, err)
		}
	}
	n.want(t, 1, "within TTL")
	clock.advance(cacheTestTTL)
	if _, err := c.get(t.Context(), idKey("i-1"), fetch); err != nil {
		t.Fatal(err)
	}
	n.want(t, 2, "after TTL")
}

func TestMetadataCacheAliases(t *testing.T) {
	t.Parallel()
	c, _ := newTestMetadataCache(cacheTestTTL)
	fetch, n := countingFetch(cacheTestMD, nil)
	if _, err := c.get(t.Context(), nameKey("ex-west-1", "node-1"), fetch); err != nil {
		t.Fatal(err)
	}
	fail := func(context.Context) (*exampleapi.InstanceMetadata, error) {
		t.Error("lookup by id fetched although the lookup by name cached it")
		return nil, cacheErr503
	}
	if md, err := c.get(t.Context(), idKey("i-1"), fail); err != nil || md != cacheTestMD {
		t.Fatalf("get by id = %v, %v", md, err)
	}
	n.want(t, 1, "by name and id")
}

func TestMetadataCacheNegative(t *testing.T) {
	t.Parallel()
	c, clock := newTestMetadataCache(cacheTestTTL)
	fetch, n := countingFetch(nil, cacheErr404)
	for range 3 {
		if _, err := c.get(t.Context(), idKey("i-gone"), fetch); !exampleapi.IsNotFound(err) {
			t.Fatalf("get = %v, want the 404", err)
		}
	}
	n.want(t, 1, "of a cached 404")
	// 404s live shorter than answers, so a new instance is found soon.
	clock.advance(c.negTTL)
	if _, err := c.get(t.Context(), idKey("i-gone"), fetch); !exampleapi.IsNotFound(err) {
		t.Fatal(err)
	}
	n.want(t, 2, "after the negative TTL")
	if c.negTTL <= 0 || c.negTTL >= c.ttl {
		t.Fatalf("negTTL = %v, want in (0, %v)", c.negTTL, c.ttl)
	}
}

func TestMetadataCacheNotFoundDropsAliases(t *testing.T) {
	t.Parallel()
	c, clock := newTestMetadataCache(cacheTestTTL)
	ok, _ := countingFetch(cacheTestMD, nil)
	if _, err := c.get(t.Context(), idKey("i-1"), ok); err != nil {
		t.Fatal(err)
	}
	// The id entry expires first (e.g. it was cached earlier) and the
	// instance is gone: the name must not keep saying it exists.
	c.mu.Lock()
	e := c.entries[idKey("i-1")]
	e.expires = clock.now()
	c.entries[idKey("i-1")] = e
	c.mu.Unlock()
	gone, _ := countingFetch(nil, cacheErr404)
	if _, err := c.get(t.Context(), idKey("i-1"), gone); !exampleapi.IsNotFound(err) {
		t.Fatalf("get by id = %v, want 404", err)
	}
	byName, n := countingFetch(nil, cacheErr404)
	if _, err := c.get(t.Context(), nameKey("ex-west-1", "node-1"), byName); !exampleapi.IsNotFound(err) {
		t.Fatalf("get by name = %v, want 404", err)
	}
	if n.Load() != 1 {
		t.Fatal("the lookup by name was answered from a stale alias")
	}
}

func TestMetadataCacheErrorsNotCached(t *testing.T) {
	t.Parallel()
	c, _ := newTestMetadataCache(cacheTestTTL)
	fetch, n := countingFetch(nil, cacheErr503)
	for range 3 {
		if _, err := c.get(t.Context(), idKey("i-1"), fetch); !errors.Is(err, exampleapi.ErrUnavailable) {
			t.Fatalf("get = %v", err)
		}
	}
	n.want(t, 3, "of transient errors (retried)")
}

func TestMetadataCacheDisabled(t *testing.T) {
	t.Parallel()
	c, _ := newTestMetadataCache(0)
	fetch, n := countingFetch(cacheTestMD, nil)
	for range 3 {
		if _, err := c.get(t.Context(), idKey("i-1"), fetch); err != nil {
			t.Fatal(err)
		}
	}
	n.want(t, 3, "with the cache disabled")
	if c.size() != 0 {
		t.Fatalf("entries with the cache disabled = %d, want 0", c.size())
	}
}

func TestMetadataCacheCollapsesConcurrentLookups(t *testing.T) {
	t.Parallel()
	c, _ := newTestMetadataCache(cacheTestTTL)
	release := make(chan struct{})
	var n fetchCount
	fetch := func(context.Context) (*exampleapi.InstanceMetadata, error) {
		n.Add(1)
		<-release
		return cacheTestMD, nil
	}
	const callers = 20
	var joined atomic.Int32
	piledUp := make(chan struct{})
	c.joined = func(string) {
		if joined.Add(1) == callers {
			close(piledUp)
		}
	}
	var lookups errgroup.Group
	for range callers {
		lookups.Go(func() error {
			md, err := c.get(t.Context(), idKey("i-1"), fetch)
			if err == nil && md != cacheTestMD {
				return fmt.Errorf("got %v", md)
			}
			return err
		})
	}
	// Every caller waits for a fetch before the one fetch answers.
	select {
	case <-piledUp:
	case <-time.After(10 * time.Second):
		close(release)
		_ = lookups.Wait()
		t.Fatalf("only %d of %d callers waited for the fetch", joined.Load(), callers)
	}
	close(release)
	if err := lookups.Wait(); err != nil {
		t.Fatal(err)
	}
	n.want(t, 1, "of concurrent lookups")
}

func TestMetadataCacheCallerCancelDoesNotFailOthers(t *testing.T) {
	t.Parallel()
	c, _ := newTestMetadataCache(cacheTestTTL)
	started, release := make(chan struct{}), make(chan struct{})
	fetch := func(ctx context.Context) (*exampleapi.InstanceMetadata, error) {
		close(started)
		select {
		case <-release:
			return cacheTestMD, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() {
		_, err := c.get(ctx, idKey("i-1"), fetch)
		first <- err
	}()
	<-started
	second := make(chan error, 1)
	go func() {
		_, err := c.get(t.Context(), idKey("i-1"), fetch)
		second <- err
	}()
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}
	close(release)
	if err := <-second; err != nil {
		t.Fatalf("other caller got %v, want the answer", err)
	}
}

func TestMetadataCacheBounded(t *testing.T) {
	t.Parallel()
	c, clock := newTestMetadataCache(cacheTestTTL)
	c.maxEntries = 10
	for i := range 100 {
		md := &exampleapi.InstanceMetadata{ID: fmt.Sprintf("i-%d", i), Name: fmt.Sprintf("n-%d", i), Region: "r"}
		fetch, _ := countingFetch(md, nil)
		if _, err := c.get(t.Context(), idKey(md.ID), fetch); err != nil {
			t.Fatal(err)
		}
		if c.size() > c.maxEntries {
			t.Fatalf("after %d inserts: %d entries, max %d", i+1, c.size(), c.maxEntries)
		}
	}
	// Expired entries are swept at the next insert after a TTL.
	clock.advance(cacheTestTTL)
	fetch, _ := countingFetch(cacheTestMD, nil)
	if _, err := c.get(t.Context(), cacheTestKeys[0], fetch); err != nil {
		t.Fatal(err)
	}
	if got := c.size(); got != len(cacheTestKeys) {
		t.Fatalf("entries after sweep = %d, want %d", got, len(cacheTestKeys))
	}
}
