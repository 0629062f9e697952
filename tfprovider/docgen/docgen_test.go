package docgen

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// TestDocsUpToDate fails when docs/provider differs from what
// `go run ./hack/gen-provider-docs` would write.
func TestDocsUpToDate(t *testing.T) {
	root := tftest.RepoRoot()
	pages, err := Generate(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	const hint = "; run `go run ./hack/gen-provider-docs`"
	for rel, want := range pages {
		got, err := os.ReadFile(filepath.Join(root, OutputDir, rel))
		if err != nil {
			t.Errorf("%s/%s is missing%s", OutputDir, rel, hint)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s is out of date%s", OutputDir, rel, hint)
		}
	}
	existing, err := Existing(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range existing {
		if _, ok := pages[rel]; !ok {
			t.Errorf("%s/%s is not generated any more%s", OutputDir, rel, hint)
		}
	}
}

// TestDocsCoverSchema: every page documents every attribute (a cheap
// guard against a renderer bug silently dropping some).
func TestDocsCoverSchema(t *testing.T) {
	pages, err := Generate(context.Background(), tftest.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	lb := string(pages["resources/example_load_balancer.md"])
	for _, want := range []string{"`listeners` (Attributes Map)", "`owner_tags` (Set of String)", "`proxy_protocol` (Boolean, Computed)",
		"`health_check` (Attributes)", "`allowed_source_cidrs` (Set of String)", "`ipv6` (String)",
		"## Import", "lb-0123456789abcdef", "## Example Usage"} {
		if !strings.Contains(lb, want) {
			t.Errorf("load balancer page lacks %q", want)
		}
	}
	tp := string(pages["resources/example_target_pool.md"])
	for _, want := range []string{"`targets` (Set of String)", "`owner_tags` (Set of String)", "`on_name_conflict` (String, Computed)",
		"## Import", "tp-0123456789abcdef", "target_pool_id = example_target_pool.workers.id"} {
		if !strings.Contains(tp, want) {
			t.Errorf("target pool page lacks %q", want)
		}
	}
	cert := string(pages["resources/example_certificate.md"])
	for _, want := range []string{"`private_key_wo` (String, Sensitive, Write-only)", "`private_key_wo_version` (Number)",
		"`not_after` (String)", "## Import", "cert-0123456789abcdef", "create_before_destroy"} {
		if !strings.Contains(cert, want) {
			t.Errorf("certificate page lacks %q", want)
		}
	}
	for _, want := range []string{"`certificate_ids` (List of String)", "`redirect_to_https_port` (Number)", "`sticky_sessions` (Attributes)",
		"`fixed_response` (Attributes)"} {
		if !strings.Contains(lb, want) {
			t.Errorf("load balancer page lacks %q", want)
		}
	}
	addr := string(pages["resources/example_address.md"])
	for _, want := range []string{"`load_balancer_id` (String)", "`family` (String, Computed)", "`ip` (String)", "## Import",
		"addr-0123456789abcdef", "203.0.113.7", "load_balancer_id = example_load_balancer.blue.id"} {
		if !strings.Contains(addr, want) {
			t.Errorf("address page lacks %q", want)
		}
	}
	if ds := string(pages["data-sources/example_address.md"]); !strings.Contains(ds, "`ip` (String, Computed)") {
		t.Error("address data source page lacks ip")
	}
	if !strings.Contains(lb, "`target_pool_id` (String)") {
		t.Error("load balancer page lacks target_pool_id")
	}
	if idx := string(pages["README.md"]); !strings.Contains(idx, "`token` (String, Sensitive)") ||
		!strings.Contains(idx, "## Lock-file policy") {
		t.Error("index page lacks the provider schema or the lock-file policy")
	}
}

// TestExamplesFormatted: the examples are `terraform fmt` clean.
func TestExamplesFormatted(t *testing.T) {
	tc := tftest.Get(t)
	tc.CLIConfig = emptyCLIConfig(t) // fmt installs nothing
	cmd := exec.Command(tc.Terraform, "fmt", "-check", "-recursive", "-diff", filepath.Join(tftest.RepoRoot(), ExamplesDir))
	cmd.Env = tc.EnvList()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform fmt -check: %v\n%s", err, out)
	}
}

// TestExamplesValidate: every example is valid against the real provider
// installed from the offline mirror.
func TestExamplesValidate(t *testing.T) {
	tftest.RequireAcceptance(t)
	bin := tftest.Get(t)
	lock, err := os.ReadFile(bin.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tftest.RepoRoot(), ExamplesDir)
	dirs, _ := filepath.Glob(filepath.Join(root, "*s", "*")) // resources/*, data-sources/*
	dirs = append(dirs, filepath.Join(root, "provider"))
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
			if len(files) == 0 {
				t.Fatal("no .tf files")
			}
			for _, f := range files {
				raw, _ := os.ReadFile(f)
				write(t, filepath.Join(ws, filepath.Base(f)), raw)
			}
			if rel != "provider" {
				write(t, filepath.Join(ws, "versions.tf"), []byte(`terraform {
  required_providers {
    example = { source = "`+tftest.ProviderAddress+`" }
  }
}
`))
			}
			write(t, filepath.Join(ws, ".terraform.lock.hcl"), lock)
			for _, args := range [][]string{{"init", "-input=false", "-no-color"}, {"validate", "-no-color"}} {
				cmd := exec.Command("terraform", args...)
				cmd.Dir = ws
				cmd.Env = bin.EnvList()
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
				}
			}
		})
	}
}

func emptyCLIConfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "terraform.rc")
	write(t, p, nil)
	return p
}

func write(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
