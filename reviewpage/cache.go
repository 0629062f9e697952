package reviewpage

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/records"
)

// cache holds every plan record, read once at start and then kept by a
// watch of the record ConfigMaps: a page is rendered from memory (1,000
// records paint at once), and a change is pushed to open pages.
type cache struct {
	store  *records.Store
	client kubernetes.Interface
	ns     string

	mu   sync.RWMutex
	byWS map[string]*records.Record
	// awaiting counts the plans awaiting approval in byWS (the badge
	// every page shows), kept at each change rather than counted per page.
	awaiting int
	// changed is closed, and replaced, at every change.
	changed chan struct{}

	// dirty are the workspaces to read again; kick wakes the reader.
	dirtyMu sync.Mutex
	dirty   map[string]bool
	kick    chan struct{}
}

func newCache(store *records.Store, client kubernetes.Interface, ns string) *cache {
	return &cache{store: store, client: client, ns: ns, byWS: map[string]*records.Record{},
		changed: make(chan struct{}), dirty: map[string]bool{}, kick: make(chan struct{}, 1)}
}

// start lists the records, then follows them until ctx ends.
func (c *cache) start(ctx context.Context) error {
	rv, err := c.load(ctx)
	if err != nil {
		return err
	}
	go c.follow(ctx, rv)
	go c.reread(ctx)
	return nil
}

// load reads every record; it returns the resource version to watch from
// (taken before the list, so no change falls between them).
func (c *cache) load(ctx context.Context) (string, error) {
	l, err := c.client.CoreV1().ConfigMaps(c.ns).List(ctx, metav1.ListOptions{LabelSelector: records.Selector, Limit: 1})
	if err != nil {
		return "", fmt.Errorf("list plan records in namespace %s: %w", c.ns, err)
	}
	all, err := c.store.List(ctx)
	if err != nil {
		return "", fmt.Errorf("read plan records in namespace %s: %w", c.ns, err)
	}
	c.mu.Lock()
	c.byWS, c.awaiting = make(map[string]*records.Record, len(all)), 0
	for _, r := range all {
		c.put(r.Workspace, r)
	}
	c.mu.Unlock()
	c.notify()
	return l.ResourceVersion, nil
}

// follow watches the record ConfigMaps from rv and marks the workspaces
// they belong to for reading again; a watch too old to resume lists again.
func (c *cache) follow(ctx context.Context, rv string) {
	for ctx.Err() == nil {
		w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &toolscache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = records.Selector
				return c.client.CoreV1().ConfigMaps(c.ns).Watch(ctx, o)
			},
		})
		if err != nil {
			klog.ErrorS(err, "cannot watch plan records")
			return
		}
		for ev := range w.ResultChan() {
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				c.mark(cm.Annotations[records.AnnotationWorkspace])
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		klog.InfoS("watch of plan records ended; reading them again")
		for ctx.Err() == nil {
			if rv, err = c.load(ctx); err == nil {
				break
			}
			klog.ErrorS(err, "cannot read plan records")
			sleep(ctx, 2*time.Second)
		}
	}
}

func (c *cache) mark(ws string) {
	if ws == "" {
		return
	}
	c.dirtyMu.Lock()
	c.dirty[ws] = true
	c.dirtyMu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// reread reads the marked workspaces again, a batch at a time (a record's
// update writes several objects).
func (c *cache) reread(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		sleep(ctx, 50*time.Millisecond)
		c.dirtyMu.Lock()
		batch := c.dirty
		c.dirty = map[string]bool{}
		c.dirtyMu.Unlock()
		for ws := range batch {
			r, err := c.store.Get(ctx, ws)
			if err != nil {
				klog.ErrorS(err, "cannot read plan record", "workspace", ws)
				continue
			}
			c.mu.Lock()
			c.put(ws, r)
			c.mu.Unlock()
		}
		c.notify()
	}
}

// put sets workspace ws's record (nil: it is gone); c.mu is held.
func (c *cache) put(ws string, r *records.Record) {
	if old := c.byWS[ws]; old != nil {
		c.awaiting -= len(old.Awaiting())
	}
	if r == nil {
		delete(c.byWS, ws)
		return
	}
	c.byWS[ws] = r
	c.awaiting += len(r.Awaiting())
}

// queued counts the plans awaiting approval.
func (c *cache) queued() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.awaiting
}

func (c *cache) notify() {
	c.mu.Lock()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// wait is closed at the next change.
func (c *cache) wait() <-chan struct{} {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.changed
}

// all are the records; callers must not change them.
func (c *cache) all() []*records.Record {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*records.Record, 0, len(c.byWS))
	for _, r := range c.byWS {
		out = append(out, r)
	}
	return out
}

// get is workspace's record, nil if there is none.
func (c *cache) get(ws string) *records.Record {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byWS[ws]
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
