package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/example/cloud-provider-example/internal/tfgc"
	"github.com/example/cloud-provider-example/redact"
	"github.com/example/cloud-provider-example/tfprovider"
)

// Config configures a Runner.
type Config struct {
	// Terraform is which distribution (terraform or tofu) and where its binary
	// comes from (see FindBinary).
	Terraform BinaryConfig
	// WorkDir holds one directory per workspace.
	WorkDir string
	// CLIConfigFile is the project's terraform CLI config (filesystem
	// mirror, no registry). Always set: the environment may point
	// TF_CLI_CONFIG_FILE at a file that does not exist.
	CLIConfigFile string
	// LockFile is the provider lock file copied into every workspace, so
	// init is offline and a rebuilt provider is picked up everywhere.
	LockFile string
	// PluginCacheDir is the terraform plugin cache, if the CLI config uses
	// one; inits are then serialised because the cache is not safe for
	// concurrent installs.
	PluginCacheDir string
	// Concurrency bounds the objects planned or applied at once (default 4).
	Concurrency int
	// LockTimeout is passed to every locking terraform command (default 30s).
	LockTimeout time.Duration
	// StaleLockAge: a state lock older than this, not held by this runner,
	// is force-unlocked (default 15m; negative disables).
	StaleLockAge time.Duration
	// KeepPlanText writes the human-readable rendering of every plan with
	// changes (terraform show, redacted by terraform) to
	// <workspace>/.ccm/last-plan.txt, for people reviewing what was
	// applied. Costs one terraform process per change.
	KeepPlanText bool
	// Observe, if set, hears of every terraform process: its command, its
	// error (nil on success) and how long it took (for metrics).
	Observe func(op string, err error, d time.Duration)
	// ObserveRemembered, if set, hears of every request of a terraform
	// process the attached provider could answer from memory (an apply's
	// asking again what its plan asked, tfprovider.Memo), and whether it
	// did.
	ObserveRemembered func(rpc string, remembered bool)
	// Env is added to every terraform process (e.g. EXAMPLE_TOKEN for the
	// provider). Values are secrets: they are scrubbed from errors.
	Env map[string]string
	// ProcessMemoryLimit is the heap in bytes a terraform process grows to
	// before its garbage collector runs (0: tfgc.DefaultLimit, 512 MiB);
	// negative: Go's own collector. Collecting as it goes was a fifth of
	// a short process's CPU (internal/tfgc).
	ProcessMemoryLimit int64
	// Provider is where terraform gets the Example provider: "attached"
	// (default: served in this process, see ProviderAttached; LockFile is
	// not used) or "spawned" (the binary installed from the CLI config's
	// mirror, pinned by LockFile).
	Provider ProviderMode
	// NoInitCopy always runs terraform init for a new workspace, instead
	// of copying the initialisation of one with the same providers,
	// modules and backend type (see initcopy.go).
	NoInitCopy bool
	// Encryption is OpenTofu's state and plan encryption, given to every
	// process as TF_ENCRYPTION (distribution tofu only; see encryption.go).
	Encryption *Encryption
	// EncryptionLater: the keys come later (SetEncryption, once read from
	// the cluster); until then every operation is refused, so no state is
	// ever written unencrypted.
	EncryptionLater bool
	// Clock is what the runner's ages are told by: a state lock's (against
	// StaleLockAge), the last apply's (stamped with it, against
	// EnsureOptions.MaxAge), an unused preview's and a tombstone's.
	// Durations of terraform processes are measured on the real clock.
	// Default the real clock; tests step a fake one instead of sleeping.
	Clock clock.PassiveClock
}

