package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// updateBackoff: retry.DefaultRetry's 5 tries in 50 ms are too few when
// several processes (a leader handing over) update one record: 30 tries
// over up to ~12 s, jittered. (No Cap: reaching it ends the retries.)
var updateBackoff = wait.Backoff{Steps: 30, Duration: 5 * time.Millisecond, Factor: 1.2, Jitter: 1}

// Update changes the record of workspace with fn, creating it when absent
// (fn then gets an empty record). fn may run more than once (on a write
// conflict the record is read again), so it must only change the record.
// Plans beyond the store's keep are dropped (Plans is newest first) with
// their texts; a Text fn sets on a plan is stored in the Secret, a plan
// without Text keeps the one stored. Nothing is written when fn changes
// nothing. It returns the record as stored, plans without Text.
func (s *Store) Update(ctx context.Context, workspace string, fn func(*Record) error) (*Record, error) {
	if err := validWorkspace(workspace); err != nil {
		return nil, err
	}
	mu := s.lock(workspace)
	mu.Lock()
	defer mu.Unlock()
	var out *Record
	err := retry.RetryOnConflict(updateBackoff, func() error {
		var err error
		out, err = s.update(ctx, workspace, fn)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// snapshot is a workspace's objects: the index as of now, the rest from
// one List per kind.
type snapshot struct {
	index *index // nil: no record yet
	cms   *chunkSet
	texts *chunkSet
}

// snapshot gets the index, then lists from the apiserver's cache: a
// stale chunk only makes a conditional write fail and the Update start
// over, but fn must get the current record, so a List that does not hold
// the index just read is a conflict too.
func (s *Store) snapshot(ctx context.Context, ws string) (*snapshot, error) {
	sn := &snapshot{
		cms:   newChunkSet(s.cms, "ConfigMap", ws, 1, s.budget),
		texts: newChunkSet(s.secrets, "Secret", ws, 0, s.budget),
	}
	want := ""
	cur, err := s.cms.get(ctx, objectName(ws, 0))
	switch {
	case err == nil && chunkOf(cur, ws) == 0:
		want = cur.rv
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("records: read %s: %w", ws, err)
	}
	cms, err := s.cms.list(ctx, workspaceSelector(ws), true)
	if err != nil {
		return nil, fmt.Errorf("records: read %s: %w", ws, err)
	}
	secrets, err := s.secrets.list(ctx, workspaceSelector(ws), true)
	if err != nil {
		return nil, fmt.Errorf("records: read %s: %w", ws, err)
	}
	got := ""
	for _, o := range cms {
		if chunkOf(o, ws) == 0 {
			if sn.index, err = parseIndex(o); err != nil {
				return nil, err
			}
			got = o.rv
		}
	}
	if got != want {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, objectName(ws, 0), errors.New("cache behind"))
	}
	if err := sn.cms.load(cms); err != nil {
		return nil, err
	}
	return sn, sn.texts.load(secrets)
}

// record decodes the snapshot's record (called twice: a base to compare
// with and one for fn to change).
func (sn *snapshot) record(ws string) (*Record, error) {
	if sn.index == nil {
		return &Record{Workspace: ws, Files: map[string]string{}}, nil
	}
	r, err := sn.index.decode(func(n int) (map[string][]byte, error) {
		if c := sn.cms.chunks[n]; c != nil {
			return c.o.data, nil
		}
		return nil, errMissingPiece
	})
	if errors.Is(err, errMissingPiece) {
		// Not in one List's snapshot, unless someone edited the objects.
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, sn.index.o.name, err)
	}
	return r, err
}

// nextGen is above every generation and tag seen (see chunks.go).
func (sn *snapshot) nextGen() int64 {
	var g int64
	if sn.index != nil {
		g = sn.index.gen
	}
	return max(g, sn.cms.maxTag(), sn.texts.maxTag()) + 1
}

func (s *Store) update(ctx context.Context, ws string, fn func(*Record) error) (*Record, error) {
	sn, err := s.snapshot(ctx, ws)
	if err != nil {
		return nil, err
	}
	base, err := sn.record(ws)
	if err != nil {
		return nil, err
	}
	rec, err := sn.record(ws)
	if err != nil {
		return nil, err
	}
	if err := fn(rec); err != nil {
		return nil, err
	}
	rec.Workspace = ws
	rec.Plans = slices.Clone(rec.Plans)
	if len(rec.Plans) > s.keep {
		rec.Plans = rec.Plans[:s.keep]
	}
	gen := sn.nextGen()
	if err := stageTexts(sn.texts, base, rec, gen); err != nil {
		return nil, err
	}
	if sn.index != nil && !sn.texts.dirty() && same(base, rec) {
		return base, nil
	}
	rec.UpdatedAt = s.now().UTC().Round(0)
	for i := range rec.Plans {
		rec.Plans[i].Text = ""
	}
	recJSON, err := encodeRecord(rec)
	if err != nil {
		return nil, err
	}
	p, err := pack(recJSON, rec.Files, s.budget)
	if err != nil {
		return nil, err
	}
	l := sn.stagePieces(p, gen)

	// Chunks first, then the index: see chunks.go.
	sn.texts.ref, sn.cms.ref = rec.Object, rec.Object
	if err := sn.texts.flush(ctx); err != nil {
		return nil, err
	}
	if err := sn.cms.flush(ctx); err != nil {
		return nil, err
	}
	if err := s.commit(ctx, sn, ws, rec.Object, p.inline, l, gen); err != nil {
		return nil, err
	}

	pieces := l.keys()
	texts := map[string]bool{}
	for _, pl := range rec.Plans {
		k, _ := textKey(pl.ID)
		texts[k] = true
	}
	gcErr := errors.Join(
		sn.cms.gc(ctx, func(k string) bool { return pieces[k] }),
		sn.texts.gc(ctx, func(k string) bool { return texts[textOf(k)] }))
	if gcErr != nil {
		// Committed; what is left is collected by a later commit.
		klog.ErrorS(gcErr, "Removing old plan record data", "workspace", ws)
	}
	return rec, nil
}

// same tells whether fn left the record as it was.
func same(base, rec *Record) bool {
	if !maps.Equal(base.Files, rec.Files) {
		return false
	}
	r := *rec
	r.UpdatedAt = base.UpdatedAt
	a, errA := encodeRecord(base)
	b, errB := encodeRecord(&r)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// stageTexts puts the texts fn set into the Secrets, in memory.
func stageTexts(set *chunkSet, base, rec *Record, gen int64) error {
	for i := range rec.Plans {
		p := &rec.Plans[i]
		if p.Text == "" {
			continue
		}
		key, err := textKey(p.ID)
		if err != nil {
			return err
		}
		pieces := textPieces(key, gzipText(p.Text), set.budget)
		// Drop another cut of the same text (whole before, split now).
		for _, c := range set.chunks {
			for k := range c.o.data {
				if textOf(k) == key && pieces[k] == nil {
					set.remove(k)
				}
			}
		}
		kept := base.Find(p.ID) != nil
		for _, k := range slices.Sorted(maps.Keys(pieces)) {
			// A plan new to the record needs its tag raised even when
			// the key is there (see chunks.go).
			if cur, ok := set.value(k); kept && ok && bytes.Equal(cur, pieces[k]) {
				continue
			}
			set.put(k, pieces[k], gen)
		}
	}
	return nil
}

// stagePieces puts the spilled pieces into the chunk ConfigMaps, in
// memory, and returns the layout naming them.
func (sn *snapshot) stagePieces(p packed, gen int64) layout {
	had := map[string]bool{}
	if sn.index != nil {
		had = sn.index.layout.keys()
	}
	l := layout{}
	for _, item := range slices.Sorted(maps.Keys(p.spilled)) {
		for _, piece := range p.spilled[item] {
			k := pieceKey(item, piece)
			var n int
			if c := sn.cms.holder(k); had[k] && c != nil {
				n = c.n
			} else {
				n = sn.cms.put(k, piece, gen)
			}
			l[item] = append(l[item], pieceRef{Chunk: n, Key: k})
		}
	}
	return l
}

// commit writes the index: the one conditional write that makes the new
// record visible.
func (s *Store) commit(ctx context.Context, sn *snapshot, ws string, ref ObjectRef, inline map[string][]byte, l layout, gen int64) error {
	o := &obj{name: objectName(ws, 0), data: inline}
	if sn.index != nil {
		o.rv = sn.index.o.rv
		o.labels = maps.Clone(sn.index.o.labels)
		o.annotations = maps.Clone(sn.index.o.annotations)
	}
	setMeta(o, ws, 0, ref)
	o.annotations[AnnotationGeneration] = strconv.FormatInt(gen, 10)
	delete(o.annotations, AnnotationSpilled)
	if len(l) > 0 {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		o.annotations[AnnotationSpilled] = string(b)
	}
	var err error
	if o.rv == "" {
		_, err = s.cms.create(ctx, o)
		if apierrors.IsConflict(err) {
			// Taken by a writer that got there first (retry), or by
			// something else (don't).
			if cur, gerr := s.cms.get(ctx, o.name); gerr == nil && chunkOf(cur, ws) != 0 {
				return fmt.Errorf("records: ConfigMap %s exists and is not the record of workspace %s", o.name, ws)
			}
		}
	} else {
		_, err = s.cms.update(ctx, o)
	}
	if err != nil {
		return fmt.Errorf("records: write %s: %w", o.name, err)
	}
	return nil
}
