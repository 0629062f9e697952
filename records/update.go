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

	"github.com/example/cloud-provider-example/internal/sleep"
	"github.com/example/cloud-provider-example/objectref"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// updateBackoff spreads apart the processes that update one record at
// once (a leader handing over): tries 5 ms to 1 s apart, jittered. Every
// round of a conflict has a winner, so a loser tries again until
// updateGiveUp: a count of tries (30 until 2026-12-02) ran out for one of
// ten writers on a loaded machine, and that update was lost.
var updateBackoff = wait.Backoff{Steps: 100, Duration: 5 * time.Millisecond, Factor: 1.2, Jitter: 1, Cap: time.Second}

// updateGiveUp bounds an update's retries of conflicts.
const updateGiveUp = 2 * time.Minute

// Update changes the record of workspace with fn, creating it when absent
// (fn then gets an empty record). fn may run more than once (on a write
// conflict the record is read again), so it must only change the record.
// Plans beyond the store's keep are dropped (Plans is newest first) with
// their texts and saved plans.
//
// A Text fn sets on a plan is stored in the record's text ConfigMaps; a
// plan without Text keeps the one stored. A Saved fn sets on a plan is
// stored in the record's Secrets, and its SavedSHA256 set from it, while
// the plan awaits approval (or is planned, see keepsSaved); it is dropped
// once the plan is decided or leaves the record. A plan without Saved keeps
// the one stored and its SavedSHA256 (the store owns that field).
//
// The texts kept for people (plan texts, errors, rule messages, comments,
// a lock's holder) are stored with their control characters escaped (see
// inert). Nothing is written when fn changes nothing. It returns the
// record as stored, plans without Text and Saved.
func (s *Store) Update(ctx context.Context, workspace string, fn func(*Record) error) (*Record, error) {
	if err := validWorkspace(workspace); err != nil {
		return nil, err
	}
	mu := s.lock(workspace)
	mu.Lock()
	defer mu.Unlock()
	delay, giveUp := updateBackoff.DelayFunc(), time.Now().Add(updateGiveUp)
	for {
		out, err := s.update(ctx, workspace, fn)
		switch {
		case err == nil:
			return out, nil
		case !apierrors.IsConflict(err) || time.Now().After(giveUp):
			return nil, err
		}
		if !sleep.For(ctx, delay()) {
			return nil, fmt.Errorf("%w (retries ended: %w)", err, ctx.Err())
		}
	}
}

// keepsSaved tells whether a plan with outcome o keeps its saved plan: it
// may still be applied.
func keepsSaved(o Outcome) bool { return o == AwaitingApproval || o == Planned }

// maxSaved bounds a saved plan file (a plan of one object is KiBs).
const maxSaved = 64 << 20

// snapshot is a workspace's objects: the index as of now, the rest from
// one List per kind.
type snapshot struct {
	index *index // nil: no record yet
	cms   *chunkSet
	texts *chunkSet
	saved *chunkSet
}

// snapshot gets the index, then lists from the apiserver's cache: a
// stale chunk only makes a conditional write fail and the Update start
// over, but fn must get the current record, so a List that does not hold
// the index just read is a conflict too.
func (s *Store) snapshot(ctx context.Context, ws string) (*snapshot, error) {
	sn := &snapshot{
		cms:   newChunkSet(s.cms, kindConfigMap, ws, recordSeries, 1, s.budget),
		texts: newChunkSet(s.cms, kindConfigMap, ws, textSeries, 0, s.budget),
		saved: newChunkSet(s.secrets, kindSecret, ws, recordSeries, 0, s.budget),
	}
	want := ""
	cur, err := s.cms.get(ctx, IndexName(ws))
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
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, IndexName(ws), errors.New("cache behind"))
	}
	return sn, errors.Join(sn.cms.load(cms), sn.texts.load(cms), sn.saved.load(secrets))
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
	return max(g, sn.cms.maxTag(), sn.texts.maxTag(), sn.saved.maxTag()) + 1
}

