// Package filecopy copies one regular file: the runner's copied
// initialisations and the PostgreSQL harness's data directory template
// both walk trees of their own (symlinks, ownership) and copy files with it.
package filecopy

import (
	"io"
	"io/fs"
	"os"
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
