// Package simulator is the Example cloud: a persistent, authenticated HTTP
// implementation of the API described in docs/example-cloud-api.md, serving
// the wire types of package exampleapi. State lives in a bbolt database in
// the data directory; every acknowledged write is on disk before it is
// answered.
package simulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"k8s.io/utils/clock"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// Config configures a Server.
type Config struct {
	// DataDir holds the database; it is created if missing.
	DataDir string
	// Token is the read-write token (required); ReadOnlyToken, if set, is
	// accepted by the metadata API only.
	Token         string
	ReadOnlyToken string
	// Seed is applied at start (idempotently). When nil, DefaultSeed is
	// applied to an empty store.
	Seed *Seed
	// Faults are the initial realism switches, including the provision
	// delay; they can be changed at runtime on /admin/v1/faults.
	Faults exampleapi.Faults
	// SelfInstance (name or id) is the instance the metadata API's /v1/self
	// describes.
	SelfInstance string
	// LBPublicPoolSize limits the public load balancer pool to its first N
	// addresses (0 = all of LBPublicPrefix), to make exhaustion testable.
	LBPublicPoolSize int
	// LBPublicPrefix is the public load balancer pool (default
	// 203.0.113.0/24: 254 addresses); a larger one for benchmarks of
	// thousands of load balancers, e.g. 198.18.0.0/16.
	LBPublicPrefix netip.Prefix
	// DataPlane serves the load balancers' traffic: a socket on each
	// active listener's address (docs/adr/0023-the-data-plane.md). The
	// addresses must be local: run inside internal/netns, or as root with
	// the pools routed local.
	DataPlane bool
	// Logger receives the request log; nil discards it.
	Logger *slog.Logger
	// Clock is the cloud's time: what objects are stamped with, when a
	// load balancer's provisioning ends and a draining target's delay
	// (nothing runs on a timer: each answer reads the clock). Default the
	// real clock; tests step a fake one instead of sleeping. Request
	// rates and the request log keep the real clock.
	Clock clock.PassiveClock
}

// LocalPrefixes are the addresses a run with the data plane makes local
// (internal/netns): the cloud's pools (load balancers 203.0.113.0/24,
// the benchmarks' 198.18.0.0/15, instances' public 198.51.100.0/24, the
// default seed's networks 10.0.0.0/16 and 10.1.0.0/16, internal load
// balancers' 10.255.0.0/16) and its IPv6 ones. The clusters' pods
// (10.244.0.0/16) are not among them: each is a namespace joined by a
// veth pair, routed there.
var LocalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("10.0.0.0/16"),
	netip.MustParsePrefix("10.1.0.0/16"),
	netip.MustParsePrefix("10.255.0.0/16"),
	netip.MustParsePrefix("2001:db8:1b::/64"),
	netip.MustParsePrefix("fd00::/8"),
}

// Server is a running simulator: its store and its two HTTP handlers.
type Server struct {
	cfg    Config
	db     *bolt.DB
	log    *slog.Logger
	tokens tokens
	faults *faultState
	stats  faultStats
	cloud  *cloud
	// dp is the data plane while it runs (Config.DataPlane): target
	// health answers from its probes.
	dp atomic.Pointer[dataplane.Server]
}

// New opens the store in cfg.DataDir and applies the seed.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Token == "":
		return nil, errors.New("a read-write token is required")
	case cfg.ReadOnlyToken == cfg.Token:
		return nil, errors.New("the read-only token must differ from the read-write token")
	}
	if err := validateFaults(cfg.Faults); err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	db, err := openDB(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		db:     db,
		log:    cfg.Logger,
		tokens: tokens{readWrite: []byte(cfg.Token), readOnly: []byte(cfg.ReadOnlyToken)},
		faults: newFaultState(cfg.Faults),
	}
	s.cloud = &cloud{
		db:  db,
		now: func() time.Time { return cfg.Clock.Now().UTC() },
		provisionDelay: func() time.Duration {
			return time.Duration(s.faults.get().ProvisionDelayMs) * time.Millisecond
		},
		lbPublicPoolSize: cfg.LBPublicPoolSize,
		lbPublicPrefix:   lbPublicPrefix,
		changed:          make(chan struct{}, 1),
	}
	if cfg.LBPublicPrefix.IsValid() {
		if !cfg.LBPublicPrefix.Addr().Is4() || cfg.LBPublicPrefix.Bits() > 30 {
			_ = db.Close()
			return nil, fmt.Errorf("simulator: LB public prefix %s: want an IPv4 prefix of /30 or larger", cfg.LBPublicPrefix)
		}
		s.cloud.lbPublicPrefix = cfg.LBPublicPrefix.Masked()
	}
	if err := s.cloud.applySeed(cfg.Seed); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the store. Call it after the HTTP servers have shut down.
