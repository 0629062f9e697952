package ccm

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The node controllers ask about every node every few seconds, often
// several times per sync (addresses, type, zone); the metadata API is rate
// limited per token. metadataCache answers repeats within a short TTL from
// memory and collapses concurrent identical lookups into one request.
const (
	// defaultCacheEntries bounds the cache: two keys (id, name) per node of
	// a large cluster, with room to spare.
	defaultCacheEntries = 20000
	// defaultFetchTimeout bounds a shared fetch that outlives its callers.
	defaultFetchTimeout = time.Minute
)

// fetchFunc asks the metadata API for one instance.
type fetchFunc func(ctx context.Context) (*exampleapi.InstanceMetadata, error)

// cacheEntry is an answer: metadata, or a 404 (md nil, err set). The
// metadata is shared between callers and must not be modified.
type cacheEntry struct {
	md      *exampleapi.InstanceMetadata
	err     error
	expires time.Time
}

type metadataCache struct {
	ttl          time.Duration // positive answers; bounds how late a deletion is seen
	negTTL       time.Duration // 404s: shorter, so a new instance is found soon
	maxEntries   int
	fetchTimeout time.Duration
	now          func() time.Time
	// joined, if set, hears of each caller that waits for a fetch (its
	// own or a shared one): tests use it to know callers have piled up.
	joined func(key string)

	flight singleflight.Group

	mu        sync.Mutex
	entries   map[string]cacheEntry
	nextSweep time.Time
}

// newMetadataCache caches answers for ttl and 404s for a fifth of it;
// ttl <= 0 disables caching but still collapses concurrent lookups.
func newMetadataCache(ttl time.Duration) *metadataCache {
	return &metadataCache{
		ttl:          ttl,
		negTTL:       ttl / 5,
		maxEntries:   defaultCacheEntries,
		fetchTimeout: defaultFetchTimeout,
		now:          time.Now,
		entries:      map[string]cacheEntry{},
	}
}

// Cache keys. Instance names and ids contain no '/'.
func idKey(id string) string             { return "id/" + id }
func nameKey(region, name string) string { return "name/" + region + "/" + name }

const selfKey = "self"

// get returns the cached answer for key, else calls fetch once for all
// concurrent callers of the same key. The fetch runs detached from the
// first caller's cancellation (bounded by fetchTimeout) so that caller
// leaving does not fail the others; each caller still returns as soon as
// its own ctx is done.
func (c *metadataCache) get(ctx context.Context, key string, fetch fetchFunc) (*exampleapi.InstanceMetadata, error) {
	if e, ok := c.lookup(key); ok {
		klog.V(4).InfoS("Instance metadata cache hit", "key", key, "notFound", e.md == nil)
		return e.md, e.err
	}
	ch := c.flight.DoChan(key, func() (any, error) {
		// A flight for key may have finished between lookup and DoChan.
		if e, ok := c.lookup(key); ok {
			return e.md, e.err
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.fetchTimeout)
		defer cancel()
		start := time.Now()
		md, err := fetch(fctx)
		klog.V(4).InfoS("Instance metadata fetched", "key", key, "duration", time.Since(start), "err", err)
		c.store(key, md, err)
		return md, err
	})
	if c.joined != nil {
		c.joined(key)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		md, _ := r.Val.(*exampleapi.InstanceMetadata)
		return md, r.Err
	}
}

func (c *metadataCache) lookup(key string) (cacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Expired entries stay until the sweep: store still needs them to
	// find the aliases of an instance that turned out to be gone.
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		return cacheEntry{}, false
	}
	return e, true
}

// aliases are the keys under which md can be looked up besides self.
func aliases(md *exampleapi.InstanceMetadata) []string {
	return []string{idKey(md.ID), nameKey(md.Region, md.Name)}
}

// store caches an answer: metadata under key and its id and name aliases
// (a lookup by name then by providerID costs one request), a 404 under key
// only. Other errors are not cached: they are transient and retried.
func (c *metadataCache) store(key string, md *exampleapi.InstanceMetadata, err error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err == nil && md != nil && c.ttl > 0:
		e := cacheEntry{md: md, expires: now.Add(c.ttl)}
		c.entries[key] = e
		for _, k := range aliases(md) {
			c.entries[k] = e
		}
	case exampleapi.IsNotFound(err) && c.negTTL > 0:
		// The instance is gone: drop what other keys still say about it,
		// so a lookup by name does not contradict one by id.
		if old, ok := c.entries[key]; ok && old.md != nil {
			for _, k := range aliases(old.md) {
				if c.entries[k].md == old.md {
					delete(c.entries, k)
				}
			}
		}
		c.entries[key] = cacheEntry{err: err, expires: now.Add(c.negTTL)}
	default:
		return
	}
	if len(c.entries) > c.maxEntries || !now.Before(c.nextSweep) {
		c.sweep(now)
	}
}

// sweep drops expired entries, then arbitrary ones while over maxEntries.
// It runs at most once per TTL unless the cache is full. c.mu is held.
func (c *metadataCache) sweep(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for k := range c.entries {
		if len(c.entries) <= c.maxEntries {
			break
		}
		delete(c.entries, k)
	}
	c.nextSweep = now.Add(c.ttl)
}

// size is the number of entries, expired ones included (example_ccm_memory_entries).
func (c *metadataCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
