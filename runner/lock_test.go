package runner_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

// A lock left by a crashed holder is forced open once it is older than
// StaleLockAge; a younger one is reported as ErrStateLocked.
func TestStaleLockIsForcedOpen(t *testing.T) {
	srv := testhttpbackend.Start(t)
	tg := httpLocation(t, srv, "locked")
	e, clk := staleLockEnv(t)
	unlocked := e.forcedOpen()
	job := e.job(t, tg.Key, lbModule{name: "locked", block: toBlock(tg.Block)})
	srv.InjectLock(tg.Key, testhttpbackend.LockInfo{ID: "crashed-holder-lock", Operation: "OperationTypeApply", Who: "ccm@gone", Created: clk.Now()})

	_, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("fresh lock: want ErrStateLocked, got %v", err)
	}
	if len(e.lbs(t, "locked")) != 0 || len(unlocked()) != 0 {
		t.Fatal("a fresh lock was broken or the cloud changed")
	}
	// The lock ages past StaleLockAge on the runner's clock.
	clk.SetTime(clk.Now().Add(2*time.Second + time.Millisecond))
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if len(unlocked()) != 1 || unlocked()[0] != "crashed-holder-lock" || len(srv.Locks()) != 0 {
		t.Fatalf("force-unlocked %v, locks left %v", unlocked(), srv.Locks())
	}
	if len(e.lbs(t, "locked")) != 1 {
		t.Fatal("apply after unlocking did not create the LB")
	}
}

// A person forces open a fresh lock they know is dead (examplectl unlock):
// HeldLock names it from the error and ForceUnlock opens exactly it.
func TestForceUnlockOnRequest(t *testing.T) {
	srv := testhttpbackend.Start(t)
	tg := httpLocation(t, srv, "held")
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = 100 * time.Millisecond })
	job := e.job(t, tg.Key, lbModule{name: "held", block: toBlock(tg.Block)})
	srv.InjectLock(tg.Key, testhttpbackend.LockInfo{ID: "dead-holder", Operation: "OperationTypeApply", Who: "ccm@gone", Created: time.Now()})
	_, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	id, _, _, ok := runner.HeldLock(err)
	if !ok || id != "dead-holder" {
		t.Fatalf("HeldLock(%v) = %q %v", err, id, ok)
	}
	if err := e.r.ForceUnlock(testkit.Context(t), job, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
}

// S3-native lock files: a held lock is ErrStateLocked with its holder and
// age (terraform prints the lock info), and nothing changes in the cloud;
// one older than StaleLockAge is forced open and the run goes on.
func TestS3Lock(t *testing.T) {
	srv := s3Server(t)
	tg := s3Target(t, srv, "locked")
	e := newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout = 500 * time.Millisecond
		c.StaleLockAge = time.Hour
	})
	unlocked := e.forcedOpen()
	job := e.job(t, tg.Key, lbModule{name: "locked", block: toBlock(tg.Block)})
	job.Env, job.DeleteState, job.Exists = tg.Env, tg.Delete, tg.Exists

	created := time.Now().Add(-time.Minute).Truncate(time.Second)
	s3Lock(t, srv, tg, "fresh-holder", "ccm@other", "", created)
	_, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	id, who, at, ok := runner.HeldLock(err)
	if !ok || id != "fresh-holder" || who != "ccm@other" || !at.Equal(created) {
		t.Fatalf("HeldLock = %q %q %v %v", id, who, at, ok)
	}
	if len(e.lbs(t, "locked")) != 0 || len(unlocked()) != 0 {
		t.Fatal("a fresh lock was broken or the cloud changed")
	}
	if err := e.r.ForceUnlock(testkit.Context(t), job, id); err != nil {
		t.Fatalf("force-unlock on request: %v", err)
	}

	s3Lock(t, srv, tg, "crashed-holder", "ccm@gone", "", time.Now().Add(-2*time.Hour))
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if !slices.Equal(unlocked(), []string{"crashed-holder"}) || len(e.lbs(t, "locked")) != 1 {
		t.Fatalf("force-unlocked %v, LBs %d", unlocked(), len(e.lbs(t, "locked")))
	}
	state := tg.Block.Attrs[1].Value.AsString()
	if got := srv.Objects("states"); !slices.Equal(got, []string{state}) {
		t.Fatalf("objects %q, want only the state (no lock file left)", got)
	}
}
