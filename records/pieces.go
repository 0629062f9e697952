package records

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// errMissingPiece: an index refers to a chunk key that is gone, because a
// newer commit collected it after the index was read.
var errMissingPiece = errors.New("records: record changed while read")

// split cuts val into pieces of at most size bytes (at least one piece).
// Text is cut between runes: ConfigMap data must stay UTF-8.
func split(val []byte, size int, text bool) [][]byte {
	var out [][]byte
	for len(val) > size {
		cut := size
		for text && cut > 0 && !utf8.RuneStart(val[cut]) {
			cut--
		}
		if cut == 0 {
			cut = size
		}
		out = append(out, val[:cut])
		val = val[cut:]
	}
	return append(out, val)
}

// pieceKey names a ConfigMap piece by its item and content, so a key
// never gets new bytes (see chunks.go).
func pieceKey(item string, piece []byte) string {
	sum := sha256.Sum256(piece)
	return item + "." + hex.EncodeToString(sum[:8])
}

// layout lists, for each item of the index ConfigMap that did not fit in
// it, where its pieces are, in order. It is the index's AnnotationSpilled.
type layout map[string][]pieceRef

type pieceRef struct {
	Chunk int    `json:"chunk"`
	Key   string `json:"key"`
}

func parseLayout(o *obj) (layout, error) {
	l := layout{}
	if v := o.annotations[AnnotationSpilled]; v != "" {
		if err := json.Unmarshal([]byte(v), &l); err != nil {
			return nil, fmt.Errorf("records: %s annotation %s: %w", o.name, AnnotationSpilled, err)
		}
	}
	return l, nil
}

// keys are the chunk keys the layout refers to.
func (l layout) keys() map[string]bool {
	out := map[string]bool{}
	for _, ps := range l {
		for _, p := range ps {
			out[p.Key] = true
		}
	}
	return out
}

// pieces are the data keys and values of a blob: the key alone, or
// <key>.<i>-of-<n> when it is bigger than size.
func pieces(key string, v []byte, size int) map[string][]byte {
	size -= len(key) + len(".999-of-999")
	if len(v) <= size {
		return map[string][]byte{key: v}
	}
	ps := split(v, size, false)
	out := make(map[string][]byte, len(ps))
	for i, p := range ps {
		out[fmt.Sprintf("%s.%d-of-%d", key, i+1, len(ps))] = p
	}
	return out
}

// join reassembles blob key from the data of a series' objects: the whole
// value, or all pieces of one split.
func (b blob) join(key string, datas []map[string][]byte) ([]byte, bool) {
	parts := map[int][]byte{}
	total := 0
	for _, d := range datas {
		for k, v := range d {
			if k == key {
				return v, true
			}
			m := b.re.FindStringSubmatch(k)
			if m == nil || m[1] != key || m[2] == "" {
				continue
			}
			i, _ := strconv.Atoi(m[2])
			n, _ := strconv.Atoi(m[3])
			if total != 0 && n != total {
				return nil, false // two splits: a rewrite in progress
			}
			total, parts[i] = n, v
		}
	}
	if total == 0 || len(parts) != total {
		return nil, false
	}
	var buf bytes.Buffer
	for i := 1; i <= total; i++ {
		p, ok := parts[i]
		if !ok {
			return nil, false
		}
		buf.Write(p)
	}
	return buf.Bytes(), true
}

// gzipText compresses a plan text; the output depends on the text only.
func gzipText(s string) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = io.WriteString(w, s)
	_ = w.Close()
	return b.Bytes()
}

// maxText bounds a decompressed plan text, against a tampered object.
const maxText = 64 << 20

func gunzipText(b []byte) (string, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	out, err := io.ReadAll(io.LimitReader(r, maxText+1))
	if err != nil {
		return "", err
	}
	if len(out) > maxText {
		return "", fmt.Errorf("plan text over %d bytes", maxText)
	}
	return string(out), nil
}

// sha256Hex is b's SHA-256 in hex.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
