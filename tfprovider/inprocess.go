package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	testing "github.com/mitchellh/go-testing-interface"

	"github.com/example/cloud-provider-example/internal/syncbuf"
)

// InProcessOptions configure ServeInProcess.
type InProcessOptions struct {
	// Name tells servers apart in errors and in the log file name
	// (TF_LOG_PATH_MASK); e.g. "slot-0".
	Name string
	// Getenv answers the provider's environment fallbacks (EXAMPLE_TOKEN,
	// EXAMPLE_ENDPOINT, EXAMPLE_REGION). A spawned provider reads the
	// environment terraform gives it; in-process, that environment is not
	// the process's, so the caller supplies it. Nil reads nothing.
	Getenv func(string) string
	// OnPanic hears of a panic recovered in an RPC: the RPC fails (and with
	// it the terraform command), the process lives on, and the server is
	// no longer Usable.
	OnPanic func(rpc string, value any, stack []byte)
	// Memo, if set, answers the requests terraform repeats (an apply's
	// validation, state upgrade and plan of what its plan process asked);
	// share one among the process's servers.
	Memo *Memo
}

// InProcess is the Example provider served inside this process, for
// terraform processes to attach to (TF_REATTACH_PROVIDERS) instead of
// starting the provider binary.
//
// One server holds one provider configuration: every terraform process
// attached to it configures it anew (ConfigureProvider), so terraform
// processes that may run at the same time need servers of their own.
//
// What stays contained: a panic in an RPC handler becomes that RPC's error
// (tf6server does not recover panics: without this, one would end the
// process). What does not: a panic in a goroutine the provider or a library
// starts, and the provider's memory and goroutines, which are this
// process's. Logs follow the process's TF_LOG, TF_LOG_PATH and
// TF_LOG_PATH_MASK as terraform's would (off when unset), never stderr by
// default: tf6server's own default is TRACE to stderr.
type InProcess struct {
	name    string
	cancel  context.CancelFunc
	stopped chan struct{} // closed by go-plugin when the server has stopped
	addr    net.Addr
	broken  atomic.Bool
	// served is the provider server behind the panic guard (the
	// framework's); Idle stops what it keeps of past requests.
	served tfprotov6.ProviderServer
	// transport is the provider's HTTP pool (nil for test servers),
	// emptied on Close.
	transport *http.Transport
}

// ServeInProcess starts serving the Example provider (protocol 6) on a
// Unix socket in $TMPDIR that only this user may connect to (go-plugin).
// Close stops it.
func ServeInProcess(o InProcessOptions) (*InProcess, error) {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	p := newExampleProvider(Version, o.Getenv)
	s, err := serveInProcess(providerserver.NewProtocol6(p), o)
	if err != nil {
		return nil, err
	}
	s.transport = p.transport
	return s, nil
}

// quietFramework turns the framework's own trace logs off when TF_LOG is
// unset (nothing is logged then) and TF_LOG_SDK_FRAMEWORK is unset too.
// Without a level it assumes TRACE and looks for its logger at each call:
// terraform-plugin-framework v1.19.0's MarkComputedNilsAsUnknown wraps
// its context once more for every value of a plan it visits, so each
// look walks a chain as long as the values visited, and a plan of a
// load balancer with 1,000 rules made about 10^9 steps (docs/scale.md).
var quietFramework = sync.OnceFunc(func() {
	if level, set := frameworkLevel(os.Getenv); set {
		_ = os.Setenv(frameworkLogLevel, level)
	}
})

// frameworkLevel is the framework's log level to set, if any: "off"
// unless TF_LOG asks for logs or the level is set already.
func frameworkLevel(getenv func(string) string) (string, bool) {
	return "off", getenv("TF_LOG") == "" && getenv(frameworkLogLevel) == ""
}

// frameworkLogLevel is the framework's log level variable.
const frameworkLogLevel = "TF_LOG_SDK_FRAMEWORK"

// serveInProcess serves the provider server factory makes (tests serve
// providers that misbehave).
func serveInProcess(factory func() tfprotov6.ProviderServer, o InProcessOptions) (*InProcess, error) {
	quietFramework()
	ctx, cancel := context.WithCancel(context.Background())
	s := &InProcess{name: o.Name, cancel: cancel, stopped: make(chan struct{}), served: factory()}
	next := s.served
	if o.Memo != nil {
		next = &memoized{ProviderServer: next, memo: o.Memo, getenv: o.Getenv}
	}
	g := &guarded{next: next, onPanic: func(rpc string, v any, stack []byte) {
		s.broken.Store(true)
		if o.OnPanic != nil {
			o.OnPanic(rpc, v, stack)
		}
	}}
	// go-plugin reports why it could not serve only through its logger.
	errs := &syncbuf.Buffer{Max: 4096}
	logger := hclog.New(&hclog.LoggerOptions{Name: "provider-server", Level: hclog.Error, Output: errs})
	reattach := make(chan *plugin.ReattachConfig)
	served := make(chan error, 1)
	go func() {
		served <- tf6server.Serve(Address, func() tfprotov6.ProviderServer { return g },
			tf6server.WithDebug(ctx, reattach, s.stopped),
			tf6server.WithGoPluginLogger(logger),
			tf6server.WithLoggingSink(&logName{name: "example-provider-" + o.Name}),
		)
	}()
	fail := func(err error) (*InProcess, error) {
		cancel()
		if msg := strings.TrimSpace(errs.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return nil, fmt.Errorf("serve the Example provider in-process %s: %w", o.Name, err)
	}
	select {
	case rc := <-reattach:
		if rc == nil || rc.Addr == nil {
			return fail(errors.New("no address to attach to"))
		}
		s.addr = rc.Addr
		return s, nil
	case <-s.stopped:
		return fail(errors.New("the server stopped before serving"))
	case err := <-served:
		if err == nil {
			err = errors.New("the server stopped before serving")
		}
		return fail(err)
	}
}

// Addr is where terraform attaches (network "unix", the socket's path).
func (s *InProcess) Addr() net.Addr { return s.addr }

// Pid is the process serving: this one.
func (s *InProcess) Pid() int { return os.Getpid() }

// Usable is false once the server stopped (it was closed, or something
// called go-plugin's Shutdown) or a handler panicked: the provider's state
// is then unknown, the caller starts a new server.
func (s *InProcess) Usable() bool {
	select {
	case <-s.stopped:
		return false
	default:
		return !s.broken.Load()
	}
}

// Idle tells the server that no terraform process is attached to it any
// more: call it between two uses, never while a command runs (it cancels
// the requests in flight).
//
// It is what keeps a long-lived server's memory flat. The framework keeps
// a cancel function for every request it serves (each holding the
// request's context, and through it the gRPC stream and the transport of
// the connection with their buffers) and lets go of them only when
// terraform calls StopProvider, which terraform does on an interrupt, not
// on exit. A provider process ends with its terraform process; this
// server outlives thousands of them (about 1.2 MiB kept per apply).
func (s *InProcess) Idle() {
	_, _ = s.served.StopProvider(context.Background(), &tfprotov6.StopProviderRequest{})
}

// Close stops the server and waits until it has stopped; terraform
// processes still attached fail.
func (s *InProcess) Close() {
	s.cancel()
	<-s.stopped
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
}

// logName names the in-process server to terraform-plugin-log's logging
// sink, which then logs as terraform does for its providers: by TF_LOG
// into TF_LOG_PATH (or TF_LOG_PATH_MASK with this name), nothing when
// TF_LOG is unset. Only Name is used; the rest of testing.T is inert.
type logName struct {
	testing.RuntimeT
	name string
}

func (l *logName) Name() string { return l.name }
