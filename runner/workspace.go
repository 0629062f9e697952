package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/internal/sleep"
	"github.com/example/cloud-provider-example/redact"
)

// metaDir holds the runner's own files inside a workspace: terraform only
// reads *.tf at the top level, so they never become configuration.
const metaDir = ".ccm"

// workspace is one object's directory and its terraform handle. Its mutex
// serialises every operation on the object.
type workspace struct {
	mu  sync.Mutex
	key string
	dir string
	// tf is made by the first operation (acquire): answering from the
	// last apply needs none. versioned: it was given the binary's version.
	tf        *tfexec.Terraform
	versioned bool
	// env is the environment of the last prepare; compared to decide
	// whether the handle's environment must be rebuilt.
	env map[string]string
	// secrets are scrubbed from everything terraform says.
	secrets []string
	// slot and reattach are those of the operation holding mu: every
	// terraform command passes reattach (a no-op in spawned mode).
	slot     *slot
	reattach *tfexec.ReattachOption
	// speculative: a preview directory (Speculate), which must not create
	// a state. used is when a preview last asked for it (r.mu).
	speculative bool
	used        time.Time
	// unlock is the last job's Unlock (forceOpen).
	unlock func(ctx context.Context, lockID string) error
	// share is the Share of the last job run here, for the operations
	// that name only the workspace (read before mu is taken).
	share atomic.Pointer[string]
}

// lastShare is the share the workspace's last job named (ClusterShare
// before any).
func (w *workspace) lastShare() string {
	if p := w.share.Load(); p != nil {
		return *p
	}
	return ClusterShare
}

// sanitize removes the workspace's secret values from terraform output,
// in every quoted or encoded form, and any connection-string password.
func (w *workspace) sanitize(s string) string {
	return strings.TrimSpace(redact.New(w.secrets...).String(s))
}

// source names the workspace's secrets in the process-wide scrubber
// (known): a preview directory's apart from its object's.
func (w *workspace) source() string {
	if w.speculative {
		return previewSource(w.key)
	}
	return "workspace/" + w.key
}

func previewSource(key string) string { return "preview/" + key }

func (w *workspace) meta(name string) string { return filepath.Join(w.dir, metaDir, name) }

// workspaceFor returns the workspace of key, creating its handle once.
func (r *Runner) workspaceFor(key string) (*workspace, error) {
	return r.workspaceAt(key, true)
}

// knownWorkspace is key's workspace when it has a directory (nil
// otherwise): a question about a workspace creates none. A reconcile
// that waited for a destroy asks the fast path first, and its directory
// would outlive the object.
func (r *Runner) knownWorkspace(key string) *workspace {
	w, _ := r.workspaceAt(key, false)
	return w
}

// workspaceAt is key's workspace, its directory made when create, else
// nil when it has none. Under the lock: a workspace being forgotten
// loses its directory before its entry.
func (r *Runner) workspaceAt(key string, create bool) (*workspace, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.ws[key]; ok {
		return w, nil
	}
	dir := filepath.Join(r.cfg.WorkDir, key)
	if !create {
		if _, err := os.Stat(dir); err != nil {
			return nil, nil
		}
	} else if err := os.MkdirAll(filepath.Join(dir, metaDir), 0o700); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", key, err)
	}
	w := &workspace{key: key, dir: dir}
	r.ws[key] = w
	return w, nil
}

// validKey keeps workspace keys to one safe path element.
func validKey(key string) error {
	if key == "" || key == "." || key == ".." || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return fmt.Errorf("invalid workspace key %q: want one path element", key)
	}
	return nil
}

