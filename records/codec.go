package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// encodeRecord is record.json: indented, as people read it with kubectl.
func encodeRecord(r *Record) ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// index is a decoded index ConfigMap.
type index struct {
	o      *obj
	gen    int64
	layout layout
}

func parseIndex(o *obj) (*index, error) {
	ix := &index{o: o}
	if v := o.annotations[AnnotationGeneration]; v != "" {
		g, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("records: %s annotation %s: %w", o.name, AnnotationGeneration, err)
		}
		ix.gen = g
	}
	l, err := parseLayout(o)
	if err != nil {
		return nil, err
	}
	ix.layout = l
	return ix, nil
}

// chunkData returns chunk n's data, or errMissingPiece when it is gone.
type chunkData func(n int) (map[string][]byte, error)

// decode rebuilds the Record from the index and its spilled pieces.
func (ix *index) decode(chunks chunkData) (*Record, error) {
	items := map[string][]byte{}
	for k, v := range ix.o.data {
		items[k] = v
	}
	for _, item := range slices.Sorted(maps.Keys(ix.layout)) {
		var b bytes.Buffer
		for _, p := range ix.layout[item] {
			data, err := chunks(p.Chunk)
			if err != nil {
				return nil, err
			}
			v, ok := data[p.Key]
			if !ok {
				return nil, errMissingPiece
			}
			b.Write(v)
		}
		items[item] = b.Bytes()
	}
	raw, ok := items[RecordKey]
	if !ok {
		return nil, fmt.Errorf("records: %s has no %s", ix.o.name, RecordKey)
	}
	r := &Record{}
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("records: %s %s: %w", ix.o.name, RecordKey, err)
	}
	delete(items, RecordKey)
	r.Files = make(map[string]string, len(items))
	for k, v := range items {
		if name, ok := strings.CutPrefix(k, AppliedPrefix); ok {
			if r.AppliedFiles == nil {
				r.AppliedFiles = map[string]string{}
			}
			r.AppliedFiles[name] = string(v)
			continue
		}
		r.Files[k] = string(v)
	}
	return r, nil
}

// packed is how a record's items go into the index and chunk ConfigMaps.
type packed struct {
	inline map[string][]byte
	// spilled are the items that did not fit, as pieces, by item.
	spilled map[string][][]byte
}

// pack puts record.json, then the files and then the applied files (keys
// AppliedPrefix + name), by name, into the index while each fits whole;
// the others are cut into pieces that fit a chunk.
func pack(recJSON []byte, files, applied map[string]string, budget int) (packed, error) {
	p := packed{inline: map[string][]byte{}, spilled: map[string][][]byte{}}
	room := budget
	add := func(name string, v []byte) {
		if size := len(name) + len(v); size <= room {
			p.inline[name] = v
			room -= size
			return
		}
		p.spilled[name] = split(v, budget-len(pieceKey(name, nil)), true)
	}
	add(RecordKey, recJSON)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := validFileName(name); err != nil {
			return packed{}, err
		}
		if !utf8.ValidString(files[name]) {
			return packed{}, fmt.Errorf("records: file %s is not UTF-8", name)
		}
		add(name, []byte(files[name]))
	}
	for _, name := range slices.Sorted(maps.Keys(applied)) {
		if err := validFileName(name); err != nil {
			return packed{}, err
		}
		add(AppliedPrefix+name, []byte(applied[name]))
	}
	return p, nil
}
