package webhook

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestEscapePointer(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"plain":                     "plain",
		"review.example.com/author": "review.example.com~1author",
		"a~b":                       "a~0b",
		"~/":                        "~0~1",
		"/~1":                       "~1~01", // "~1" is literal text, not an escape
	} {
		if got := EscapePointer(in); got != want {
			t.Errorf("EscapePointer(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONPatch(t *testing.T) {
	b, err := JSONPatch(
		PatchOp{Op: "add", Path: "/metadata/annotations/" + EscapePointer("review.example.com/author"), Value: "alice"},
		PatchOp{Op: "remove", Path: "/metadata/labels/x", Value: "ignored"},
		PatchOp{Op: "replace", Path: "/spec/ports/0/port", Value: 443},
		PatchOp{Op: "add", Path: "/metadata/finalizers", Value: nil},
		PatchOp{Op: "test", Path: "", Value: map[string]any{}},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"add","path":"/metadata/annotations/review.example.com~1author","value":"alice"},` +
		`{"op":"remove","path":"/metadata/labels/x"},` +
		`{"op":"replace","path":"/spec/ports/0/port","value":443},` +
		`{"op":"add","path":"/metadata/finalizers","value":null},` +
		`{"op":"test","path":"","value":{}}]`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if b, err := JSONPatch(); err != nil || string(b) != "[]" {
		t.Fatalf("empty patch: %s %v", b, err)
	}
	for _, op := range []PatchOp{{Op: "move", Path: "/a"}, {Op: "Add", Path: "/a"}, {Op: "add", Path: "a"}} {
		if _, err := JSONPatch(op); err == nil {
			t.Errorf("%+v: no error", op)
		}
	}
}

func TestSetPatchAndAnnotationOp(t *testing.T) {
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if err := SetPatch(resp); err != nil || resp.Patch != nil || resp.PatchType != nil {
		t.Fatalf("no ops changed the response: %+v %v", resp, err)
	}
	op := AnnotationOp(map[string]string{"other": "x"}, "review.example.com/author", "alice")
	if err := SetPatch(resp, op); err != nil {
		t.Fatal(err)
	}
	if want := `[{"op":"add","path":"/metadata/annotations/review.example.com~1author","value":"alice"}]`; string(resp.Patch) != want || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch %s (%v), want %s", resp.Patch, *resp.PatchType, want)
	}
	if err := SetPatch(resp, PatchOp{Op: "copy", Path: "/a"}); err == nil {
		t.Fatal("invalid op accepted")
	}
}
