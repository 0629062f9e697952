package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"
)

// erroredState is where terraform leaves a state it could not write to
// the backend (the backend went down during an apply): the only record of
// what that apply created.
const erroredState = "errored.tfstate"

// recoverErrored pushes a state an earlier apply could not persist to the
// backend, before anything plans from the backend's older state (which
// would create again what the lost state holds). It fails, and so does
// the run, while the push fails.
func (r *Runner) recoverErrored(ctx context.Context, w *workspace) error {
	path := filepath.Join(w.dir, erroredState)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	err := r.exec("state push", func() error { return w.tf.StatePush(ctx, path, tfexec.LockTimeout(r.lockTimeout())) })
	if err != nil {
		return w.newError("state push", fmt.Errorf("%s holds what an earlier apply could not write to the backend: %w", erroredState, err), nil)
	}
	klog.InfoS("pushed the state an interrupted apply could not persist", "workspace", w.key)
	return os.Remove(path)
}

// Import brings an existing object into the job's state at address
// (terraform import: the state only, nothing changes in the cloud).
func (r *Runner) Import(ctx context.Context, job Job, address, id string) error {
	w, release, err := r.acquireJob(ctx, job)
	if err != nil {
		return err
	}
	defer release()
	if err := r.prepare(ctx, w, job); err != nil {
		return err
	}
	if err := r.exec("import", func() error { return w.tf.Import(ctx, address, id, tfexec.LockTimeout(r.lockTimeout()), w.reattach) }); err != nil {
		return w.newError("import", err, nil)
	}
	_ = w.clearLastApply() // the state changed under the last apply
	klog.InfoS("terraform import", "workspace", w.key, "address", address, "id", id)
	return nil
}