// Runner runs terraform for many workspaces: one operation per workspace
// at a time, at most Concurrency workspaces at once.
type Runner struct {
	cfg       Config
	terraform string
	lockFile  []byte
	// slots bounds the operations running at once (Concurrency), shared
	// fairly between namespaces (see fairshare.go); each has its own
	// in-process provider server.
	slots  *fairSlots
	initMu sync.Mutex
	// serialInits: inits take initMu (see serialInits).
	serialInits bool
	// copySalt is what initialisations copied between workspaces depend
	// on besides the files (see initcopy.go).
	copySalt   string
	initCopies atomic.Int64

	mu sync.Mutex
	ws map[string]*workspace
	// previews are the speculative plans' directories, by key (Speculate).
	previews map[string]*workspace
	// tombstones are the workspaces destroyed and forgotten, by key, with
	// their owner, for tombstoneAge: nothing re-creates them (see
	// acquireJob).
	tombstones map[string]tombstone

	version versionCache

	procs sync.Map // op -> *atomic.Int64
	// memo answers what an apply asks the attached provider again
	// (shared by the slots' servers: a plan and its apply may run in
	// different slots).
	memo *tfprovider.Memo
	// lockSeen is when this runner first ran into each lock held by
	// someone else (workspace/lockID), for twice StaleLockAge.
	lockMu   sync.Mutex
	lockSeen map[string]time.Time

	// OnForceUnlock, if set, is told about every stale lock forced open
	// (for the audit log).
	OnForceUnlock func(workspace, lockID, holder string, created time.Time)

	// encryption is TF_ENCRYPTION's value and its secrets (nil: none).
	encryption atomic.Pointer[encryptionEnv]
}

// now is the time on the runner's clock (Config.Clock).
func (r *Runner) now() time.Time {
	if r.cfg.Clock == nil {
		return time.Now() // a Runner not made by New (internal tests)
	}
	return r.cfg.Clock.Now()
}

