// Package podfs gives a pod's process the files its volumes hold where
// its container would see them (/etc/secret-volume/tls.crt), without
// touching the host's: the process has a mount namespace of its own
// (syscall.CLONE_NEWNS), where the top directory of each mount path is
// overlaid with a directory of the pod's (so a missing /etc/secret-volume
// can be made) and the volume's files are bound there. The pod runner
// (internal/clustertraffic) writes the files; the process mounts them
// first thing (cmd/example-echo).
package podfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Mount is one volume mount: the host directory holding the volume's
// files, and where the container sees them.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Encode is ms as Env's value.
func Encode(ms []Mount) (string, error) {
	b, err := json.Marshal(ms)
	return string(b), err
}

// Env names the variable that hands a process its Mounts (JSON); Scratch
// names the directory its overlays keep their changes in.
const (
	Env     = "EXAMPLE_POD_MOUNTS"
	Scratch = "EXAMPLE_POD_SCRATCH"
)

// FromEnv mounts what Env names, if anything: call it first thing, in a
// process started in a mount namespace of its own.
func FromEnv() error {
	v := os.Getenv(Env)
	if v == "" {
		return nil
	}
	var ms []Mount
	if err := json.Unmarshal([]byte(v), &ms); err != nil {
		return fmt.Errorf("podfs: %s: %w", Env, err)
	}
	return Apply(ms, os.Getenv(Scratch))
}

// Apply makes ms seen, keeping overlay changes under scratch.
func Apply(ms []Mount, scratch string) error {
	if len(ms) == 0 {
		return nil
	}
	if scratch == "" {
		return errors.New("podfs: no scratch directory")
	}
	// Nothing mounted here reaches the host's mount namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("podfs: make / private (is this process in a mount namespace of its own?): %w", err)
	}
	overlaid := map[string]bool{}
	for _, m := range ms {
		if !filepath.IsAbs(m.Target) || filepath.Clean(m.Target) == "/" {
			return fmt.Errorf("podfs: mount path %q: want an absolute path below /", m.Target)
		}
		top := "/" + strings.SplitN(strings.TrimPrefix(filepath.Clean(m.Target), "/"), "/", 2)[0]
		if !overlaid[top] {
			if err := overlay(top, filepath.Join(scratch, strings.TrimPrefix(top, "/"))); err != nil {
				return err
			}
			overlaid[top] = true
		}
		if err := os.MkdirAll(m.Target, 0o755); err != nil {
			return fmt.Errorf("podfs: %w", err)
		}
		if err := syscall.Mount(m.Source, m.Target, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("podfs: bind %s on %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := syscall.Mount("", m.Target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("podfs: %s read-only: %w", m.Target, err)
			}
		}
	}
	return nil
}

// overlay makes top writable in this mount namespace only, its changes
// kept under dir.
func overlay(top, dir string) error {
	if fi, err := os.Stat(top); err != nil || !fi.IsDir() {
		return fmt.Errorf("podfs: %s: a mount path's top directory must exist on the host (%v)", top, err)
	}
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("podfs: %w", err)
		}
	}
	opts := "lowerdir=" + top + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", top, "overlay", 0, opts); err != nil {
		return fmt.Errorf("podfs: overlay %s: %w", top, err)
	}
	return nil
}
