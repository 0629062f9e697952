package deploy

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The Helm chart (deploy/chart): the same objects as the base, with values.
// Its default values render exactly the base (deploy/chart_test.go).
//
//go:embed all:chart
var chartFiles embed.FS

// ChartRelease is the release name ChartObjects renders with; the chart's
// object names do not depend on it.
const ChartRelease = "example-ccm"

// ChartObjects renders the chart with `helm template` (helm is the path of
// the helm binary, hack/helm.sh builds it) and values over the chart's
// values.yaml, and decodes the result strictly, like the base. The release
// namespace is "default".
func ChartObjects(ctx context.Context, helm string, values map[string]any) ([]runtime.Object, error) {
	out, err := RenderChart(ctx, helm, values)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(out)
	if err != nil {
		return nil, fmt.Errorf("decode helm template output: %w", err)
	}
	return objs, nil
}

// RenderChart runs `helm template` on a copy of the embedded chart, so it
// works from any directory, and returns its YAML.
func RenderChart(ctx context.Context, helm string, values map[string]any, helmArgs ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "example-ccm-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	chart := filepath.Join(dir, "chart")
	if err := writeChart(chart); err != nil {
		return nil, err
	}
	args := append([]string{"template", ChartRelease, chart, "--namespace", "default"}, helmArgs...)
	if len(values) > 0 {
		data, err := yaml.Marshal(values)
		if err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		file := filepath.Join(dir, "values.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--values", file)
	}
	return runHelm(ctx, helm, dir, args...)
}

// runHelm runs helm with its config, cache and data homes under dir: it
// neither reads nor writes the user's.
func runHelm(ctx context.Context, helm, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, helm, args...) //nolint:gosec // helm is the binary the caller names
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// writeChart copies the embedded chart to dir.
func writeChart(dir string) error {
	return fs.WalkDir(chartFiles, "chart", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "chart")))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755) //nolint:gosec // a copy of the public chart
		}
		data, err := chartFiles.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644) //nolint:gosec // a copy of the public chart
	})
}
