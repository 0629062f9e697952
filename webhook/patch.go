package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
)

// PatchOp is one RFC 6902 JSON patch operation (add, remove, replace or
// test). Path is a JSON pointer: escape its segments with EscapePointer.
type PatchOp struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes value for every operation but remove, even when nil
// (an add of null is valid; an absent value is not).
func (p PatchOp) MarshalJSON() ([]byte, error) {
	if p.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{p.Op, p.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{p.Op, p.Path, p.Value})
}

// JSONPatch encodes ops as a JSON patch document, refusing operations this
// type cannot express (move and copy need "from") and malformed paths.
func JSONPatch(ops ...PatchOp) ([]byte, error) {
	for i, op := range ops {
		switch op.Op {
		case "add", "remove", "replace", "test":
		default:
			return nil, fmt.Errorf("patch operation %d: unsupported op %q", i, op.Op)
		}
		if op.Path != "" && !strings.HasPrefix(op.Path, "/") {
			return nil, fmt.Errorf("patch operation %d: path %q does not start with /", i, op.Path)
		}
	}
	if ops == nil {
		ops = []PatchOp{}
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encoding JSON patch: %w", err)
	}
	return b, nil
}

// SetPatch sets resp's patch to ops; no ops leaves resp unchanged.
func SetPatch(resp *admissionv1.AdmissionResponse, ops ...PatchOp) error {
	if len(ops) == 0 {
		return nil
	}
	b, err := JSONPatch(ops...)
	if err != nil {
		return err
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = b, &pt
	return nil
}

// EscapePointer escapes one JSON pointer segment (RFC 6901): "~" becomes
// "~0" and "/" becomes "~1", as annotation keys such as
// review.example.com/author need.
func EscapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// AnnotationOp sets annotation key to value on an object whose annotations
// are current: a patch cannot add a member to a missing map, so an object
// without annotations gets the whole map.
func AnnotationOp(current map[string]string, key, value string) PatchOp {
	if len(current) == 0 {
		return PatchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{key: value}}
	}
	return PatchOp{Op: "add", Path: "/metadata/annotations/" + EscapePointer(key), Value: value}
}