// prepare writes the job's files (only those that changed), installs the
// provider lock file, sets the environment and runs init when the
// providers, modules or backend changed since the last init.
func (r *Runner) prepare(ctx context.Context, w *workspace, job Job) error {
	if err := r.versioned(ctx, w); err != nil {
		return err
	}
	w.unlock = job.Unlock
	if err := syncFiles(w.dir, job.Files); err != nil {
		return fmt.Errorf("write workspace %s: %w", w.key, err)
	}
	if job.Prepare != nil {
		if err := job.Prepare(w.dir); err != nil {
			return fmt.Errorf("prepare workspace %s: %w", w.key, err)
		}
	}
	lock := r.workspaceLock()
	if len(lock) > 0 {
		if err := writeIfChanged(filepath.Join(w.dir, ".terraform.lock.hcl"), lock, 0o644); err != nil {
			return fmt.Errorf("write lock file %s: %w", w.key, err)
		}
	} else if r.cfg.Provider == ProviderAttached {
		if err := removeLockFile(w.dir); err != nil {
			return fmt.Errorf("remove lock file %s: %w", w.key, err)
		}
	}
	env := r.env(job.Env)
	if !maps.Equal(env, w.env) {
		if err := w.tf.SetEnv(env); err != nil {
			return fmt.Errorf("workspace %s environment: %w", w.key, err)
		}
		w.env = env
	}
	w.slot.setEnv(env)
	w.secrets = r.secrets(job.Env, job.Secrets...)
	known.Set(w.source(), w.secrets...)
	fp, err := initFingerprint(job.Files, lock, job.Env)
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.key, err)
	}
	// A workspace initialised in the other provider mode has the wrong
	// providers installed (or none).
	fp = string(r.cfg.Provider) + "/" + fp
	initialised := false
	if old, _ := os.ReadFile(w.meta("init")); string(old) == fp {
		_, err := os.Stat(filepath.Join(w.dir, ".terraform"))
		initialised = err == nil
	}
	if !initialised {
		copied, tmpl := r.copyInit(w, job, lock)
		if !copied {
			if err := r.init(ctx, w); err != nil {
				return err
			}
			r.saveInit(w, tmpl)
		}
	}
	// After an init the workspace is selected (and created when the
	// backend has none). Otherwise the selected one is checked too: a
	// forget selects default before it deletes the object's workspace, and
	// when the delete fails the directory stays on default, whose state is
	// empty; a plan there would find nothing to destroy.
	if name := job.CLIWorkspace; name != "" && name != "default" && (!initialised || selectedWorkspace(w.dir) != name) {
		if err := r.selectWorkspace(ctx, w, name); err != nil {
			return err
		}
	}
	if !initialised {
		if err := os.WriteFile(w.meta("init"), []byte(fp), 0o600); err != nil {
			return err
		}
	}
	return r.recoverErrored(ctx, w)
}

// selectedWorkspace is the CLI workspace selected in the workspace
// directory dir: terraform keeps its name in .terraform/environment, and
// none is the default workspace.
func selectedWorkspace(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "environment"))
	if name := strings.TrimSpace(string(b)); err == nil && name != "" {
		return name
	}
	return "default"
}

func (r *Runner) init(ctx context.Context, w *workspace) error {
	// Terraform's plugin cache is not safe for concurrent installs.
	if r.serialInits {
		r.initMu.Lock()
		defer r.initMu.Unlock()
	}
	// Init creates a state that does not exist yet, under its lock: one
	// left by a holder killed then stops every init until forced open.
	for forced := false; ; forced = true {
		err := r.initOnce(ctx, w)
		if err == nil || forced || !errors.Is(err, ErrStateLocked) {
			return err
		}
		var te *Error
		errors.As(err, &te)
		li, ok := parseHeldLock(te.Diagnostics + "\n" + te.Err.Error())
		if !ok {
			return err
		}
		if opened, err := r.openStale(ctx, w, li, err); !opened {
			return err
		}
	}
}

func (r *Runner) initOnce(ctx context.Context, w *workspace) error {
	klog.V(2).InfoS("terraform init", "workspace", w.key)
	var stderr bytes.Buffer
	w.tf.SetStderr(&stderr)
	defer w.tf.SetStderr(nil)
	err := r.exec("init", func() error { return w.tf.Init(ctx, tfexec.Reconfigure(true), tfexec.Upgrade(false), w.reattach) })
	if err != nil {
		return &Error{Op: "init", Workspace: w.key, Err: err, Diagnostics: w.sanitize(explainEncryption(stderr.String()))}
	}
	return nil
}

