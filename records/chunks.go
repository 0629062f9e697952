package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/example/cloud-provider-example/objectref"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// How a record is written so that readers never see half of it
// ==============================================================
//
// The index ConfigMap ccm-plans-<ws> is the commit point: one object,
// replaced by a single conditional update (its resourceVersion), holding
// record.json and every file that fits. Everything else lives in "chunks",
// three sets of them (see names.go): the ConfigMaps ccm-plans-<ws>-N
// holding the pieces of items too large for the index, the ConfigMaps
// ccm-plans-<ws>-text[-N] holding plan texts, and the Secrets
// ccm-plans-<ws>[-N] holding saved plans. Chunk data keys are never
// changed while a committed index may refer to them:
//
//   - a ConfigMap piece's key names its content (main.tf.<sha256[:16]>),
//     so a new version of a file gets new keys, never new bytes under an
//     old key; a plan text's or saved plan's key names its plan (each is
//     written once: rewriting one works, but a reader may miss it
//     meanwhile, and a saved plan's bytes are named by its id anyway);
//   - an Update writes the chunk keys it adds first, then commits the
//     index, then removes what the new index no longer refers to.
//
// A committed index refers to the text of each of its plans, and to the
// saved plan of each plan that keeps one (see keepsSaved).
//
// A reader that got an index therefore finds everything it refers to in
// the chunks, unless a later commit already collected it, in which case it
// reads the newer index and tries again (Get). A List is one snapshot of
// etcd, so reading chunks from the same List never needs that retry.
//
// After its commit, a writer removes from the chunk versions it read (its
// List) or wrote every key its new index does not refer to, each removal
// a write conditional on that version. Such a key was dropped by this
// commit, left by a crashed writer, or added by a writer still pending;
// that one read the index before this commit, so its own commit fails and
// it starts over. A writer that refers to a key again (the same file
// content or plan coming back) does not just find it there: it tags it
// (annotation records.example.com/added) with its generation, above every
// generation and tag it saw. That is a real write, so of it and a
// collector's conditional write, the second fails: the key is either gone
// before the writer's List (it then writes it anew) or stays.

// chunk is one object of a chunkSet, as read or last written, with the
// edits not written yet.
type chunk struct {
	n     int
	o     *obj
	added map[string]int64
	dirty bool
}

// chunkSet is the chunk objects of one series and kind of a workspace.
type chunkSet struct {
	api      kindAPI
	resource string // for messages
	ws       string
	series   series
	ref      objectref.Ref
	// first is the lowest chunk number the set may use: 1 for the record's
	// ConfigMaps (ConfigMap 0 is the index), else 0.
	first  int
	budget int
	chunks map[int]*chunk
}

func newChunkSet(api kindAPI, resource, ws string, sr series, first, budget int) *chunkSet {
	return &chunkSet{api: api, resource: resource, ws: ws, series: sr, first: first, budget: budget, chunks: map[int]*chunk{}}
}

// load adds the objects of a List that are chunks of the set's workspace
// and series.
func (s *chunkSet) load(objs []*obj) error {
	for _, o := range objs {
		n := s.series.number(o, s.ws)
		if n < s.first {
			continue
		}
		added, err := parseAdded(o)
		if err != nil {
			return err
		}
		if o.data == nil {
			o.data = map[string][]byte{}
		}
		s.chunks[n] = &chunk{n: n, o: o, added: added}
	}
	return nil
}

func parseAdded(o *obj) (map[string]int64, error) {
	added := map[string]int64{}
	if v := o.annotations[AnnotationAdded]; v != "" {
		if err := json.Unmarshal([]byte(v), &added); err != nil {
			return nil, fmt.Errorf("records: %s annotation %s: %w", o.name, AnnotationAdded, err)
		}
	}
	return added, nil
}

func (s *chunkSet) sorted() []*chunk {
	return slices.SortedFunc(maps.Values(s.chunks), func(a, b *chunk) int { return a.n - b.n })
}

// maxTag is the highest generation tag in the set.
func (s *chunkSet) maxTag() int64 {
	var m int64
	for _, c := range s.chunks {
		for _, g := range c.added {
			m = max(m, g)
		}
	}
	return m
}

