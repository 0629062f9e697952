package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/hashicorp/go-version"
	install "github.com/hashicorp/hc-install"
	"github.com/hashicorp/hc-install/fs"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/releases"
	"github.com/hashicorp/hc-install/src"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// DefaultTerraformVersion is the version looked for on PATH (and installed
// when downloads are allowed) when no explicit binary is configured.
const DefaultTerraformVersion = "1.11.4"

// Distribution is the command-line tool the runner drives: Terraform or
// OpenTofu, whose CLI (commands, flags, -json streams, plan files, CLI
// config, lock file, TF_* variables) terraform-exec drives the same way.
type Distribution string

const (
	// DistributionTerraform is HashiCorp Terraform (the default).
	DistributionTerraform Distribution = "terraform"
	// DistributionTofu is OpenTofu.
	DistributionTofu Distribution = "tofu"
)

// Distributions lists the accepted distributions.
var Distributions = []Distribution{DistributionTerraform, DistributionTofu}

// BinaryConfig says where terraform (or tofu) comes from.
type BinaryConfig struct {
	// Distribution is terraform (default, "") or tofu.
	Distribution Distribution
	// Path is an explicit binary; it wins when set.
	Path string
	// Version is the exact version wanted from PATH or a download. With
	// tofu it is only checked against the binary found (tofu version).
	Version string
	// InstallDir, when set, allows downloading Version from
	// releases.hashicorp.com into this directory if it is not on PATH.
	// Terraform only: hc-install cannot install OpenTofu.
	InstallDir string
}

// FindBinary locates the distribution's binary: FindTerraform for terraform,
// FindTofu for tofu. The version is the binary's where finding it ran it
// (one process), nil where it did not: a configured path is not run until
// the runner's first command.
func FindBinary(ctx context.Context, c BinaryConfig) (string, *version.Version, error) {
	switch c.Distribution {
	case "", DistributionTerraform:
		return FindTerraform(ctx, c)
	case DistributionTofu:
		return FindTofu(ctx, c)
	}
	return "", nil, fmt.Errorf("distribution %q: want %q or %q", c.Distribution, DistributionTerraform, DistributionTofu)
}

// FindTofu locates OpenTofu: the configured path, else tofu on PATH.
// hc-install cannot install it, so there is no download. A configured
// Version is checked against `tofu version -json` (one process), which is
// then the version returned.
func FindTofu(ctx context.Context, c BinaryConfig) (string, *version.Version, error) {
	path, err := tofuPath(c, exec.LookPath)
	if err != nil {
		return "", nil, err
	}
	if c.Version == "" {
		return path, nil, nil
	}
	tf, err := tfexec.NewTerraform(os.TempDir(), path)
	if err != nil {
		return "", nil, fmt.Errorf("tofu binary %s: %w", path, err)
	}
	got, _, err := tf.Version(ctx, true)
	if err != nil {
		return "", nil, fmt.Errorf("tofu version of %s: %w", path, err)
	}
	if err := sameVersion(c.Version, got); err != nil {
		return "", nil, fmt.Errorf("tofu binary %s: %w", path, err)
	}
	return path, got, nil
}

// tofuPath is where tofu is, without running it.
func tofuPath(c BinaryConfig, lookPath func(string) (string, error)) (string, error) {
	if c.InstallDir != "" {
		return "", errors.New("tofu: an install dir is not supported (hc-install installs only HashiCorp products): give the binary's path or put tofu on PATH")
	}
	if c.Path != "" {
		if _, err := os.Stat(c.Path); err != nil {
			return "", fmt.Errorf("tofu binary %s: %w", c.Path, err)
		}
		return c.Path, nil
	}
	path, err := lookPath("tofu")
	if err != nil {
		return "", fmt.Errorf("find tofu on PATH (no binary configured): %w", err)
	}
	return path, nil
}

// sameVersion checks a binary's version against the one configured.
func sameVersion(want string, got *version.Version) error {
	w, err := version.NewVersion(want)
	if err != nil {
		return fmt.Errorf("version %q: %w", want, err)
	}
	if !w.Equal(got) {
		return fmt.Errorf("is version %s, want %s", got, w)
	}
	return nil
}

// FindTerraform locates terraform with hc-install: the configured path,
// else the exact version on PATH, else (when InstallDir allows it) a
// download of that version. Lookups on disk never touch the network. The
// version is returned when hc-install checked it (it runs `terraform
// version` on what it finds); a configured path is not run.
func FindTerraform(ctx context.Context, c BinaryConfig) (string, *version.Version, error) {
	if c.Path != "" {
		if _, err := os.Stat(c.Path); err != nil {
			return "", nil, fmt.Errorf("terraform binary %s: %w", c.Path, err)
		}
		return c.Path, nil, nil
	}
	want := c.Version
	if want == "" {
		want = DefaultTerraformVersion
	}
	v, err := version.NewVersion(want)
	if err != nil {
		return "", nil, fmt.Errorf("terraform version %q: %w", want, err)
	}
	local := &fs.ExactVersion{Product: product.Terraform, Version: v}
	sources := []src.Source{local}
	where := "on PATH"
	if c.InstallDir != "" {
		// A version downloaded earlier is found without the network.
		local.ExtraPaths = []string{c.InstallDir}
		where = "on PATH, in " + c.InstallDir + " or by download"
		if err := os.MkdirAll(c.InstallDir, 0o755); err != nil { //nolint:gosec // terraform installs are world-readable binaries
			return "", nil, fmt.Errorf("terraform install dir: %w", err)
		}
		sources = append(sources, &releases.ExactVersion{Product: product.Terraform, Version: v, InstallDir: c.InstallDir})
	}
	path, err := install.NewInstaller().Ensure(ctx, sources)
	if err != nil {
		return "", nil, fmt.Errorf("find terraform %s (%s): %w", v, where, err)
	}
	return path, v, nil
}

// tofuSafeCache is the first OpenTofu whose plugin cache is safe for
// concurrent installs (it locks the cache; terraform's never is).
var tofuSafeCache = version.Must(version.NewVersion("1.10.0"))

// initsMustSerialise tells whether inits sharing a plugin cache must run one at
// a time with this binary: yes unless it is an OpenTofu from 1.10 on (its
// version tells; in doubt, yes).
func (r *Runner) initsMustSerialise(ctx context.Context) bool {
	dist := r.cfg.Terraform.Distribution
	if dist != DistributionTofu {
		return true
	}
	v, err := r.binaryVersion(ctx)
	return !cacheSafe(dist, v, err)
}

func cacheSafe(dist Distribution, v *version.Version, err error) bool {
	return dist == DistributionTofu && err == nil && v != nil && !v.Core().LessThan(tofuSafeCache)
}