// selectWorkspace selects (creating if needed) a named terraform workspace
// for backends that keep several states in one place (pg).
func (r *Runner) selectWorkspace(ctx context.Context, w *workspace, name string) error {
	var list []string
	var current string
	err := r.exec("workspace", func() (err error) { list, current, err = w.tf.WorkspaceList(ctx, w.reattach); return err })
	if err != nil {
		return w.newError("workspace list", err, nil)
	}
	if current == name {
		return nil
	}
	if slices.Contains(list, name) {
		if err := r.exec("workspace", func() error { return w.tf.WorkspaceSelect(ctx, name, w.reattach) }); err != nil {
			return w.newError("workspace select", err, nil)
		}
		return nil
	}
	if w.speculative {
		return fmt.Errorf("workspace %s: terraform workspace %s: %w", w.key, name, ErrNoState)
	}
	return r.newWorkspace(ctx, w, name)
}

// newWorkspace creates the terraform workspace name. The pg backend takes
// one database-wide lock to create any workspace, and `workspace new` does
// not wait for it (it ignores -lock-timeout): while another process
// creates one, it is retried, with back-off, until the lock timeout. Then
// the error is ErrStateLocked, as for any held lock.
func (r *Runner) newWorkspace(ctx context.Context, w *workspace, name string) error {
	timeout, _ := time.ParseDuration(r.lockTimeout())
	deadline := time.Now().Add(timeout)
	for attempt := 0; ; attempt++ {
		err := r.exec("workspace", func() error {
			return w.tf.WorkspaceNew(ctx, name, tfexec.LockTimeout(r.lockTimeout()), w.reattach)
		})
		if err == nil {
			return nil
		}
		e := w.newError("workspace new", err, nil)
		if !errors.Is(e, ErrStateLocked) || time.Now().After(deadline) {
			return e
		}
		wait := min(50*time.Millisecond<<attempt, time.Second)
		wait += time.Duration(rand.Int64N(int64(wait))) //nolint:gosec // jitter, not a secret
		if !sleep.For(ctx, wait) {
			return e
		}
	}
}

// initFingerprint hashes what `terraform init` depends on: the terraform
// blocks (providers, backend), module sources and versions, the lock file
// and the names of the backend's environment variables. Module inputs are
// left out, so changing a port never costs an init.
func initFingerprint(files map[string][]byte, lock []byte, env map[string]string) (string, error) {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".tf") {
			continue
		}
		f, diags := hclsyntax.ParseConfig(files[name], name, hcl.InitialPos)
		if diags.HasErrors() {
			return "", fmt.Errorf("parse %s: %s", name, diags.Error())
		}
		body := f.Body.(*hclsyntax.Body)
		for _, b := range body.Blocks {
			switch b.Type {
			case "terraform":
				h.Write(b.Range().SliceBytes(files[name]))
			case "module":
				for _, attr := range []string{"source", "version"} {
					if a, ok := b.Body.Attributes[attr]; ok {
						h.Write(a.Expr.Range().SliceBytes(files[name]))
					}
				}
			}
			h.Write([]byte{0})
		}
	}
	h.Write(lock)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		h.Write([]byte(k + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncFiles makes the *.tf / *.tfvars files of dir exactly files.
func syncFiles(dir string, files map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json") || strings.HasSuffix(name, ".tfvars")) {
			continue
		}
		if _, keep := files[name]; !keep {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, data := range files {
		if filepath.Base(name) != name || strings.HasPrefix(name, ".") {
			return fmt.Errorf("invalid file name %q", name)
		}
		if err := writeIfChanged(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeIfChanged replaces path atomically when its content differs.
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil { //nolint:gosec // paths inside the controller's own work directory
		return err
	}
	return os.Rename(tmp, path)
}
