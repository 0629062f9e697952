package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-version"
	install "github.com/hashicorp/hc-install"
	"github.com/hashicorp/hc-install/fs"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"github.com/hashicorp/hc-install/src"
)

// DefaultTerraformVersion is the version looked for on PATH (and installed
// when downloads are allowed) when no explicit binary is configured.
const DefaultTerraformVersion = "1.11.4"

// BinaryConfig says where terraform comes from.
type BinaryConfig struct {
	// Path is an explicit terraform binary; it wins when set.
	Path string
	// Version is the exact version wanted from PATH or a download.
	Version string
	// InstallDir, when set, allows downloading Version from
	// releases.hashicorp.com into this directory if it is not on PATH.
	InstallDir string
}

// FindTerraform locates terraform with hc-install: the configured path,
// else the exact version on PATH, else (when InstallDir allows it) a
// download of that version. Lookups on disk never touch the network.
func FindTerraform(ctx context.Context, c BinaryConfig) (string, error) {
	if c.Path != "" {
		if _, err := os.Stat(c.Path); err != nil {
			return "", fmt.Errorf("terraform binary %s: %w", c.Path, err)
		}
		return c.Path, nil
	}
	want := c.Version
	if want == "" {
		want = DefaultTerraformVersion
	}
	v, err := version.NewVersion(want)
	if err != nil {
		return "", fmt.Errorf("terraform version %q: %w", want, err)
	}
	local := &fs.ExactVersion{Product: product.Terraform, Version: v}
	sources := []src.Source{local}
	where := "on PATH"
	if c.InstallDir != "" {
		// A version downloaded earlier is found without the network.
		local.ExtraPaths = []string{c.InstallDir}
		where = "on PATH, in " + c.InstallDir + " or by download"
		if err := os.MkdirAll(c.InstallDir, 0o755); err != nil { //nolint:gosec // terraform installs are world-readable binaries
			return "", fmt.Errorf("terraform install dir: %w", err)
		}
		sources = append(sources, &releases.ExactVersion{Product: product.Terraform, Version: v, InstallDir: c.InstallDir})
	}
	path, err := install.NewInstaller().Ensure(ctx, sources)
	if err != nil {
		return "", fmt.Errorf("find terraform %s (%s): %w", v, where, err)
	}
	return path, nil
}
