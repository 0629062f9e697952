package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/redact"
)

// ErrStateConflict means both the source and the destination of a move
// hold resources and are not copies of one state: nothing was moved or
// deleted, a person must decide (docs/state.md, "Migration").
var ErrStateConflict = errors.New("both states hold resources and their lineages differ")

// moveDir holds the scratch directories of moves; validKey refuses keys
// starting with '.', so it never is a workspace.
const moveDir = ".move"

// MoveState moves an object's state from the location of from (a legacy
// key) to that of to, with terraform itself: `state pull` from one,
// `state push` to the other, then the source is deleted. It reports
// whether a state was moved; a source without resources is deleted and
// reported as not moved.
//
// Only the backend blocks of the jobs' files are used: the commands run in
// scratch directories holding just `terraform { backend … }`, so init
// installs no provider and no module, and to's workspace directory is not
// touched. to's workspace lock is held throughout.
//
// It is idempotent and crash-safe. The destination is written before the
// source is deleted, and the source is deleted only once the destination
// reads back with the source's lineage and at least its serial. After a
// crash between the two, both hold the same state (same lineage): the next
// MoveState finds the copy, skips the push and deletes the source. A
// destination that holds resources of another lineage is never
// overwritten: ErrStateConflict, and both states stay.
//
// The caller must not run to's job before MoveState succeeded, and the
// source must not be written meanwhile (no older controller running).
func (r *Runner) MoveState(ctx context.Context, from, to Job) (moved bool, err error) {
	for _, k := range []string{from.Key, to.Key} {
		if err := validKey(k); err != nil {
			return false, err
		}
	}
	if from.Key == to.Key {
		return false, fmt.Errorf("move state: source and destination are both %q", to.Key)
	}
	_, release, err := r.acquire(ctx, to.Key)
	if err != nil {
		return false, err
	}
	defer release()

	scrub := redact.New(append(r.secrets(from.Env), r.secrets(to.Env)...)...)
	src, err := r.scratch(ctx, from, "from", scrub)
	if err != nil {
		return false, err
	}
	defer src.remove()
	if ok, err := src.selectWorkspace(ctx, false); err != nil || !ok {
		return false, err // no such pg workspace: nothing to move
	}
	have, raw, err := src.pull(ctx)
	if err != nil {
		return false, err
	}
	if have.empty() {
		// Nothing to own: just remove it, so it is not looked at again.
		klog.V(2).InfoS("legacy state holds no resources, deleting it", "from", from.Key, "to", to.Key)
		return false, r.deleteSource(ctx, src, from, have, raw)
	}
	dst, err := r.scratch(ctx, to, "to", scrub)
	if err != nil {
		return false, err
	}
	defer dst.remove()
	if _, err := dst.selectWorkspace(ctx, true); err != nil {
		return false, err
	}
	there, _, err := dst.pull(ctx)
	if err != nil {
		return false, err
	}
	switch {
	case there.empty():
		if there.Lineage == "" {
			// No state at all. A remote backend (http, kubernetes) then
			// gives a pushed state a new lineage, which would hide the
			// copy from a retry after a crash: push an empty state first,
			// so the real one goes over an existing state and keeps its
			// lineage.
			seed, err := emptied(raw)
			if err != nil {
				return false, fmt.Errorf("move state: %q: %w", from.Key, err)
			}
			if err := dst.push(ctx, seed, false); err != nil {
				return false, err
			}
		}
		if err := dst.push(ctx, raw, true); err != nil {
			return false, err
		}
	case there.Lineage == have.Lineage && there.Serial >= have.Serial:
		// Copied before a crash: only the source is left to delete.
		klog.InfoS("state already copied, deleting the source", "from", from.Key, "to", to.Key, "lineage", have.Lineage)
	case there.Lineage == have.Lineage:
		// An older copy of the same state: the newer one goes over it.
		if err := dst.push(ctx, raw, false); err != nil {
			return false, err
		}
	default:
		return false, fmt.Errorf("move state from %q to %q: %w (%d and %d resources, lineages %q and %q)",
			from.Key, to.Key, ErrStateConflict, len(have.Resources), len(there.Resources), have.Lineage, there.Lineage)
	}
	// Read it back before deleting the only other copy.
	check, _, err := dst.pull(ctx)
	if err != nil {
		return false, err
	}
	if check.Lineage != have.Lineage || check.Serial < have.Serial || len(check.Resources) == 0 {
		return false, fmt.Errorf("move state from %q to %q: the destination reads back lineage %q serial %d with %d resources, want lineage %q serial %d: source kept",
			from.Key, to.Key, check.Lineage, check.Serial, len(check.Resources), have.Lineage, have.Serial)
	}
	if err := r.deleteSource(ctx, src, from, have, raw); err != nil {
		return false, err
	}
	klog.InfoS("state moved to its new key", "from", from.Key, "to", to.Key, "resources", len(have.Resources), "lineage", have.Lineage, "serial", have.Serial)
	return true, nil
}

