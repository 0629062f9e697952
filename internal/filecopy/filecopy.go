// Package filecopy copies files and trees: the runner's copied
// initialisations (.terraform with its provider links) and the PostgreSQL
// harness's data directory template.
package filecopy

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File copies from into a new file to (which must not exist) with mode.
func File(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TreeOptions are what a tree copy leaves out and does after each entry.
type TreeOptions struct {
	// Skip names top-level entries (relative to from) to leave out.
	Skip map[string]bool
	// Copied, when set, is called with each path made under to, the
	// top directory first (to hand ownership over, say).
	Copied func(path string) error
}

// Tree copies the directory from to to: directories (made owner-writable
// so the copy can be filled), symlinks as links (installed providers point
// into a mirror) and regular files, whose modes it keeps. Files must not
// exist yet under to; anything else (a socket, a device) is an error.
func Tree(from, to string, o TreeOptions) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if o.Skip[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(to, rel)
		if err := entry(path, dst, d); err != nil {
			return err
		}
		if o.Copied != nil {
			return o.Copied(dst)
		}
		return nil
	})
}

// entry copies one walked entry at path to dst.
func entry(path, dst string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		return os.MkdirAll(dst, info.Mode().Perm()|0o700)
	case d.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case d.Type().IsRegular():
		return File(path, dst, info.Mode().Perm())
	}
	return fmt.Errorf("%s: not a file, directory or symlink", path)
}
