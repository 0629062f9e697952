package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Tombstones stand for tombstoneAge: burying one clears those older.
func TestTombstonesAge(t *testing.T) {
	r := &Runner{}
	r.tombstones = map[string]tombstone{"old": {owner: "u1", at: time.Now().Add(-tombstoneAge - time.Second)}, "young": {owner: "u2", at: time.Now()}}
	r.bury("new", "u3")
	if _, ok := r.tombstones["old"]; ok || len(r.tombstones) != 2 {
		t.Errorf("tombstones %v, want young and new", r.tombstones)
	}
	if err := r.checkTombstone(Job{Key: "new", Owner: "u3"}); err == nil {
		t.Error("a fresh tombstone does not stand")
	}
	if got := r.Sizes()["runner_tombstones"]; got != 2 {
		t.Errorf("runner_tombstones = %d", got)
	}
}

// A lock seen is timed for twice StaleLockAge: a new sighting clears
// those older.
func TestLockSightingsAge(t *testing.T) {
	r := &Runner{cfg: Config{StaleLockAge: time.Minute}}
	r.lockSeen = map[string]time.Time{"ws/old": time.Now().Add(-3 * time.Minute), "ws/young": time.Now().Add(-time.Minute)}
	age := r.lockAge(&workspace{key: "ws"}, heldLock{ID: "young"})
	if age < time.Minute {
		t.Errorf("age of a lock seen a minute ago: %s", age)
	}
	r.lockAge(&workspace{key: "ws"}, heldLock{ID: "new"})
	if _, ok := r.lockSeen["ws/old"]; ok || len(r.lockSeen) != 2 {
		t.Errorf("sightings %v, want young and new", r.lockSeen)
	}
}

// A preview directory unused for previewIdle goes (its directory too)
// when another is asked for; one in use stays.
func TestIdlePreviewsGo(t *testing.T) {
	dir := t.TempDir()
	r := &Runner{cfg: Config{WorkDir: dir}}
	for _, k := range []string{"old", "recent"} {
		if _, err := r.previewWorkspace(k); err != nil {
			t.Fatal(err)
		}
	}
	r.previews["old"].used = time.Now().Add(-previewIdle - time.Second)
	if _, err := r.previewWorkspace("new"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.previews["old"]; ok || len(r.previews) != 2 {
		t.Errorf("previews %v, want recent and new", r.previews)
	}
	if _, err := os.Stat(filepath.Join(dir, previewDir, "old")); !os.IsNotExist(err) {
		t.Errorf("the idle preview's directory is still there: %v", err)
	}
}