// deleteSource deletes the source state and its workspace directory.
func (r *Runner) deleteSource(ctx context.Context, src *scratchDir, from Job, have stateHeader, raw []byte) error {
	switch {
	case from.CLIWorkspace != "" && from.CLIWorkspace != "default":
		// pg: the state is the workspace (-force: it is not empty).
		if err := src.run("workspace select", func() error { return src.tf.WorkspaceSelect(ctx, "default") }); err != nil {
			return err
		}
		if err := src.run("workspace delete", func() error { return src.tf.WorkspaceDelete(ctx, from.CLIWorkspace, tfexec.Force(true)) }); err != nil {
			return err
		}
	case from.DeleteState != nil:
		if err := from.DeleteState(ctx); err != nil {
			return fmt.Errorf("move state: delete source %q: %w", from.Key, err)
		}
	case !have.empty():
		// A backend the CCM cannot delete a state of (every one it
		// configures can): leave an empty state in its place, the next
		// serial of the same lineage, so it is never moved again.
		empty, err := emptied(raw)
		if err != nil {
			return fmt.Errorf("move state: empty source %q: %w", from.Key, err)
		}
		if err := src.push(ctx, empty, false); err != nil {
			return err
		}
	}
	// The legacy workspace directory (plans, records of the old key) is
	// of no use any more; skipped if this process uses it.
	dir := filepath.Join(r.cfg.WorkDir, from.Key)
	r.mu.Lock()
	_, inUse := r.ws[from.Key]
	r.mu.Unlock()
	if !inUse {
		if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			klog.ErrorS(err, "cannot remove legacy workspace directory", "dir", dir)
		}
	}
	return nil
}

// stateHeader is what a move looks at in a state file.
type stateHeader struct {
	Serial    uint64            `json:"serial"`
	Lineage   string            `json:"lineage"`
	Resources []json.RawMessage `json:"resources"`
}

// empty is true for no state at all, or one without resources.
func (s stateHeader) empty() bool { return len(s.Resources) == 0 }

// emptied is raw without resources or outputs, at the next serial.
func emptied(raw []byte) ([]byte, error) {
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	serial, _ := st["serial"].(float64)
	st["serial"] = serial + 1
	st["resources"] = []any{}
	st["outputs"] = map[string]any{}
	delete(st, "check_results")
	return json.Marshal(st)
}

// scratchDir is a directory holding only a job's backend block, with its
// own terraform handle in the job's environment.
type scratchDir struct {
	r     *Runner
	job   Job
	dir   string
	tf    *tfexec.Terraform
	scrub *redact.Scrubber
	// stderr collects the running command's diagnostics.
	stderr bytes.Buffer
}

