// Command example-cloud runs the Example cloud simulator: the control API
// and the metadata API of docs/example-cloud-api.md, persisted in a data
// directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "example-cloud:", err)
		os.Exit(1)
	}
}

// Environment variables holding the tokens, used when the flags are not given.
const (
	envToken         = "EXAMPLE_TOKEN"
	envReadOnlyToken = "EXAMPLE_READONLY_TOKEN"
)

// options are the command-line flags.
type options struct {
	listen, metadataListen, dataDir string
	token, readOnlyToken            string
	seedFile, selfInstance          string
	provisionDelay, latency         time.Duration
	rateLimit, errorRate, dropRate  float64
	rateBurst, lbPublicPoolSize     int
	lbPublicPrefix                  string
	dataPlane                       bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("example-cloud", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8440", "control API listen address")
	fs.StringVar(&o.metadataListen, "metadata-listen", "127.0.0.1:8441", "metadata API listen address")
	fs.StringVar(&o.dataDir, "data-dir", "./.example-cloud", "directory of the database (created if missing)")
	// The tokens' environment variables are read after parsing: a flag
	// default is printed by --help and by every usage error.
	fs.StringVar(&o.token, "token", "", "read-write API token (default: $"+envToken+"; required)")
	fs.StringVar(&o.readOnlyToken, "readonly-token", "", "read-only token for the metadata API (default: $"+envReadOnlyToken+")")
	fs.StringVar(&o.seedFile, "seed", "", "seed YAML file (regions, zones, networks, instances); applied idempotently at start")
	fs.StringVar(&o.selfInstance, "self-instance", "", "instance (name or id) that the metadata API's /v1/self describes")
	fs.DurationVar(&o.provisionDelay, "provision-delay", 2*time.Second, "how long a new load balancer stays provisioning")
	fs.Float64Var(&o.rateLimit, "rate-limit", 0, "requests per second allowed per token (0 = off)")
	fs.IntVar(&o.rateBurst, "rate-burst", 0, "rate limiter burst (default: the rate, at least 1)")
	fs.DurationVar(&o.latency, "latency", 0, "latency added to every API request")
	fs.Float64Var(&o.errorRate, "error-rate", 0, "fraction (0..1) of API requests answered 500/503 before processing")
	fs.Float64Var(&o.dropRate, "drop-rate", 0, "fraction (0..1) of API requests whose connection is closed after processing")
	fs.IntVar(&o.lbPublicPoolSize, "lb-public-pool-size", 0, "limit the public load balancer pool to N addresses (0 = all of --lb-public-prefix)")
	fs.StringVar(&o.lbPublicPrefix, "lb-public-prefix", "203.0.113.0/24", "the public load balancer address pool (IPv4, /30 or larger)")
	fs.BoolVar(&o.dataPlane, "data-plane", false, "serve the load balancers' traffic on their addresses (they must be local: run inside a network namespace of the run's own, or as root)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["token"] {
		o.token = os.Getenv(envToken)
	}
	if !set["readonly-token"] {
		o.readOnlyToken = os.Getenv(envReadOnlyToken)
	}
	if o.token == "" {
		return o, errors.New("no API token: pass --token or set " + envToken)
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var seed *simulator.Seed
	if o.seedFile != "" {
		if seed, err = simulator.LoadSeed(o.seedFile); err != nil {
			return err
		}
	}
	lbPrefix, err := netip.ParsePrefix(o.lbPublicPrefix)
	if err != nil {
		return fmt.Errorf("--lb-public-prefix: %w", err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	srv, err := simulator.New(simulator.Config{
		DataDir:       o.dataDir,
		Token:         o.token,
		ReadOnlyToken: o.readOnlyToken,
		Seed:          seed,
		Faults: exampleapi.Faults{
			LatencyMs:        int(o.latency.Milliseconds()),
			ErrorRate:        o.errorRate,
			DropRate:         o.dropRate,
			RateLimit:        o.rateLimit,
			RateBurst:        o.rateBurst,
			ProvisionDelayMs: int(o.provisionDelay.Milliseconds()),
		},
		SelfInstance:     o.selfInstance,
		LBPublicPoolSize: o.lbPublicPoolSize,
		LBPublicPrefix:   lbPrefix,
		DataPlane:        o.dataPlane,
		Logger:           logger,
	})
	if err != nil {
		return err
	}
	control, err := net.Listen("tcp", o.listen)
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("control API: %w", err)
	}
	metadata, err := net.Listen("tcp", o.metadataListen)
	if err != nil {
		_ = control.Close()
		_ = srv.Close()
		return fmt.Errorf("metadata API: %w", err)
	}
	fmt.Fprintf(stdout, "example-cloud: control API listening on http://%s\n", control.Addr())
	fmt.Fprintf(stdout, "example-cloud: metadata API listening on http://%s\n", metadata.Addr())
	fmt.Fprintf(stdout, "example-cloud: data dir %s\n", o.dataDir)

	serveErr := srv.Serve(ctx, control, metadata)
	closeErr := srv.Close()
	if err := errors.Join(serveErr, closeErr); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "example-cloud: shut down")
	return nil
}
