// Package simtest runs the Example cloud simulator for tests: in process on
// real loopback listeners, or as the real binary (BuildBinary) for tests
// that need to kill it.
package simtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator"
)

// DefaultProvisionDelay keeps load balancer provisioning short in tests.
const DefaultProvisionDelay = 50 * time.Millisecond

// Sim is a running in-process simulator.
type Sim struct {
	// URL and MetadataURL are the base URLs (http://127.0.0.1:port) of the
	// control and metadata APIs.
	URL, MetadataURL string
	// Token is the read-write token, ReadOnlyToken the metadata-only one;
	// both are random per Sim.
	Token, ReadOnlyToken string
	// DataDir holds the database; pass it to WithDataDir to restart on the
	// same state.
	DataDir string

	srv      *simulator.Server
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// Option configures Start.
type Option func(*options)

type options struct {
	cfg            simulator.Config
	provisionDelay *time.Duration
	requests       *Requests
}

// WithSeed starts the simulator with seed instead of the default one.
func WithSeed(s *simulator.Seed) Option { return func(o *options) { o.cfg.Seed = s } }

// WithProvisionDelay sets how long new load balancers stay provisioning
// (default DefaultProvisionDelay). It wins over WithFaults' value.
func WithProvisionDelay(d time.Duration) Option {
	return func(o *options) { o.provisionDelay = &d }
}

// WithFaults sets the initial realism switches. A zero ProvisionDelayMs
// keeps DefaultProvisionDelay; use WithProvisionDelay(0) for none.
func WithFaults(f exampleapi.Faults) Option { return func(o *options) { o.cfg.Faults = f } }

// WithSelfInstance sets the instance (name or id) the metadata API's
// /v1/self describes.
func WithSelfInstance(nameOrID string) Option {
	return func(o *options) { o.cfg.SelfInstance = nameOrID }
}

// WithDataDir uses dir instead of a fresh temporary directory, e.g. to
// restart on the state of a stopped Sim.
func WithDataDir(dir string) Option { return func(o *options) { o.cfg.DataDir = dir } }

// WithLBPublicPoolSize limits the public load balancer address pool to n
// addresses, to test pool exhaustion.
func WithLBPublicPoolSize(n int) Option { return func(o *options) { o.cfg.LBPublicPoolSize = n } }

// WithLBPublicPrefix sets the public load balancer address pool, e.g. a
// /16 for benchmarks of thousands of load balancers.
func WithLBPublicPrefix(p netip.Prefix) Option { return func(o *options) { o.cfg.LBPublicPrefix = p } }

// WithTokens sets the read-write and read-only tokens instead of random
// ones, e.g. to restart on the same data dir with the same credentials.
func WithTokens(readWrite, readOnly string) Option {
	return func(o *options) { o.cfg.Token, o.cfg.ReadOnlyToken = readWrite, readOnly }
}

// WithLogger receives the simulator's request log (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.cfg.Logger = l } }

// WithClock runs the cloud on c (default the real clock): a test that
// waits for a delay to end (a draining target's) steps a fake clock
// instead of sleeping.
func WithClock(c clock.PassiveClock) Option { return func(o *options) { o.cfg.Clock = c } }

// Prefixes are what a run with the data plane makes local
// (simulator.LocalPrefixes).
var Prefixes = simulator.LocalPrefixes

// WithDataPlane serves the load balancers' traffic on their addresses;
// the test binary must run inside internal/netns (or as root with the
// pools routed local).
func WithDataPlane() Option { return func(o *options) { o.cfg.DataPlane = true } }

// Start runs a simulator until the test ends (or Stop is called).
func Start(t testing.TB, opts ...Option) *Sim {
	t.Helper()
	o := options{cfg: simulator.Config{Token: "rw-" + randomHex(), ReadOnlyToken: "ro-" + randomHex()}}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.provisionDelay != nil:
		o.cfg.Faults.ProvisionDelayMs = int(o.provisionDelay.Milliseconds())
	case o.cfg.Faults.ProvisionDelayMs == 0:
		o.cfg.Faults.ProvisionDelayMs = int(DefaultProvisionDelay.Milliseconds())
	}
	if o.cfg.DataDir == "" {
		o.cfg.DataDir = t.TempDir()
	}
	if o.requests != nil {
		var next slog.Handler
		if o.cfg.Logger != nil {
			next = o.cfg.Logger.Handler()
		}
		o.cfg.Logger = slog.New(requestsHandler{r: o.requests, next: next})
	}
	srv, err := simulator.New(o.cfg)
	if err != nil {
		t.Fatalf("simtest: starting simulator: %v", err)
	}
	control, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = srv.Close()
		t.Fatalf("simtest: listening: %v", err)
	}
	metadata, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = control.Close()
		_ = srv.Close()
		t.Fatalf("simtest: listening: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sim{
		URL:           "http://" + control.Addr().String(),
		MetadataURL:   "http://" + metadata.Addr().String(),
		Token:         o.cfg.Token,
		ReadOnlyToken: o.cfg.ReadOnlyToken,
		DataDir:       o.cfg.DataDir,
		srv:           srv,
		cancel:        cancel,
		done:          make(chan error, 1),
	}
	go func() { s.done <- srv.Serve(ctx, control, metadata) }()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("simtest: stopping simulator: %v", err)
		}
	})
	return s
}

// Stop shuts the simulator down gracefully and closes its database. It is
// safe to call more than once; the test's cleanup calls it too.
func (s *Sim) Stop() { _ = s.stop() }

func (s *Sim) stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		err := <-s.done
		s.stopErr = errors.Join(err, s.srv.Close())
	})
	return s.stopErr
}

// Server is the in-process simulator, for tests that need more than HTTP.
func (s *Sim) Server() *simulator.Server { return s.srv }

var adminClient = &http.Client{Timeout: 30 * time.Second}

// SetFaults replaces the realism switches through the admin endpoint.
func (s *Sim) SetFaults(t testing.TB, f exampleapi.Faults) {
	t.Helper()
	body, err := json.Marshal(f)
	if err != nil {
		t.Fatalf("simtest: encoding faults: %v", err)
	}
	if err := s.admin(http.MethodPut, body, nil); err != nil {
		t.Fatalf("simtest: setting faults: %v", err)
	}
}

// Faults reads the current realism switches through the admin endpoint.
func (s *Sim) Faults(t testing.TB) exampleapi.Faults {
	t.Helper()
	var f exampleapi.Faults
	if err := s.admin(http.MethodGet, nil, &f); err != nil {
		t.Fatalf("simtest: reading faults: %v", err)
	}
	return f
}

func (s *Sim) admin(method string, body []byte, out any) error {
	req, err := http.NewRequest(method, s.URL+"/admin/v1/faults", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := adminClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s /admin/v1/faults: %s: %s", method, resp.Status, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
