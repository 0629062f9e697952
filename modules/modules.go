// Package modules ships the Terraform modules the renderer calls
// (loadbalancer, certificates, routes, targetpools, address, ruleset) inside the binary, so the default
// module source is a local path that needs no registry or network.
package modules

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

//go:embed loadbalancer certificates routes targetpools address ruleset
var files embed.FS

// Module directory names, as written by WriteTo.
const (
	LoadBalancer = "loadbalancer"
	Routes       = "routes"
	TargetPools  = "targetpools"
	Certificates = "certificates"
	Address      = "address"
	RuleSet      = "ruleset"
)

// Names lists the shipped modules.
var Names = []string{LoadBalancer, Certificates, Routes, TargetPools, Address, RuleSet}

// FS returns the embedded module tree (loadbalancer/…, routes/…,
// targetpools/…, address/…, ruleset/…).
func FS() fs.FS { return files }

// Paths are the materialised module directories.
type Paths struct {
	LoadBalancer string
	Routes       string
	TargetPools  string
	Certificates string
	Address      string
	RuleSet      string
}

// All is every module's directory.
func (p Paths) All() []string {
	return []string{p.LoadBalancer, p.Certificates, p.Routes, p.TargetPools, p.Address, p.RuleSet}
}

// WriteTo materialises the modules into dir/loadbalancer, dir/routes,
// dir/targetpools, dir/certificates, dir/address and dir/ruleset.
// Files whose content already matches are left alone (so timestamps, and
// anything watching them, only move when the shipped modules change), and
// files the shipped modules no longer have are removed. Safe to call again
// and from concurrent processes: every write is a rename.
func WriteTo(dir string) (Paths, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Paths{}, fmt.Errorf("write modules to %s: %w", dir, err)
	}
	for _, name := range Names {
		if err := syncModule(abs, name); err != nil {
			return Paths{}, fmt.Errorf("write module %s to %s: %w", name, abs, err)
		}
	}
	return Paths{
		LoadBalancer: filepath.Join(abs, LoadBalancer),
		Routes:       filepath.Join(abs, Routes),
		TargetPools:  filepath.Join(abs, TargetPools),
		Certificates: filepath.Join(abs, Certificates),
		Address:      filepath.Join(abs, Address),
		RuleSet:      filepath.Join(abs, RuleSet),
	}, nil
}

func syncModule(root, name string) error {
	want, err := moduleFiles(name)
	if err != nil {
		return err
	}
	dst := filepath.Join(root, name)
	if err := os.MkdirAll(dst, 0o755); err != nil { //nolint:gosec // inside the controller's 0700 work directory; terraform reads them
		return err
	}
	for rel, data := range want {
		if err := writeIfChanged(filepath.Join(dst, filepath.FromSlash(rel)), data); err != nil {
			return err
		}
	}
	return removeStale(dst, want)
}

// moduleFiles maps slash paths relative to the module dir to contents.
func moduleFiles(name string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := strings.CutPrefix(p, name+"/")
		out[rel] = data
		return nil
	})
	return out, err
}

func writeIfChanged(file string, data []byte) error {
	if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil { //nolint:gosec // inside the controller's 0700 work directory; terraform reads them
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-"+filepath.Base(file)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// removeStale deletes regular files under dst that the module no longer
// ships. Dot-entries (.terraform, editor files) are not ours and are kept.
func removeStale(dst string, want map[string][]byte) error {
	return filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dst && d.Name()[0] == '.' {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dst, p)
		if err != nil {
			return err
		}
		if _, ok := want[filepath.ToSlash(rel)]; !ok {
			return os.Remove(p) //nolint:gosec // the controller's own work directory: nobody else writes there
		}
		return nil
	})
}

var digest = sync.OnceValue(func() string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	slices.Sort(names)
	for _, n := range names {
		data, _ := files.ReadFile(n)
		fmt.Fprintf(h, "%d:%s%d:", len(n), n, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
})

// Digest is a sha256 over every shipped module file (names and contents).
// Put it where a change of the shipped modules must be noticed, e.g. in the
// rendered root module's header, so an upgrade re-plans every workspace.
func Digest() string { return digest() }
