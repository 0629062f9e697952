package review

import (
	"context"
	"sync"
	"time"

	"github.com/example/cloud-provider-example/records"
)

// warmRecords answers the first reads after a start from one List of
// every record, instead of a GET per object (a thousand GETs at the
// client's default QPS would take a minute).
type warmRecords struct {
	mu     sync.Mutex
	listed time.Time
	byWS   map[string]*records.Record
	// read are the workspaces the List answered for already.
	read map[string]bool
}

// len is how many records it still answers for.
func (w *warmRecords) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byWS)
}

// warmFor is how long a List answers for: the objects a restart finds.
const warmFor = 2 * time.Minute

func (w *warmRecords) get(ctx context.Context, store *records.Store, workspace string) (*records.Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listed.IsZero() {
		all, err := store.List(ctx)
		if err != nil {
			return nil, err
		}
		w.listed, w.byWS, w.read = time.Now(), map[string]*records.Record{}, map[string]bool{}
		for _, r := range all {
			w.byWS[r.Workspace] = r
		}
		// The records no object read (deleted while the controller was
		// down) are not kept past warmFor.
		time.AfterFunc(warmFor, w.drop)
	}
	if time.Since(w.listed) > warmFor {
		w.byWS, w.read = nil, nil
		return store.Get(ctx, workspace)
	}
	// The List answers once per workspace: a read again (the engine
	// retries a Load that failed, e.g. for another owner) gets the record
	// as it is now, not none.
	if w.read[workspace] {
		return store.Get(ctx, workspace)
	}
	r := w.byWS[workspace]
	delete(w.byWS, workspace)
	w.read[workspace] = true
	return r, nil
}

// DropWarmRecords stops the records listed at start answering reads:
// another replica may have written them since (sharding: a shard taken
// after the start), so each is read as it is now.
func (b *Board) DropWarmRecords() { b.warm.drop() }

// drop forgets the List, if one was made: it answers no more (a List not
// made yet will be made when first needed, and be current).
func (w *warmRecords) drop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.listed.IsZero() {
		w.listed, w.byWS, w.read = time.Unix(1, 0), nil, nil // long past: every read is a Get
	}
}
