package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"

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
		// An earlier push may have landed with its answer lost: the
		// backend then holds the same state under a higher serial (or a
		// new lineage), which every later push is refused over.
		if r.inBackend(ctx, w, path) {
			klog.InfoS("the state an interrupted apply could not persist is in the backend already", "workspace", w.key)
			return os.Remove(path)
		}
		return w.newError("state push", fmt.Errorf("%s holds what an earlier apply could not write to the backend: %w", erroredState, err), nil)
	}
	klog.InfoS("pushed the state an interrupted apply could not persist", "workspace", w.key)
	return os.Remove(path)
}

// inBackend reports whether the backend's state (terraform state pull)
// already holds all the state file at path does: the same resources and
// outputs. Its serial and lineage may differ: terraform numbers a pushed
// copy anew, and gives one pushed into an empty backend a new lineage.
// Anything else, or a failure to read either, is not: the file is kept.
func (r *Runner) inBackend(ctx context.Context, w *workspace, path string) bool {
	local, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var remote string
	if err := r.exec("state pull", func() (err error) { remote, err = w.tf.StatePull(ctx); return err }); err != nil {
		return false
	}
	return sameContent(local, []byte(remote))
}

// stateContent is what sameContent compares of two states.
type stateContent struct {
	Outputs   any `json:"outputs"`
	Resources any `json:"resources"`
}

// sameContent reports whether the states a and b hold the same resources
// and outputs; when either is not a state (no state is ""), they do not.
func sameContent(a, b []byte) bool {
	var sa, sb stateContent
	if json.Unmarshal(a, &sa) != nil || json.Unmarshal(b, &sb) != nil {
		return false
	}
	return reflect.DeepEqual(sa, sb)
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
	// The state changes under the last apply, even if this process dies
	// before the import returns.
	if err := w.clearLastApply(); err != nil {
		return err
	}
	if err := r.exec("import", func() error { return w.tf.Import(ctx, address, id, tfexec.LockTimeout(r.lockTimeout()), w.reattach) }); err != nil {
		return w.newError("import", err, nil)
	}
	klog.InfoS("terraform import", "workspace", w.key, "address", address, "id", id)
	return nil
}

// Instance is one resource instance in a state.
type Instance struct {
	// Address is the instance's address, e.g.
	// module.certificates.example_certificate.this["web-tls"].
	Address string
	// ID is its id attribute.
	ID string
}

// Managed lists the managed resource instances of type typ in the job's
// state (terraform state pull: one process, no provider); none when there
// is no state.
func (r *Runner) Managed(ctx context.Context, job Job, typ string) ([]Instance, error) {
	w, release, err := r.acquireJob(ctx, job)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	var out string
	if err := r.exec("state pull", func() (err error) { out, err = w.tf.StatePull(ctx); return err }); err != nil {
		return nil, w.newError("state pull", err, nil)
	}
	return instancesOf([]byte(out), typ)
}

// rawState is what instancesOf reads of a state (format version 4).
type rawState struct {
	Resources []struct {
		Module    string `json:"module"`
		Mode      string `json:"mode"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			IndexKey   any `json:"index_key"`
			Attributes struct {
				ID string `json:"id"`
			} `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// instancesOf lists the managed instances of type typ in a pulled state.
func instancesOf(raw []byte, typ string) ([]Instance, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var s rawState
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var out []Instance
	for _, res := range s.Resources {
		if res.Mode != "managed" || res.Type != typ {
			continue
		}
		prefix := res.Type + "." + res.Name
		if res.Module != "" {
			prefix = res.Module + "." + prefix
		}
		for _, in := range res.Instances {
			addr := prefix
			switch k := in.IndexKey.(type) {
			case string:
				addr += "[" + strconv.Quote(k) + "]"
			case float64:
				addr += "[" + strconv.FormatFloat(k, 'f', -1, 64) + "]"
			}
			out = append(out, Instance{Address: addr, ID: in.Attributes.ID})
		}
	}
	return out, nil
}