func (sn *snapshot) dirty() bool { return sn.texts.dirty() || sn.saved.dirty() }

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
	inert(rec)
	gen := sn.nextGen()
	if err := sn.stageTexts(base, rec, gen); err != nil {
		return nil, err
	}
	if err := sn.stageSaved(base, rec, gen); err != nil {
		return nil, err
	}
	for i := range rec.Plans {
		rec.Plans[i].Text, rec.Plans[i].Saved = "", nil
	}
	if sn.index != nil && !sn.dirty() && same(base, rec) {
		return base, nil
	}
	rec.UpdatedAt = s.now().UTC().Round(0)
	recJSON, err := encodeRecord(rec)
	if err != nil {
		return nil, err
	}
	p, err := pack(recJSON, rec.Files, rec.AppliedFiles, s.budget)
	if err != nil {
		return nil, err
	}
	l := sn.stagePieces(p, gen)

	// Chunks first, then the index: see chunks.go.
	for _, set := range []*chunkSet{sn.texts, sn.saved, sn.cms} {
		set.ref = rec.Object
		if err := set.flush(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.commit(ctx, sn, ws, rec.Object, p.inline, l, gen); err != nil {
		return nil, err
	}

	pieceKeys := l.keys()
	texts, saved := map[string]bool{}, map[string]bool{}
	for _, pl := range rec.Plans {
		k, _ := textBlob.key(pl.ID)
		texts[k] = true
		if keepsSaved(pl.Outcome) && pl.SavedSHA256 != "" {
			k, _ := savedBlob.key(pl.ID)
			saved[k] = true
		}
	}
	gcErr := errors.Join(
		sn.cms.gc(ctx, func(k string) bool { return pieceKeys[k] }),
		sn.texts.gc(ctx, func(k string) bool { return texts[textBlob.of(k)] }),
		sn.saved.gc(ctx, func(k string) bool { return saved[savedBlob.of(k)] }))
	if gcErr != nil {
		// Committed; what is left is collected by a later commit.
		klog.ErrorS(gcErr, "Removing old plan record data", "workspace", ws)
	}
	return rec, nil
}

// same tells whether fn left the record as it was.
func same(base, rec *Record) bool {
	if !maps.Equal(base.Files, rec.Files) || !maps.Equal(base.AppliedFiles, rec.AppliedFiles) {
		return false
	}
	r := *rec
	r.UpdatedAt = base.UpdatedAt
	a, errA := encodeRecord(base)
	b, errB := encodeRecord(&r)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// stageBlob puts blob key's value val into set, in memory. fresh says the
// committed index does not refer to key yet: its tag is raised even when
// the value is there (see chunks.go).
func stageBlob(set *chunkSet, b blob, key string, val []byte, fresh bool, gen int64) {
	ps := pieces(key, val, set.budget)
	// Drop another cut of the same value (whole before, split now).
	for _, c := range set.chunks {
		for k := range c.o.data {
			if b.of(k) == key && ps[k] == nil {
				set.remove(k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ps)) {
		if cur, ok := set.value(k); !fresh && ok && bytes.Equal(cur, ps[k]) {
			continue
		}
		set.put(k, ps[k], gen)
	}
}

// stageTexts puts the texts fn set into the text ConfigMaps, in memory.
// A kept plan whose text is only in the record's Secrets, where texts were
// kept before, has it moved.
func (sn *snapshot) stageTexts(base, rec *Record, gen int64) error {
	for i := range rec.Plans {
		p := &rec.Plans[i]
		key, err := textBlob.key(p.ID)
		if err != nil {
			return err
		}
		fresh := base.Find(p.ID) == nil
		if p.Text != "" {
			stageBlob(sn.texts, textBlob, key, gzipText(p.Text), fresh, gen)
			continue
		}
		if _, ok := textBlob.join(key, sn.texts.datas()); ok {
			continue
		}
		if gz, ok := textBlob.join(key, sn.saved.datas()); ok {
			stageBlob(sn.texts, textBlob, key, gz, true, gen)
		}
	}
	return nil
}

// stageSaved puts the saved plans fn set into the Secrets, in memory, and
// sets every plan's SavedSHA256.
func (sn *snapshot) stageSaved(base, rec *Record, gen int64) error {
	for i := range rec.Plans {
		p := &rec.Plans[i]
		old := base.Find(p.ID)
		if p.Saved == nil {
			p.SavedSHA256 = ""
			if old != nil {
				p.SavedSHA256 = old.SavedSHA256
			}
			continue
		}
		if len(p.Saved) > maxSaved {
			return fmt.Errorf("records: saved plan %s is %d bytes, over %d", p.ID, len(p.Saved), maxSaved)
		}
		p.SavedSHA256 = sha256Hex(p.Saved)
		if !keepsSaved(p.Outcome) {
			continue
		}
		key, err := savedBlob.key(p.ID)
		if err != nil {
			return err
		}
		fresh := old == nil || !keepsSaved(old.Outcome) || old.SavedSHA256 == ""
		stageBlob(sn.saved, savedBlob, key, p.Saved, fresh, gen)
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
func (s *Store) commit(ctx context.Context, sn *snapshot, ws string, ref objectref.Ref, inline map[string][]byte, l layout, gen int64) error {
	o := &obj{name: IndexName(ws), data: inline}
	if sn.index != nil {
		o.rv = sn.index.o.rv
		o.labels = maps.Clone(sn.index.o.labels)
		o.annotations = maps.Clone(sn.index.o.annotations)
	}
	setMeta(o, ws, recordSeries, 0, ref)
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
