package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/internal/testkit"
)

const tfHead = `terraform {
  required_providers {
    example = { source = "example.com/example/example", version = "0.1.0" }
  }
  %s
}
module "lb" {
  source = "./modules/loadbalancer"
  port   = %d
}
`

func files(backend string, port int) map[string][]byte {
	return map[string][]byte{"main.tf": fmt.Appendf(nil, tfHead, backend, port)}
}

// Jobs differing only in their backend's values (and module inputs) share
// a template; anything init depends on separates them; backends not proven
// safe, and blocks that are not literals, get none.
func TestTemplateFor(t *testing.T) {
	r := &Runner{cfg: Config{WorkDir: "/w"}, copySalt: "salt"}
	key := func(f map[string][]byte, env map[string]string) string {
		tm := r.templateFor(Job{Files: f, Env: env}, nil)
		if tm == nil {
			return ""
		}
		return tm.dir
	}
	local := key(files(`backend "local" { path = "/s/a.tfstate" }`, 80), nil)
	if local == "" || !strings.HasPrefix(local, "/w/.init/") {
		t.Fatalf("local backend: template %q", local)
	}
	if k := key(files(`backend "local" { path = "/s/b.tfstate" }`, 81), nil); k != local {
		t.Fatal("another path or input changed the template")
	}
	for name, other := range map[string]string{
		"backend type":   key(files(`backend "http" { address = "http://x/a" }`, 80), nil),
		"attribute name": key(files(`backend "local" { workspace_dir = "/s" }`, 80), nil),
		"env names":      key(files(`backend "local" { path = "/s/a.tfstate" }`, 80), map[string]string{"X": "1"}),
		"no backend":     key(files(``, 80), nil),
	} {
		if other == "" || other == local {
			t.Errorf("%s: template %q, want one of its own", name, other)
		}
	}
	moved := map[string][]byte{"main.tf": []byte(strings.Replace(string(files(`backend "local" { path = "/p" }`, 80)["main.tf"]), "./modules/loadbalancer", "./modules/other", 1))}
	renamed := map[string][]byte{"main.tf": []byte(strings.Replace(string(files(`backend "local" { path = "/p" }`, 80)["main.tf"]), `module "lb"`, `module "lb2"`, 1))}
	if key(moved, nil) == local || key(renamed, nil) == local {
		t.Error("a module's source or name did not change the template")
	}
	r2 := &Runner{cfg: Config{WorkDir: "/w"}, copySalt: "other salt"}
	if tm := r2.templateFor(Job{Files: files(`backend "local" { path = "/s/a.tfstate" }`, 80)}, nil); tm.dir == local {
		t.Error("the salt (provider mode, terraform, CLI config) did not change the template")
	}
	if tm := r.templateFor(Job{Files: files(`backend "local" { path = "/s/a.tfstate" }`, 80)}, []byte("lock")); tm.dir == local {
		t.Error("the lock file did not change the template")
	}
	for name, f := range map[string]map[string][]byte{
		"gcs":      files(`backend "gcs" { bucket = "b" }`, 80),
		"variable": files(`backend "local" { path = var.p }`, 80),
		"function": files(`backend "local" { path = upper("p") }`, 80),
		"block":    files(`backend "kubernetes" { exec { command = "x" } }`, 80),
		"cloud":    files(`cloud { organization = "o" }`, 80),
	} {
		if k := key(f, nil); k != "" {
			t.Errorf("%s: template %q, want none", name, k)
		}
	}
	r.cfg.NoInitCopy = true
	if k := key(files(`backend "local" { path = "/s/a.tfstate" }`, 80), nil); k != "" {
		t.Error("NoInitCopy: a template")
	}
}

// The cached backend configuration gets the block's values and keeps the
// cache's for the rest (a template's: those of unset attributes, not
// always null, as OpenTofu's kubernetes backend caches [] for its exec
// block); it refuses another backend type and an attribute the cache does
// not list.
func TestSetBackend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "terraform.tfstate")
	write := func() {
		testkit.Must(t, os.WriteFile(path, []byte(`{"version":3,"terraform_version":"1.11.4","backend":{"type":"http","config":{"address":"http://x/old","lock_method":"LOCK","username":null,"retry_max":null,"exec":[]},"hash":123}}`), 0o644))
	}
	write()
	err := setBackend(path, backendValues{typ: "http", attrs: map[string]cty.Value{"address": cty.StringVal("http://x/new"), "retry_max": cty.NumberIntVal(3),
		"lock_method": cty.NullVal(cty.DynamicPseudoType)}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version int `json:"version"`
		Backend struct {
			Type   string
			Config map[string]any
			Hash   int
		}
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"address": "http://x/new", "lock_method": nil, "username": nil, "retry_max": 3.0, "exec": []any{}}
	if got.Version != 3 || got.Backend.Type != "http" || got.Backend.Hash != 0 || len(got.Backend.Config) != len(want) {
		t.Fatalf("rewritten: %s", data)
	}
	for k, v := range want {
		if !reflect.DeepEqual(got.Backend.Config[k], v) {
			t.Errorf("%s = %v, want %v", k, got.Backend.Config[k], v)
		}
	}
	write()
	if err := setBackend(path, backendValues{typ: "local"}); err == nil {
		t.Error("another backend type accepted")
	}
	if err := setBackend(path, backendValues{typ: "http", attrs: map[string]cty.Value{"nope": cty.True}}); err == nil {
		t.Error("an attribute unknown to the cache accepted")
	}
	if err := setBackend(filepath.Join(t.TempDir(), "none"), backendValues{}); err != nil {
		t.Errorf("no backend, no cache: %v", err)
	}
}