func (r *Runner) scratch(ctx context.Context, job Job, side string, scrub *redact.Scrubber) (*scratchDir, error) {
	main, err := backendOnly(job.Files)
	if err != nil {
		return nil, fmt.Errorf("move state: %s %q: %w", side, job.Key, err)
	}
	dir := filepath.Join(r.cfg.WorkDir, moveDir, side+"-"+job.Key)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &scratchDir{r: r, job: job, dir: dir, scrub: scrub}
	fail := func(err error) (*scratchDir, error) { s.remove(); return nil, err }
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), main, 0o600); err != nil {
		return fail(err)
	}
	if s.tf, err = r.handle(ctx, dir); err != nil {
		return fail(err)
	}
	if err := s.tf.SetEnv(r.env(job.Env)); err != nil {
		return fail(err)
	}
	s.tf.SetStderr(&s.stderr)
	if err := s.run("init", func() error { return s.tf.Init(ctx, tfexec.Reconfigure(true), tfexec.Upgrade(false)) }); err != nil {
		return fail(err)
	}
	return s, nil
}

func (s *scratchDir) remove() { _ = os.RemoveAll(s.dir) }

// run runs one terraform command; a failure is an *Error with terraform's
// diagnostics, scrubbed.
func (s *scratchDir) run(op string, fn func() error) error {
	s.stderr.Reset()
	err := s.r.exec(strings.Fields(op)[0], fn)
	if err == nil {
		return nil
	}
	diags := s.stderr.String()
	if strings.TrimSpace(diags) == "" {
		diags = err.Error()
	}
	return &Error{Op: op, Workspace: s.job.Key, Diagnostics: strings.TrimSpace(s.scrub.String(explainEncryption(diags))), Err: err}
}

// selectWorkspace selects the job's named workspace (pg), creating it if
// create is set; it reports false when it does not exist.
func (s *scratchDir) selectWorkspace(ctx context.Context, create bool) (bool, error) {
	name := s.job.CLIWorkspace
	if name == "" || name == "default" {
		return true, nil
	}
	var list []string
	if err := s.run("workspace list", func() (err error) { list, _, err = s.tf.WorkspaceList(ctx); return err }); err != nil {
		return false, err
	}
	switch {
	case slices.Contains(list, name):
		return true, s.run("workspace select", func() error { return s.tf.WorkspaceSelect(ctx, name) })
	case create:
		return true, s.run("workspace new", func() error { return s.tf.WorkspaceNew(ctx, name) })
	}
	return false, nil
}

// pull reads the state; no state at all is a zero header and no bytes.
func (s *scratchDir) pull(ctx context.Context) (stateHeader, []byte, error) {
	var out string
	if err := s.run("state pull", func() (err error) { out, err = s.tf.StatePull(ctx); return err }); err != nil {
		return stateHeader{}, nil, err
	}
	var h stateHeader
	if strings.TrimSpace(out) == "" {
		return h, nil, nil
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		return h, nil, fmt.Errorf("move state: %q: state pull printed no state: %w", s.job.Key, err)
	}
	return h, []byte(out), nil
}

// push writes raw as the state, holding the state lock; force replaces a
// state of another lineage (checked to be empty by the caller).
func (s *scratchDir) push(ctx context.Context, raw []byte, force bool) error {
	file := filepath.Join(s.dir, "push.tfstate")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		return err
	}
	defer os.Remove(file)
	return s.run("state push", func() error {
		return s.tf.StatePush(ctx, file, tfexec.Force(force), tfexec.Lock(true), tfexec.LockTimeout(s.r.lockTimeout()))
	})
}

// backendOnly returns a root module holding just the terraform backend
// block of files (copied token for token), or an error if there is none.
func backendOnly(files map[string][]byte) ([]byte, error) {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".tf") {
			continue
		}
		f, diags := hclwrite.ParseConfig(files[name], name, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parse %s: %s", name, diags.Error())
		}
		for _, tb := range f.Body().Blocks() {
			if tb.Type() != "terraform" {
				continue
			}
			for _, b := range tb.Body().Blocks() {
				if b.Type() != "backend" {
					continue
				}
				out := hclwrite.NewEmptyFile()
				out.Body().AppendNewBlock("terraform", nil).Body().AppendBlock(b)
				return hclwrite.Format(out.Bytes()), nil
			}
		}
	}
	return nil, errors.New("no terraform backend block: nothing locates the state")
}
