package runner

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/internal/filecopy"
)

// Copying an initialisation instead of running init.
//
// A new workspace whose providers, modules, lock file, backend type and
// backend attribute names equal those of a workspace initialised before
// gets a copy of that initialisation: the .terraform directory (providers
// and modules installed, the backend configuration terraform caches) and
// the lock file, kept as a template under <WorkDir>/.init/ after the first
// real init. It saves a terraform process per new object.
//
// The cached backend configuration (.terraform/terraform.tfstate) holds
// per-object values (a local path, an http address, a kubernetes
// secret_suffix): a template keeps none (every value null), the copy gets
// the workspace's own from its backend block. Terraform checks the copy:
// when the cached hash does not match the configuration, it compares the
// cached values with the configuration's, attribute by attribute, and
// refuses ("Backend initialization required") unless they are equal; if
// they are, it records the new hash and goes on. So a copy is used only
// when it describes exactly this workspace's backend, and a refused one
// makes the next run init (see workspace.newError).
//
// Only backends whose .terraform holds nothing but that configuration (no
// state, no credentials) are copied, those the tests plan and apply
// through a copy: local, kubernetes, pg, http, s3 and none. A terraform
// workspace (pg) is not part of the copy: it is selected after, as after
// an init.
const initDir = ".init"

var copyableBackends = map[string]bool{"": true, "local": true, "kubernetes": true, "pg": true, "http": true, "s3": true}

// initTemplate is the template a job's initialisation may be copied from.
type initTemplate struct {
	dir     string // <WorkDir>/.init/<hash>; holds terraform/ and lock.hcl
	backend backendValues
}

// backendValues is a backend block's type and literal attribute values.
type backendValues struct {
	typ   string
	attrs map[string]cty.Value
}

// initCopySalt is what a copied initialisation depends on besides the
// files: the provider mode and the terraform binary and CLI config that
// laid it out.
func initCopySalt(mode ProviderMode, terraform, cliConfig string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", mode, terraform)
	if fi, err := os.Stat(terraform); err == nil {
		fmt.Fprintf(h, "%d\x00%d\x00", fi.Size(), fi.ModTime().UnixNano())
	}
	cli, err := os.ReadFile(cliConfig)
	if err != nil {
		return "", fmt.Errorf("runner: terraform CLI config: %w", err)
	}
	h.Write(cli)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// templateFor returns the template job may use, or nil when its
// initialisation cannot be copied (NoInitCopy, another backend, a backend
// block that is not plain literals, a cloud block).
func (r *Runner) templateFor(job Job, lock []byte) *initTemplate {
	if r.cfg.NoInitCopy {
		return nil
	}
	h := sha256.New()
	h.Write([]byte(r.copySalt))
	var be backendValues
	for _, name := range slices.Sorted(maps.Keys(job.Files)) {
		if !strings.HasSuffix(name, ".tf") {
			continue
		}
		src := job.Files[name]
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			return nil
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			switch b.Type {
			case "terraform":
				h.Write([]byte("terraform\x00"))
				for _, a := range slices.Sorted(maps.Keys(b.Body.Attributes)) {
					h.Write([]byte(a + "\x00"))
					h.Write(b.Body.Attributes[a].Expr.Range().SliceBytes(src))
				}
				for _, nb := range b.Body.Blocks {
					switch nb.Type {
					case "backend":
						var ok bool
						if be, ok = literalBackend(nb); !ok {
							return nil
						}
						h.Write([]byte("backend\x00" + be.typ + "\x00"))
						for _, a := range slices.Sorted(maps.Keys(be.attrs)) {
							h.Write([]byte(a + "\x00"))
						}
					case "cloud":
						return nil
					default:
						h.Write(nb.Range().SliceBytes(src))
					}
				}
			case "module":
				// The module's name too: modules.json is keyed by it.
				h.Write([]byte("module\x00" + strings.Join(b.Labels, "\x00") + "\x00"))
				for _, attr := range []string{"source", "version"} {
					if a, ok := b.Body.Attributes[attr]; ok {
						h.Write(a.Expr.Range().SliceBytes(src))
					}
				}
			}
			h.Write([]byte{0})
		}
	}
	if !copyableBackends[be.typ] {
		return nil
	}
	h.Write(lock)
	for _, k := range slices.Sorted(maps.Keys(job.Env)) {
		h.Write([]byte(k + "\x00"))
	}
	return &initTemplate{dir: filepath.Join(r.cfg.WorkDir, initDir, hex.EncodeToString(h.Sum(nil))[:32]), backend: be}
}

// literalBackend reads a backend block made of literal attributes only.
func literalBackend(b *hclsyntax.Block) (backendValues, bool) {
	if len(b.Labels) != 1 || len(b.Body.Blocks) > 0 {
		return backendValues{}, false
	}
	be := backendValues{typ: b.Labels[0], attrs: map[string]cty.Value{}}
	for name, a := range b.Body.Attributes {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() || !v.IsWhollyKnown() || v.IsMarked() {
			return backendValues{}, false
		}
		be.attrs[name] = v
	}
	return be, true
}

