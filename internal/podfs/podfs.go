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
// names the directory its overlays keep their changes in; Exec names the
// command the process becomes once they are mounted, with its own
// arguments (example-echo starting a container of another image).
const (
	Env     = "EXAMPLE_POD_MOUNTS"
	Scratch = "EXAMPLE_POD_SCRATCH"
	Exec    = "EXAMPLE_POD_EXEC"
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
	// Never in the host's mount namespace (a process started without
	// CLONE_NEWNS that is handed Env would overlay the host's /etc).
	if own, err := ownMountNamespace(); err != nil || !own {
		return fmt.Errorf("podfs: this process shares its parent's mount namespace: start it with syscall.CLONE_NEWNS (%v)", err)
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
		// A symlink on the way (/var/run to /run) would lead the mount,
		// and the directories made for it, out of the overlay to the
		// host's own files.
		if err := within(top, m.Target); err != nil {
			return err
		}
		if err := os.MkdirAll(m.Target, 0o755); err != nil {
			return fmt.Errorf("podfs: %w", err)
		}
		if err := within(top, m.Target); err != nil {
			return err
		}
		if err := syscall.Mount(m.Source, m.Target, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("podfs: bind %s on %s: %w", m.Source, m.Target, err)
		}
		if m.ReadOnly {
			if err := readOnly(m.Target); err != nil {
				return err
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

// within refuses a target whose deepest existing directory resolves
// outside top.
func within(top, target string) error {
	p := target
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		p = filepath.Dir(p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("podfs: %s: %w", target, err)
	}
	if real != top && !strings.HasPrefix(real, top+"/") {
		return fmt.Errorf("podfs: mount path %s leads to %s, outside %s: refused", target, real, top)
	}
	return nil
}

// readOnly remounts target read-only, keeping the flags a user namespace
// may not drop (nosuid, nodev, noexec of the file system beneath).
func readOnly(target string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(target, &st); err != nil {
		return fmt.Errorf("podfs: %s: %w", target, err)
	}
	locked := uintptr(st.Flags) & (syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC)
	if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|locked, ""); err != nil {
		return fmt.Errorf("podfs: %s read-only: %w", target, err)
	}
	return nil
}

// ownMountNamespace tells whether this process's mount namespace is not
// its parent's.
func ownMountNamespace() (bool, error) {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return false, err
	}
	parent, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()))
	if errors.Is(err, os.ErrPermission) {
		// A user namespace of its own: the parent's is not ours to
		// read, and the host's mounts are not ours to change either.
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return self != parent, nil
}