// holder is the chunk holding key, or nil.
func (s *chunkSet) holder(key string) *chunk {
	for _, c := range s.sorted() {
		if _, ok := c.o.data[key]; ok {
			return c
		}
	}
	return nil
}

// value is key's value and whether some chunk holds it.
func (s *chunkSet) value(key string) ([]byte, bool) {
	if c := s.holder(key); c != nil {
		return c.o.data[key], true
	}
	return nil, false
}

// put makes key hold val with a tag of at least gen, keeping it where it
// is if it is there already, else in the first chunk with room, else in a
// new chunk. It returns the chunk's number.
func (s *chunkSet) put(key string, val []byte, gen int64) int {
	if c := s.holder(key); c != nil {
		if bytes.Equal(c.o.data[key], val) {
			if c.added[key] < gen {
				c.added[key] = gen
				c.dirty = true
			}
			return c.n
		}
		s.remove(key)
	}
	size := len(key) + len(val)
	var target *chunk
	for _, c := range s.sorted() {
		if c.o.payload()+size <= s.budget {
			target = c
			break
		}
	}
	if target == nil {
		n := s.first
		for s.chunks[n] != nil {
			n++
		}
		target = &chunk{n: n, o: &obj{name: s.series.name(s.ws, n), data: map[string][]byte{}}, added: map[string]int64{}}
		s.chunks[n] = target
	}
	target.o.data[key] = val
	target.added[key] = gen
	target.dirty = true
	return target.n
}

func (s *chunkSet) remove(key string) {
	if c := s.holder(key); c != nil {
		delete(c.o.data, key)
		delete(c.added, key)
		c.dirty = true
	}
}

func (s *chunkSet) dirty() bool {
	for _, c := range s.chunks {
		if c.dirty {
			return true
		}
	}
	return false
}

// flush writes the edited chunks, each conditionally.
func (s *chunkSet) flush(ctx context.Context) error {
	for _, c := range s.sorted() {
		if !c.dirty {
			continue
		}
		if c.o.rv == "" && len(c.o.data) == 0 {
			delete(s.chunks, c.n)
			continue
		}
		if err := s.write(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (s *chunkSet) write(ctx context.Context, c *chunk) error {
	setMeta(c.o, s.ws, s.series, c.n, s.ref)
	if len(c.added) == 0 {
		delete(c.o.annotations, AnnotationAdded)
	} else {
		b, err := json.Marshal(c.added)
		if err != nil {
			return err
		}
		c.o.annotations[AnnotationAdded] = string(b)
	}
	var (
		out *obj
		err error
	)
	if c.o.rv == "" {
		out, err = s.api.create(ctx, c.o)
	} else {
		out, err = s.api.update(ctx, c.o)
	}
	if err != nil {
		return fmt.Errorf("records: write %s %s: %w", s.resource, c.o.name, err)
	}
	if out.data == nil {
		out.data = map[string][]byte{}
	}
	c.o, c.dirty = out, false
	return nil
}

// gc runs after a commit: it removes the keys the new index does not keep
// from the chunks as read or written before, deleting chunks left empty.
// It goes on past errors and returns them joined: a chunk someone changed
// since is left for a later commit to collect.
func (s *chunkSet) gc(ctx context.Context, keep func(key string) bool) error {
	var errs []error
	for _, c := range s.sorted() {
		if c.o.rv == "" {
			continue
		}
		for k := range c.o.data {
			if !keep(k) {
				delete(c.o.data, k)
				delete(c.added, k)
				c.dirty = true
			}
		}
		if !c.dirty && len(c.o.data) > 0 {
			continue
		}
		var err error
		if len(c.o.data) == 0 {
			err = s.api.delete(ctx, c.o.name, c.o.rv)
			if err == nil || apierrors.IsNotFound(err) {
				delete(s.chunks, c.n)
				err = nil
			}
		} else {
			err = s.write(ctx, c)
		}
		if err != nil && !apierrors.IsConflict(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// datas are the data of the set's chunks.
func (s *chunkSet) datas() []map[string][]byte {
	var out []map[string][]byte
	for _, c := range s.sorted() {
		out = append(out, c.o.data)
	}
	return out
}
