package runner

import "testing"

// A slot whose provider server stopped (or panicked) gets a new one on its
// next use; one that still serves is kept.
func TestAttachReplacesUnusableServer(t *testing.T) {
	r := &Runner{cfg: Config{Provider: ProviderAttached}}
	s := &slot{idx: 7}
	if _, err := r.attach(s); err != nil {
		t.Fatal(err)
	}
	first := s.srv
	if _, err := r.attach(s); err != nil || s.srv != first {
		t.Fatalf("a usable server was replaced (%v)", err)
	}
	first.Close()
	if _, err := r.attach(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.srv.Close)
	if s.srv == first || !s.srv.Usable() || s.srv.Addr().String() == first.Addr().String() {
		t.Fatalf("stopped server not replaced: %v -> %v", first.Addr(), s.srv.Addr())
	}
}

// Spawned mode starts no server and attaches nothing.
func TestAttachSpawned(t *testing.T) {
	r := &Runner{cfg: Config{Provider: ProviderSpawned}}
	s := &slot{}
	opt, err := r.attach(s)
	if err != nil || opt != noReattach || s.srv != nil {
		t.Fatalf("spawned: %v %v %v", opt, s.srv, err)
	}
}