func (s *Server) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing database: %w", err)
	}
	return nil
}

// Faults returns the current realism switches.
func (s *Server) Faults() exampleapi.Faults { return s.faults.get() }

// SetFaults replaces the realism switches atomically.
func (s *Server) SetFaults(f exampleapi.Faults) error {
	if err := validateFaults(f); err != nil {
		return err
	}
	s.faults.set(f)
	s.log.Info("faults changed", "faults", f)
	return nil
}

// Handler is the control API: /v1 (read-write token), /admin/v1 and
// /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", handleHealthz)

	admin := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, s.tokens.requireToken(roleReadWrite, h))
	}
	admin("GET /admin/v1/faults", s.handleGetFaults)
	admin("PUT /admin/v1/faults", s.handlePutFaults)
	admin("GET /admin/v1/fault-stats", s.handleGetFaultStats)

	api := s.apiRoutes(mux, roleReadWrite)
	api("GET /v1/regions", s.handleListRegions)
	api("GET /v1/zones", s.handleListZones)

	api("POST /v1/instances", s.handleCreateInstance)
	api("GET /v1/instances", s.handleListInstances)
	api("GET /v1/instances/{id}", s.handleGetInstance)
	api("PUT /v1/instances/{id}/tags", s.handleSetInstanceTags)
	api("PUT /v1/instances/{id}/state", s.handleSetInstanceState)
	api("DELETE /v1/instances/{id}", s.handleDeleteInstance)

	// /v1/networks, /v1/load-balancers, /v1/target-pools, /v1/addresses
	// and /v1/certificates: POST, GET, GET {id}, PUT {id} (load
	// balancers, target pools, addresses), DELETE {id}; and a network's
	// routes.
	s.serveObjects(api)
	// The traffic model: simulated connections, target health and requests.
	api("POST /v1/load-balancers/{id}/connections", s.handleOpenConnections)
	api("GET /v1/load-balancers/{id}/connections", s.handleConnections)
	api("GET /v1/load-balancers/{id}/target-health", s.handleTargetHealth)
	api("GET /v1/target-pools/{id}/target-health", s.handleTargetPoolHealth)
	api("POST /v1/load-balancers/{id}/http-requests", s.handleSimulateRequests)

	return logRequests(s.log, "control", withJSONNotFound(mux))
}

// MetadataHandler is the metadata API (read-only or read-write token) and
// /healthz.
func (s *Server) MetadataHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", handleHealthz)
	api := s.apiRoutes(mux, roleReadOnly)
	api("GET /v1/instances/{id}", s.handleMetadataInstance)
	// by-name/{name} and {id}/placement overlap as patterns, so one route
	// serves both.
	api("GET /v1/instances/{id}/{sub}", s.handleMetadataInstanceSub)
	api("GET /v1/self", s.handleMetadataSelf)
	api("GET /v1/self/placement", s.handleMetadataSelfPlacement)
	return logRequests(s.log, "metadata", withJSONNotFound(mux))
}

// apiRoutes registers the API routes of mux: behind a token of at least
// min, and the realism switches.
func (s *Server) apiRoutes(mux *http.ServeMux, min role) func(pattern string, h http.HandlerFunc) {
	return func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, s.tokens.requireToken(min, s.injectFaults(h)))
	}
}

func handleHealthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// shutdownTimeout bounds how long Serve waits for in-flight requests.
const shutdownTimeout = 10 * time.Second

// Serve serves the control API on control and the metadata API on
// metadata until ctx ends, then shuts both down gracefully (in-flight
// requests finish). It does not close the store: call Close afterwards.
func (s *Server) Serve(ctx context.Context, control, metadata net.Listener) error {
	servers := []*http.Server{
		{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second},
		{Handler: s.MetadataHandler(), ReadHeaderTimeout: 10 * time.Second},
	}
	listeners := []net.Listener{control, metadata}
	errc := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { errc <- srv.Serve(listeners[i]) }()
	}
	if s.cfg.DataPlane {
		dp := dataplane.New(s.log)
		s.dp.Store(dp)
		traffic, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); s.serveTraffic(traffic, dp) }()
		defer func() { stop(); <-done; s.dp.Store(nil); dp.Close() }()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc: // a listener failed: stop the other one too
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			serveErr = errors.Join(serveErr, fmt.Errorf("shutting down: %w", err))
		}
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return serveErr
}