// New finds terraform and returns a Runner.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	if cfg.WorkDir == "" {
		return nil, fmt.Errorf("runner: work dir is required")
	}
	if cfg.CLIConfigFile == "" {
		return nil, fmt.Errorf("runner: terraform CLI config file is required")
	}
	if _, err := os.Stat(cfg.CLIConfigFile); err != nil {
		return nil, fmt.Errorf("runner: terraform CLI config: %w", err)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.StaleLockAge == 0 {
		cfg.StaleLockAge = 15 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	switch cfg.Provider {
	case "":
		cfg.Provider = ProviderAttached
	case ProviderAttached, ProviderSpawned:
	default:
		return nil, fmt.Errorf("runner: provider mode %q: want %q or %q", cfg.Provider, ProviderAttached, ProviderSpawned)
	}
	if cfg.Terraform.Distribution == "" {
		cfg.Terraform.Distribution = DistributionTerraform
	}
	r := &Runner{cfg: cfg, slots: newFairSlots(cfg.Concurrency), ws: map[string]*workspace{},
		memo: tfprovider.NewMemo(memoSize, memoTTL, cfg.ObserveRemembered)}
	if (cfg.Encryption != nil || cfg.EncryptionLater) && cfg.Terraform.Distribution != DistributionTofu {
		return nil, errors.New("runner: state encryption needs distribution tofu (Terraform has no state encryption)")
	}
	if cfg.Encryption != nil {
		if err := r.SetEncryption(cfg.Encryption); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	bin, v, err := FindBinary(ctx, cfg.Terraform)
	if err != nil {
		return nil, err
	}
	if v != nil {
		// Finding the binary ran it once (hc-install runs each candidate
		// on PATH until one is the version wanted; usually the first).
		r.count("version")
		r.observe("version", nil, start)
		r.version.v = v
	}
	r.terraform = bin
	klog.InfoS("terraform runner", "distribution", cfg.Terraform.Distribution, "binary", bin, "provider", cfg.Provider)
	if r.serialInits = cfg.PluginCacheDir != ""; r.serialInits && cfg.Terraform.Distribution == DistributionTofu {
		r.serialInits = r.initsMustSerialise(ctx)
	}
	if r.copySalt, err = initCopySalt(cfg.Provider, bin, cfg.CLIConfigFile); err != nil {
		return nil, err
	}
	if cfg.LockFile != "" {
		if r.lockFile, err = os.ReadFile(cfg.LockFile); err != nil {
			return nil, fmt.Errorf("runner: provider lock file: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o700); err != nil {
		return nil, fmt.Errorf("runner: work dir: %w", err)
	}
	return r, nil
}

// WorkDir holds the workspace directories.
func (r *Runner) WorkDir() string { return r.cfg.WorkDir }

// TerraformPath is the binary in use.
func (r *Runner) TerraformPath() string { return r.terraform }

// Distribution is the distribution in use (terraform or tofu).
func (r *Runner) Distribution() Distribution { return r.cfg.Terraform.Distribution }

// Job is one object's desired state.
type Job struct {
	// Key names the object's workspace: its directory (one path element),
	// its state and its plan record.
	Key string
	// Share is whose fair share of slots this operation uses: the
	// namespace of the object that caused it (ClusterShare, "", for the
	// cluster-wide objects). While slots are short, a freed one goes to
	// the next share with operations waiting, round-robin, so one
	// namespace's load cannot starve another's. Operations on a plan or
	// key alone (Apply, ShowPlan, ...) use the share the workspace's last
	// job named.
	Share string
	// Owner identifies the object (a Service's uid; "" for none): a
	// workspace applied for one owner refuses another, and once destroyed
	// it is not created again for the same owner.
	Owner string
	// Files is the rendered root module.
	Files map[string][]byte
	// Hash identifies the desired state (rendered files and inputs); an
	// apply of the same hash is skipped (see Runner.Ensure).
	Hash string
	// Env carries backend credentials (PG_CONN_STR, AWS_*, ...): secrets,
	// never written to the workspace and scrubbed from errors.
	Env map[string]string
	// Secrets are further values terraform must never echo (scrubbed like
	// Env's values): the parts of an Env value that are secrets on their
	// own, such as each private key inside a JSON variable.
	Secrets []string
	// CLIWorkspace is terraform's CLI workspace (terraform workspace
	// select): "" or "default" for backends with one state per
	// configuration. Not the object's workspace, which Key names.
	CLIWorkspace string
	// Prepare, if set, runs in the workspace directory before terraform
	// (e.g. to materialise the shipped modules the files refer to).
	Prepare func(dir string) error
	// DeleteState removes the object's state after a destroy, for backends
	// where a workspace delete does not (local file, kubernetes Secret).
	DeleteState func(ctx context.Context) error
	// Unlock, if set, opens the state lock lockID the backend's own way,
	// only while that lock is held: for a lock terraform force-unlock
	// cannot open (kubernetes: one taken to create a state, left by a
	// holder killed then).
	Unlock func(ctx context.Context, lockID string) error
	// Exists, if set, tells cheaply (without terraform) whether the
	// object's state is stored: reading the outputs of an object that has
	// none then starts nothing, and creates nothing (terraform would
	// create a pg workspace just to read it).
	Exists func(ctx context.Context) (bool, error)
}

func (r *Runner) lockTimeout() string {
	d := r.cfg.LockTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	return d.String()
}

// env is the whole environment of a terraform process: terraform-exec
// replaces the environment, so PATH and HOME are passed explicitly.
// (terraform-exec sets TF_IN_AUTOMATION and TF_INPUT itself.)
func (r *Runner) env(extra map[string]string) map[string]string {
	env := map[string]string{
		"PATH":               os.Getenv("PATH"),
		"HOME":               os.Getenv("HOME"),
		"TF_CLI_CONFIG_FILE": r.cfg.CLIConfigFile,
		"CHECKPOINT_DISABLE": "1",
	}
	if r.cfg.PluginCacheDir != "" {
		env["TF_PLUGIN_CACHE_DIR"] = r.cfg.PluginCacheDir
	}
	maps.Copy(env, tfgc.Env(r.cfg.ProcessMemoryLimit))
	for k, v := range r.cfg.Env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	if e := r.encryption.Load(); e != nil {
		env[EncryptionEnv] = e.config
	}
	return env
}

// acquire takes a concurrency slot and the workspace lock, and attaches
// the workspace's terraform commands to the slot's provider server. The
// slot is from the share the workspace's last job named.
func (r *Runner) acquire(ctx context.Context, key string) (*workspace, func(), error) {
	w, err := r.workspaceFor(key)
	if err != nil {
		return nil, nil, err
	}
	return r.acquireSlot(ctx, w, w.lastShare())
}

// acquireShare is acquire from share, which the workspace remembers for
// the operations that name no job.
func (r *Runner) acquireShare(ctx context.Context, key, share string) (*workspace, func(), error) {
	w, err := r.workspaceFor(key)
	if err != nil {
		return nil, nil, err
	}
	w.share.Store(&share)
	return r.acquireSlot(ctx, w, share)
}

func (r *Runner) acquireSlot(ctx context.Context, w *workspace, share string) (*workspace, func(), error) {
	start := time.Now()
	s, err := r.slots.get(ctx, share)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace %s: waiting for a terraform slot: %w", w.key, err)
	}
	if waited := time.Since(start); waited > time.Second {
		klog.V(4).InfoS("terraform slot", "workspace", w.key, "share", share, "waited", waited)
	}
	w.mu.Lock()
	if w.tf == nil {
		if w.tf, err = r.newHandle(w.dir); err != nil {
			w.mu.Unlock()
			r.slots.put(s)
			return nil, nil, fmt.Errorf("workspace %s: %w", w.key, err)
		}
	}
	opt, err := r.attach(s)
	if err != nil {
		w.mu.Unlock()
		r.slots.put(s)
		return nil, nil, err
	}
	if err := r.encryptionReady(); err != nil {
		w.mu.Unlock()
		r.slots.put(s)
		return nil, nil, fmt.Errorf("workspace %s: %w", w.key, err)
	}
	env := w.env
	if env == nil {
		env = r.env(nil)
	} else if env, err = r.rekey(w); err != nil {
		w.mu.Unlock()
		r.slots.put(s)
		return nil, nil, fmt.Errorf("workspace %s: %w", w.key, err)
	}
	s.setEnv(env)
	w.slot, w.reattach = s, opt
	return w, func() {
		w.slot, w.reattach = nil, nil
		w.mu.Unlock()
		s.idle()
		r.slots.put(s)
	}, nil
}

// exec runs one terraform command: counted, timed and observed.
func (r *Runner) exec(op string, fn func() error) error {
	r.count(op)
	start := time.Now()
	err := fn()
	r.observe(op, err, start)
	return err
}

func (r *Runner) observe(op string, err error, start time.Time) {
	if r.cfg.Observe != nil {
		r.cfg.Observe(op, err, time.Since(start))
	}
}

// count records one terraform process for op.
func (r *Runner) count(op string) {
	v, _ := r.procs.LoadOrStore(op, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Processes returns how many terraform processes were started, by command.
func (r *Runner) Processes() map[string]int64 {
	out := map[string]int64{}
	r.procs.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// secrets lists the secret values a workspace's terraform may echo: every
// value of the runner's and the job's environment (backend credentials,
// the provider's token). A workspace also registers them process-wide,
// as long as it lives, so an Error built without diagnostics is scrubbed
// too (see Error.Error).
func (r *Runner) secrets(job map[string]string, extra ...string) []string {
	var out []string
	if e := r.encryption.Load(); e != nil {
		extra = append(slices.Clone(extra), e.secrets...)
	}
	for _, v := range extra {
		if len(v) >= redact.MinLen {
			out = append(out, v)
		}
	}
	for _, env := range []map[string]string{r.cfg.Env, job} {
		for _, v := range env {
			if len(v) >= redact.MinLen { // shorter values would redact ordinary words
				out = append(out, v)
			}
		}
	}
	return out
}
