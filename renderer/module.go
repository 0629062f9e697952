package renderer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// MainFile is the one file of a rendered root module.
const MainFile = "main.tf"

// generator names the program in the header of every rendered file.
const generator = "example-cloud-controller-manager"

// Module is a rendered Terraform root module.
type Module struct {
	// Files by name (main.tf), formatted exactly as `terraform fmt` would.
	Files map[string][]byte
	// Hash is a sha256 over the sorted file names and contents: equal
	// hashes mean nothing to re-plan.
	Hash string
	// Warnings are inputs that were skipped or adjusted (nodes without a
	// usable providerID, masked CIDRs), sorted; worth an event.
	Warnings []string
}

func newModule(main []byte, warnings []string) *Module {
	m := &Module{Files: map[string][]byte{MainFile: main}, Warnings: warnings}
	m.Hash = hashFiles(m.Files)
	slices.Sort(m.Warnings)
	return m
}

func hashFiles(files map[string][]byte) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files)) {
		// Length-prefixed, so no two file sets can hash alike by shifting
		// bytes between a name and a content.
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(files[name]))
		h.Write(files[name])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// root builds the parts every rendered root module shares.
type root struct {
	cfg  Config
	file *hclwrite.File
	body *hclwrite.Body
}

// newModuleRoot is newRoot for a root module calling the module src (the
// shipped one: shipped): header, then where the module comes from.
func newModuleRoot(cfg Config, src ModuleSource, shipped string, header ...string) (*root, error) {
	if h := moduleHeader(cfg, src, shipped); h != "" {
		header = append(header, h)
	}
	return newRoot(cfg, header)
}

func newRoot(cfg Config, header []string) (*root, error) {
	r := &root{cfg: cfg, file: hclwrite.NewEmptyFile()}
	r.body = r.file.Body()
	r.body.AppendUnstructuredTokens(commentTokens(header...))
	r.body.AppendNewline()
	if err := r.terraformBlock(); err != nil {
		return nil, err
	}
	r.body.AppendNewline()
	if err := r.providerBlock(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *root) terraformBlock() error {
	tf := r.body.AppendNewBlock("terraform", nil).Body()
	tf.SetAttributeValue("required_version", cty.StringVal(r.cfg.RequiredVersion))
	tf.AppendNewline()
	example := cty.ObjectVal(map[string]cty.Value{
		"source":  cty.StringVal(r.cfg.ProviderSource),
		"version": cty.StringVal("= " + r.cfg.ProviderVersion),
	})
	if err := checkUTF8("config provider", example); err != nil {
		return err
	}
	tf.AppendNewBlock("required_providers", nil).Body().SetAttributeRaw("example", valueTokens(example))
	if r.cfg.Backend.Type == "" {
		return nil
	}
	tf.AppendNewline()
	backend := tf.AppendNewBlock("backend", []string{r.cfg.Backend.Type}).Body()
	for _, a := range r.cfg.Backend.Attrs {
		if err := checkUTF8("config backend.attrs."+a.Name, a.Value); err != nil {
			return err
		}
		backend.SetAttributeRaw(a.Name, valueTokens(a.Value))
	}
	return nil
}

// providerBlock never gets a token: the provider reads EXAMPLE_TOKEN.
func (r *root) providerBlock() error {
	p := r.body.AppendNewBlock("provider", []string{"example"}).Body()
	if r.cfg.Endpoint != "" {
		p.SetAttributeValue("endpoint", cty.StringVal(r.cfg.Endpoint))
	}
	p.SetAttributeValue("region", cty.StringVal(r.cfg.Region))
	for _, v := range []string{r.cfg.Endpoint, r.cfg.Region} {
		if err := checkUTF8("config endpoint/region", cty.StringVal(v)); err != nil {
			return err
		}
	}
	return nil
}

// moduleCall appends module "<name>" { source, version, inputs… }.
func (r *root) moduleCall(name string, src ModuleSource, inputs []input) error {
	r.body.AppendNewline()
	b := r.body.AppendNewBlock("module", []string{name}).Body()
	b.SetAttributeValue("source", cty.StringVal(src.Source))
	if src.Version != "" {
		b.SetAttributeValue("version", cty.StringVal(src.Version))
	}
	if err := checkUTF8("config module source", cty.StringVal(src.Source+src.Version)); err != nil {
		return err
	}
	b.AppendNewline()
	for _, in := range inputs {
		if err := checkUTF8("module input "+in.name, in.value); err != nil {
			return err
		}
		if in.tokens != nil {
			b.SetAttributeRaw(in.name, in.tokens)
			continue
		}
		b.SetAttributeRaw(in.name, valueTokens(in.value))
	}
	return nil
}

// input is one module argument; tokens, when set, are its rendering (for
// layouts valueTokens cannot do, such as per-entry comments).
type input struct {
	name   string
	value  cty.Value
	tokens hclwrite.Tokens
}

// outputs re-exports every output of module <name>.
func (r *root) outputs(module string, outs []output) {
	for _, o := range outs {
		r.body.AppendNewline()
		b := r.body.AppendNewBlock("output", []string{o.name}).Body()
		b.SetAttributeValue("description", cty.StringVal(o.description))
		b.SetAttributeTraversal("value", hcl.Traversal{
			hcl.TraverseRoot{Name: "module"},
			hcl.TraverseAttr{Name: module},
			hcl.TraverseAttr{Name: o.name},
		})
	}
}

type output struct{ name, description string }

func (r *root) bytes() []byte { return hclwrite.Format(r.file.Bytes()) }

// moduleHeader says where the called module's code comes from, including
// the shipped modules' digest so an upgrade changes the hash.
func moduleHeader(cfg Config, src ModuleSource, shipped string) string {
	if src.Source == shipped && cfg.ModulesDigest != "" {
		return fmt.Sprintf("Module %s: shipped with the controller, sha256 %.12s.", src.Source, cfg.ModulesDigest)
	}
	return ""
}
