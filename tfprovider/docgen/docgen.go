// Package docgen writes docs/provider from the provider's own schema, as
// the provider reports it to Terraform (GetProviderSchema, in process), so
// the reference cannot drift from the code. Prose lives in templates/,
// examples under examples/ (the tfplugindocs layout).
package docgen

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/example/cloud-provider-example/tfprovider"
)

//go:embed templates/*.tmpl
var templates embed.FS

// OutputDir and ExamplesDir are relative to the repository root.
const (
	OutputDir   = "docs/provider"
	ExamplesDir = "examples"
)

// importIDs describes each resource's import id, for its Import section.
var importIDs = map[string]string{
	"example_load_balancer": "the load balancer id (`lb-...`); an id that does not exist fails the import. " +
		"The import does not check ownership, having no configuration to check against: the plans that follow " +
		"do, until an apply takes the load balancer over. Each fails while, for a key of `owner_tags`, the " +
		"load balancer has a tag whose value differs from the configuration's `tags`",
	"example_route": "`<network_id>/<route_id>`, as routes are addressed within their network",
	"example_certificate": "the certificate id (`cert-...`); an id that does not exist fails the import. The private " +
		"key cannot be read back (the cloud never returns it): the configuration must still set `private_key_wo`, which " +
		"the next plan checks against the certificate, and that apply only records `private_key_wo_version` (no " +
		"replacement). `certificate_pem` must be the text that was uploaded, or the plan replaces the certificate",
	"example_address": "the address id (`addr-...`) or its IP (e.g. `203.0.113.7`, in any notation); an id that does not " +
		"exist, or an IP that no address holds (a load balancer's own IP is not an address), fails the import",
	"example_target_pool": "the target pool id (`tp-...`); an id that does not exist fails the import. As for load " +
		"balancers, the plans that follow an import fail while, for a key of `owner_tags`, the pool has a tag whose " +
		"value differs from the configuration's `tags`",
}

// Generate renders every page; the keys are paths relative to OutputDir.
func Generate(ctx context.Context, repoRoot string) (map[string][]byte, error) {
	srv, err := providerserver.NewProtocol6WithError(tfprovider.New(tfprovider.Version)())()
	if err != nil {
		return nil, fmt.Errorf("starting provider server: %w", err)
	}
	resp, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, fmt.Errorf("reading provider schema: %w", err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return nil, fmt.Errorf("provider schema: %s: %s", d.Summary, d.Detail)
		}
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{"code": codeBlock}).ParseFS(templates, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parsing templates: %w", err)
	}
	g := generator{root: repoRoot, tmpl: tmpl, out: map[string][]byte{}}

	var resources, dataSources []string
	for name, s := range resp.ResourceSchemas {
		resources = append(resources, name)
		if err := g.page("resources/"+name+".md", name, "Resource", s, "resources/"+name+"/resource.tf"); err != nil {
			return nil, err
		}
	}
	for name, s := range resp.DataSourceSchemas {
		dataSources = append(dataSources, name)
		if err := g.page("data-sources/"+name+".md", name, "Data Source", s, "data-sources/"+name+"/data-source.tf"); err != nil {
			return nil, err
		}
	}
	var ephemerals []string
	for name, s := range resp.EphemeralResourceSchemas {
		ephemerals = append(ephemerals, name)
		if err := g.page("ephemeral-resources/"+name+".md", name, "Ephemeral Resource", s, "ephemeral-resources/"+name+"/ephemeral-resource.tf"); err != nil {
			return nil, err
		}
	}
	slices.Sort(resources)
	slices.Sort(dataSources)
	slices.Sort(ephemerals)
	example, err := g.example("provider/provider.tf")
	if err != nil {
		return nil, err
	}
	err = g.render("README.md", "index.md.tmpl", map[string]any{
		"Address":     tfprovider.Address,
		"Version":     tfprovider.Version,
		"Example":     example,
		"Schema":      renderSchema(resp.Provider.Block, "Argument Reference", ""),
		"Resources":   resources,
		"DataSources": dataSources,
		"Ephemerals":  ephemerals,
	})
	return g.out, err
}

type generator struct {
	root string
	tmpl *template.Template
	out  map[string][]byte
}

func (g *generator) page(file, name, kind string, s *tfprotov6.Schema, example string) error {
	ex, err := g.example(example)
	if err != nil {
		return err
	}
	var imp string
	// Only resources are imported; a data source may have the same name.
	if id, ok := importIDs[name]; ok && kind == "Resource" {
		imp, err = g.example(filepath.Join(filepath.Dir(example), "import.sh"))
		if err != nil {
			return err
		}
		imp = "The import id is " + id + ".\n\n" + codeBlock("shell", imp)
	}
	return g.render(file, "page.md.tmpl", map[string]any{
		"Name":        name,
		"Kind":        kind,
		"Description": s.Block.Description,
		"Example":     ex,
		"Schema":      renderSchema(s.Block, "Argument Reference", "Attribute Reference"),
		"Import":      imp,
	})
}

func (g *generator) example(rel string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(g.root, ExamplesDir, rel))
	if err != nil {
		return "", fmt.Errorf("reading example: %w", err)
	}
	return strings.TrimRight(string(raw), "\n"), nil
}

func (g *generator) render(file, tmpl string, data any) error {
	var buf bytes.Buffer
	if err := g.tmpl.ExecuteTemplate(&buf, tmpl, data); err != nil {
		return fmt.Errorf("rendering %s: %w", file, err)
	}
	g.out[file] = buf.Bytes()
	return nil
}

func codeBlock(lang, body string) string {
	return "```" + lang + "\n" + body + "\n```"
}

// Write replaces OutputDir's generated files with pages, removing pages
// that are no longer generated.
func Write(repoRoot string, pages map[string][]byte) error {
	dir := filepath.Join(repoRoot, OutputDir)
	stale, err := Existing(repoRoot)
	if err != nil {
		return err
	}
	for _, rel := range stale {
		if _, ok := pages[rel]; !ok {
			if err := os.Remove(filepath.Join(dir, rel)); err != nil {
				return fmt.Errorf("removing stale page: %w", err)
			}
		}
	}
	for rel, content := range pages {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating docs directory: %w", err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return fmt.Errorf("writing page: %w", err)
		}
	}
	return nil
}

// Existing lists the Markdown files under OutputDir, relative to it.
func Existing(repoRoot string) ([]string, error) {
	dir := filepath.Join(repoRoot, OutputDir)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return files, nil
}
