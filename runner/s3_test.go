package runner_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// s3Target is an object's state target on srv's bucket "states".
func s3Target(t *testing.T, srv *tests3.Server, name string) *state.Location {
	t.Helper()
	return serviceLocation(t, state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}}, name)
}

// s3Lock writes the lock file terraform's s3 backend writes
// (<key>.tflock, created with If-None-Match: *), as a holder would.
func s3Lock(t *testing.T, srv *tests3.Server, tg *state.Location, id, who, info string, created time.Time) {
	t.Helper()
	key := tg.Block.Attrs[1].Value.AsString() + ".tflock"
	body, _ := json.Marshal(map[string]any{"ID": id, "Operation": "OperationTypeApply", "Info": info, "Who": who, "Version": "1.11.4", "Created": created, "Path": "states/" + key})
	_, err := srv.Client().PutObject(ctxT(t), &s3.PutObjectInput{Bucket: aws.String("states"), Key: &key, Body: strings.NewReader(string(body)), IfNoneMatch: aws.String("*")})
	if err != nil {
		t.Fatal(err)
	}
}

// S3-native lock files: a held lock is ErrStateLocked with its holder and
// age (terraform prints the lock info), and nothing changes in the cloud;
// one older than StaleLockAge is forced open and the run goes on.
func TestS3Lock(t *testing.T) {
	srv := s3Server(t)
	tg := s3Target(t, srv, "locked")
	var unlocked []string
	e := newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout = 500 * time.Millisecond
		c.StaleLockAge = time.Hour
	})
	e.r.OnForceUnlock = func(ws, id, who string, created time.Time) { unlocked = append(unlocked, id) }
	job := e.job(t, tg.Key, lbModule{name: "locked", block: toBlock(tg.Block)})
	job.Env, job.DeleteState, job.Exists = tg.Env, tg.Delete, tg.Exists

	created := time.Now().Add(-time.Minute).Truncate(time.Second)
	s3Lock(t, srv, tg, "fresh-holder", "ccm@other", "", created)
	_, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	id, who, at, ok := runner.HeldLock(err)
	if !ok || id != "fresh-holder" || who != "ccm@other" || !at.Equal(created) {
		t.Fatalf("HeldLock = %q %q %v %v", id, who, at, ok)
	}
	if len(e.lbs(t, "locked")) != 0 || len(unlocked) != 0 {
		t.Fatal("a fresh lock was broken or the cloud changed")
	}
	if err := e.r.ForceUnlock(ctxT(t), job, id); err != nil {
		t.Fatalf("force-unlock on request: %v", err)
	}

	s3Lock(t, srv, tg, "crashed-holder", "ccm@gone", "", time.Now().Add(-2*time.Hour))
	if _, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if !slices.Equal(unlocked, []string{"crashed-holder"}) || len(e.lbs(t, "locked")) != 1 {
		t.Fatalf("force-unlocked %v, LBs %d", unlocked, len(e.lbs(t, "locked")))
	}
	state := tg.Block.Attrs[1].Value.AsString()
	if got := srv.Objects("states"); !slices.Equal(got, []string{state}) {
		t.Fatalf("objects %q, want only the state (no lock file left)", got)
	}
}

// A hostile secret key: the happy path works, and neither refused keys
// nor a held lock whose info quotes the secret show any form of it.
func TestScrubS3Errors(t *testing.T) {
	srv := s3Server(t, tests3.WithCredentials("ccm-scrub", hostilePW))
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = time.Second })
	run := func(name string, port int64) (*state.Location, error) {
		tg := s3Target(t, srv, name)
		j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
		j.Env = tg.Env
		_, err := e.r.Ensure(ctxT(t), j, runner.EnsureOptions{})
		return tg, err
	}
	tg, err := run("good", 80)
	if err != nil {
		t.Fatalf("the hostile secret does not work: %v", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", otherPW)
	if _, err := run("refused", 80); err == nil {
		t.Fatal("a wrong secret was accepted")
	} else {
		t.Logf("refused: %v", err)
		noForms(t, "refused", err.Error(), hostilePW, otherPW)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", hostilePW)
	s3Lock(t, srv, tg, "held", "other@host", "holder of "+hostilePW, time.Now())
	_, err = run("good", 81)
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	t.Logf("locked: %v", err)
	noForms(t, "lock", err.Error(), hostilePW)
}
