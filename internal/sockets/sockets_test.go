package sockets

import (
	"errors"
	"slices"
	"testing"
)

// A set binds what is wanted and closes the rest; a bind that fails is
// reported once however often it is tried, and bound once it can be.
func TestReconcile(t *testing.T) {
	var s Set[string]
	closed, reported := []string{}, []string{}
	refuse := map[string]bool{"b": true}
	bind := func(k string) (func(), error) {
		if refuse[k] {
			return nil, errors.New("in use")
		}
		return func() { closed = append(closed, k) }, nil
	}
	report := func(k string, _ error) { reported = append(reported, k) }
	for range 2 {
		if errs := s.Reconcile(map[string]bool{"a": true, "b": true}, bind, report); len(errs) != 1 {
			t.Fatalf("errors %v", errs)
		}
	}
	if !slices.Equal(reported, []string{"b"}) || !slices.Equal(s.Keys(), []string{"a"}) {
		t.Fatalf("reported %v, bound %v", reported, s.Keys())
	}
	refuse["b"] = false
	if errs := s.Reconcile(map[string]bool{"b": true}, bind, report); len(errs) != 0 {
		t.Fatal(errs)
	}
	if !slices.Equal(closed, []string{"a"}) || !slices.Equal(s.Keys(), []string{"b"}) {
		t.Fatalf("closed %v, bound %v", closed, s.Keys())
	}
	s.CloseAll()
	if !slices.Equal(closed, []string{"a", "b"}) || len(s.Keys()) != 0 {
		t.Fatalf("after CloseAll: closed %v, bound %v", closed, s.Keys())
	}
}