// copyInit gives a new workspace (no .terraform yet) the initialisation of
// its template, if there is one. It returns whether it did, and the
// template (nil if none applies) for saveInit after a real init.
func (r *Runner) copyInit(w *workspace, job Job, lock []byte) (bool, *initTemplate) {
	t := r.templateFor(job, lock)
	if t == nil {
		return false, nil
	}
	if _, err := os.Lstat(filepath.Join(w.dir, ".terraform")); err == nil {
		return false, t // initialised before: init knows what to change
	}
	if _, err := os.Stat(t.dir); err != nil {
		return false, t
	}
	if err := t.copyTo(w.dir); err != nil {
		klog.V(2).InfoS("cannot copy an initialisation, running init", "workspace", w.key, "err", err)
		_ = os.RemoveAll(filepath.Join(w.dir, ".terraform"))
		return false, t
	}
	r.initCopies.Add(1)
	klog.V(4).InfoS("initialisation copied, no terraform init", "workspace", w.key, "template", filepath.Base(t.dir))
	return true, t
}

// InitsCopied is how many new workspaces got a copied initialisation
// instead of running terraform init.
func (r *Runner) InitsCopied() int64 { return r.initCopies.Load() }

func (t *initTemplate) copyTo(dir string) error {
	tmp := filepath.Join(dir, ".terraform.copy")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := filecopy.Tree(filepath.Join(t.dir, "terraform"), tmp, filecopy.TreeOptions{}); err != nil {
		return err
	}
	if err := setBackend(filepath.Join(tmp, "terraform.tfstate"), t.backend); err != nil {
		return err
	}
	lock, err := os.ReadFile(filepath.Join(t.dir, "lock.hcl"))
	switch {
	case err == nil:
		if err := writeIfChanged(filepath.Join(dir, ".terraform.lock.hcl"), lock, 0o644); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ".terraform"))
}

// saveInit keeps the initialisation w just got as t's template, unless
// there is one. Failures only cost later inits.
func (r *Runner) saveInit(w *workspace, t *initTemplate) {
	if t == nil {
		return
	}
	if _, err := os.Stat(t.dir); err == nil {
		return
	}
	if err := t.save(w.dir); err != nil {
		klog.V(2).InfoS("cannot keep the initialisation for other workspaces", "workspace", w.key, "err", err)
	}
}

func (t *initTemplate) save(dir string) error {
	if err := os.MkdirAll(filepath.Dir(t.dir), 0o700); err != nil {
		return err
	}
	tmp := t.dir + ".tmp-" + rand.Text()[:8]
	defer os.RemoveAll(tmp)
	// The selected terraform workspace (pg) is the object's own.
	skip := map[string]bool{"environment": true}
	if err := filecopy.Tree(filepath.Join(dir, ".terraform"), filepath.Join(tmp, "terraform"), filecopy.TreeOptions{Skip: skip}); err != nil {
		return err
	}
	// No object's values in a template: they are every copy's own. The
	// attributes the block leaves unset keep what init cached for them,
	// which is not always null: OpenTofu's kubernetes backend caches [] for
	// its absent exec block, and compares a copy's cache with that.
	cleared := backendValues{typ: t.backend.typ, attrs: map[string]cty.Value{}}
	for k := range t.backend.attrs {
		cleared.attrs[k] = cty.NullVal(cty.DynamicPseudoType)
	}
	if err := setBackend(filepath.Join(tmp, "terraform", "terraform.tfstate"), cleared); err != nil {
		return err
	}
	if lock, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl")); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "lock.hcl"), lock, 0o600); err != nil { //nolint:gosec // paths inside the controller's own work directory
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, t.dir); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(t.dir); serr == nil {
			return nil // another workspace saved it first
		}
		return err
	}
	return nil
}

// setBackend sets be's attributes in the backend configuration terraform
// cached at path; the others keep their cached values (a template's are
// those of an unset attribute). be sets only attributes the cache lists
// (the backend's schema). The hash is zeroed: terraform then compares
// values and records its own. Without a backend block there must be no
// cache.
func setBackend(path string, be backendValues) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && be.typ == "" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cached backend configuration: %w", err)
	}
	var top map[string]json.RawMessage
	var backend map[string]json.RawMessage
	var config map[string]json.RawMessage
	var typ string
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("cached backend configuration: %w", err)
	}
	if err := json.Unmarshal(top["backend"], &backend); err != nil {
		return fmt.Errorf("cached backend configuration: %w", err)
	}
	if err := json.Unmarshal(backend["type"], &typ); err != nil || typ != be.typ {
		return fmt.Errorf("cached backend configuration is of type %q, want %q", typ, be.typ)
	}
	if err := json.Unmarshal(backend["config"], &config); err != nil || config == nil {
		return fmt.Errorf("cached backend configuration has no config: %v", err)
	}
	for k, v := range be.attrs {
		if _, ok := config[k]; !ok {
			return fmt.Errorf("backend %q has no attribute %q in its cached configuration", be.typ, k)
		}
		b, err := ctyjson.SimpleJSONValue{Value: v}.MarshalJSON()
		if err != nil {
			return fmt.Errorf("backend attribute %q: %w", k, err)
		}
		config[k] = b
	}
	if backend["config"], err = json.Marshal(config); err != nil {
		return err
	}
	backend["hash"] = json.RawMessage("0")
	if top["backend"], err = json.Marshal(backend); err != nil {
		return err
	}
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	return writeIfChanged(path, out, 0o644)
}
