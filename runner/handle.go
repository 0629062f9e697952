package runner

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"unsafe"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"
)

// versionCache is the terraform binary's version, learnt once per runner.
//
// terraform-exec checks the binary's version before the first command of
// each handle (`terraform version -json`, a process of ~0.1 s), and the
// runner has a handle per workspace: that was one process more for every
// object created, and one after every restart. A runner drives one binary,
// so it asks once, on the first command it runs (a controller that starts
// with nothing to change starts no process), and hands the answer to every
// handle.
type versionCache struct {
	mu sync.Mutex
	v  *version.Version
}

// binaryVersion returns the binary's version, running `terraform version`
// the first time.
func (r *Runner) binaryVersion(ctx context.Context) (*version.Version, error) {
	r.version.mu.Lock()
	defer r.version.mu.Unlock()
	if r.version.v != nil {
		return r.version.v, nil
	}
	tf, err := tfexec.NewTerraform(os.TempDir(), r.terraform)
	if err != nil {
		return nil, fmt.Errorf("terraform binary %s: %w", r.terraform, err)
	}
	if err := tf.SetEnv(r.env(nil)); err != nil {
		return nil, fmt.Errorf("terraform binary %s: %w", r.terraform, err)
	}
	var v *version.Version
	err = r.exec("version", func() (err error) { v, _, err = tf.Version(ctx, true); return err })
	if err != nil {
		return nil, fmt.Errorf("terraform version of %s: %w", r.terraform, err)
	}
	r.version.v = v
	return v, nil
}

// newHandle returns a terraform-exec handle on dir, without its version:
// give it one (setVersion) before its first command.
func (r *Runner) newHandle(dir string) (*tfexec.Terraform, error) {
	tf, err := tfexec.NewTerraform(dir, r.terraform)
	if err != nil {
		return nil, err
	}
	return tf, tf.SetDisablePluginTLS(true)
}

// handle returns a handle on dir for commands about to run: it knows the
// binary's version.
func (r *Runner) handle(ctx context.Context, dir string) (*tfexec.Terraform, error) {
	tf, err := r.newHandle(dir)
	if err != nil {
		return nil, err
	}
	return tf, r.setVersion(ctx, tf)
}

// versioned gives the workspace's handle the binary's version before its
// first command. Every workspace command comes after prepare or inside
// withLockRecovery, which call it: an operation that ends without
// terraform (nothing changed, nothing stored) runs no version check.
func (r *Runner) versioned(ctx context.Context, w *workspace) error {
	if w.versioned {
		return nil
	}
	if err := r.setVersion(ctx, w.tf); err != nil {
		return fmt.Errorf("workspace %s: %w", w.key, err)
	}
	w.versioned = true
	return nil
}

func (r *Runner) setVersion(ctx context.Context, tf *tfexec.Terraform) error {
	v, err := r.binaryVersion(ctx)
	if err != nil {
		return err
	}
	if !presetVersion(tf, v) {
		versionNotPreset.Do(func() {
			klog.InfoS("terraform-exec's handle has changed: every workspace checks the terraform version itself (one process more per workspace)")
		})
	}
	return nil
}

var versionNotPreset sync.Once

// presetVersion stores v as the version tf would learn from its binary.
// terraform-exec offers no way to share a version check between handles
// (nor to change a handle's directory), so this writes the cache field
// its Version method fills (execVersion). It reports false, changing
// nothing, when the field is not there with that type (a terraform-exec
// that changed): the handle then checks for itself, as before. A test
// pins the layout (TestPresetVersion).
func presetVersion(tf *tfexec.Terraform, v *version.Version) bool {
	f := reflect.ValueOf(tf).Elem().FieldByName("execVersion")
	if !f.IsValid() || f.Type() != reflect.TypeOf(v) {
		return false
	}
	// The field is unexported: reflect reads it but sets it only through
	// its address. tf is new and not yet shared, so nothing races.
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(v)) //nolint:gosec // G103: see above; layout checked before and pinned by a test
	return true
}
