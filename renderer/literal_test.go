package renderer

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// expectation is what a rendered root module must contain and nothing
// more: the block sequence, and the literal value of every argument.
type expectation struct {
	module   string  // module call name
	inputs   []input // module arguments (source/version checked apart)
	source   ModuleSource
	cfg      Config
	importID string // "" for none
	outputs  []output
}

// checkRendered parses src and checks it against want: no block, attribute,
// template interpolation or reference beyond what the renderer means to
// write, and every literal reads back as the value that was rendered.
func checkRendered(t *testing.T, src []byte, want expectation) {
	t.Helper()
	file, diags := hclsyntax.ParseConfig(src, MainFile, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("rendered HCL does not parse: %v\n%s", diags, src)
	}
	body := file.Body.(*hclsyntax.Body)
	if len(body.Attributes) != 0 {
		t.Fatalf("top-level attributes: %v", keys(body.Attributes))
	}
	var got []string
	for _, b := range body.Blocks {
		got = append(got, b.Type+" "+strings.Join(b.Labels, " "))
	}
	wantBlocks := []string{"terraform ", "provider example"}
	if want.importID != "" {
		wantBlocks = append(wantBlocks, "import ")
	}
	wantBlocks = append(wantBlocks, "module "+want.module)
	for _, o := range want.outputs {
		wantBlocks = append(wantBlocks, "output "+o.name)
	}
	if !slices.Equal(got, wantBlocks) {
		t.Fatalf("blocks = %q, want %q\n%s", got, wantBlocks, src)
	}

	for _, b := range body.Blocks {
		switch b.Type {
		case "terraform":
			checkTerraformBlock(t, b.Body, want.cfg)
		case "provider":
			attrs := []input{{name: "region", value: cty.StringVal(want.cfg.Region)}}
			if want.cfg.Endpoint != "" {
				attrs = append([]input{{name: "endpoint", value: cty.StringVal(want.cfg.Endpoint)}}, attrs...)
			}
			checkLiteralBody(t, "provider", b.Body, attrs)
		case "import":
			checkNoBlocks(t, "import", b.Body)
			if len(b.Body.Attributes) != 2 {
				t.Errorf("import attributes: %v", keys(b.Body.Attributes))
			}
			checkTraversal(t, "import.to", b.Body.Attributes["to"], LoadBalancerAddress)
			checkLiteral(t, "import.id", b.Body.Attributes["id"], cty.StringVal(want.importID))
		case "module":
			attrs := []input{{name: "source", value: cty.StringVal(want.source.Source)}}
			if want.source.Version != "" {
				attrs = append(attrs, input{name: "version", value: cty.StringVal(want.source.Version)})
			}
			checkLiteralBody(t, "module", b.Body, append(attrs, want.inputs...))
		case "output":
			checkNoBlocks(t, "output", b.Body)
			if len(b.Body.Attributes) != 2 {
				t.Errorf("output %s attributes: %v", b.Labels[0], keys(b.Body.Attributes))
			}
			checkTraversal(t, "output value", b.Body.Attributes["value"], "module."+want.module+"."+b.Labels[0])
			if _, ok := b.Body.Attributes["description"]; !ok {
				t.Errorf("output %s has no description", b.Labels[0])
			}
		}
	}
}

func checkTerraformBlock(t *testing.T, body *hclsyntax.Body, cfg Config) {
	t.Helper()
	checkLiteralBody(t, "terraform", body, []input{{name: "required_version", value: cty.StringVal(cfg.RequiredVersion)}}, "required_providers", "backend")
	for _, b := range body.Blocks {
		switch b.Type {
		case "required_providers":
			checkLiteralBody(t, "required_providers", b.Body, []input{{name: "example", value: cty.ObjectVal(map[string]cty.Value{
				"source": cty.StringVal(cfg.ProviderSource), "version": cty.StringVal("= " + cfg.ProviderVersion),
			})}})
		case "backend":
			if len(b.Labels) != 1 || b.Labels[0] != cfg.Backend.Type {
				t.Errorf("backend labels %q", b.Labels)
			}
			var attrs []input
			for _, a := range cfg.Backend.Attrs {
				attrs = append(attrs, input{name: a.Name, value: a.Value})
			}
			checkLiteralBody(t, "backend", b.Body, attrs)
		}
	}
	if cfg.Backend.Type == "" && len(body.Blocks) != 1 {
		t.Errorf("unexpected backend block")
	}
}

// checkLiteralBody: exactly these attributes, in this order, each a pure
// literal equal to its value; nested blocks only of the allowed types.
func checkLiteralBody(t *testing.T, what string, body *hclsyntax.Body, want []input, allowedBlocks ...string) {
	t.Helper()
	for _, b := range body.Blocks {
		if !slices.Contains(allowedBlocks, b.Type) {
			t.Errorf("%s: unexpected block %s", what, b.Type)
		}
	}
	var names []string
	attrs := slices.Collect(func(yield func(*hclsyntax.Attribute) bool) {
		for _, a := range body.Attributes {
			if !yield(a) {
				return
			}
		}
	})
	slices.SortFunc(attrs, func(a, b *hclsyntax.Attribute) int { return a.SrcRange.Start.Byte - b.SrcRange.Start.Byte })
	for _, a := range attrs {
		names = append(names, a.Name)
	}
	var wantNames []string
	for _, in := range want {
		wantNames = append(wantNames, in.name)
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("%s attributes = %q, want %q", what, names, wantNames)
	}
	for _, in := range want {
		checkLiteral(t, what+"."+in.name, body.Attributes[in.name], in.value)
	}
}

func checkLiteral(t *testing.T, what string, a *hclsyntax.Attribute, want cty.Value) {
	t.Helper()
	if a == nil {
		t.Fatalf("%s: missing", what)
	}
	if err := literalOnly(a.Expr); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, diags := a.Expr.Value(nil) // no variables, no functions: literals only
	if diags.HasErrors() {
		t.Fatalf("%s: %v", what, diags)
	}
	if want.IsNull() {
		if !got.IsNull() {
			t.Errorf("%s = %#v, want null", what, got)
		}
		return
	}
	conv, err := convert.Convert(got, want.Type())
	if err != nil {
		t.Fatalf("%s: %#v does not convert to %s: %v", what, got, want.Type().FriendlyName(), err)
	}
	if !conv.Equals(want).True() {
		t.Errorf("%s = %#v, want %#v", what, conv, want)
	}
}

// literalOnly accepts literal values, quoted strings without
// interpolation or directives, tuples and objects of those, and bare
// identifier object keys (HCL reads them as strings).
func literalOnly(e hclsyntax.Expression) error {
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		return nil
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			if _, ok := p.(*hclsyntax.LiteralValueExpr); !ok {
				return fmt.Errorf("template with a %T part at %s", p, p.Range())
			}
		}
		return nil
	case *hclsyntax.TupleConsExpr:
		for _, x := range e.Exprs {
			if err := literalOnly(x); err != nil {
				return err
			}
		}
		return nil
	case *hclsyntax.ObjectConsExpr:
		for _, it := range e.Items {
			k, ok := it.KeyExpr.(*hclsyntax.ObjectConsKeyExpr)
			if !ok || k.ForceNonLiteral {
				return fmt.Errorf("non-literal object key at %s", it.KeyExpr.Range())
			}
			if st, ok := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); ok {
				if len(st.Traversal) != 1 {
					return fmt.Errorf("traversal as object key at %s", st.Range())
				}
			} else if err := literalOnly(k.Wrapped); err != nil {
				return err
			}
			if err := literalOnly(it.ValueExpr); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("non-literal %T at %s", e, e.Range())
}

func checkTraversal(t *testing.T, what string, a *hclsyntax.Attribute, want string) {
	t.Helper()
	if a == nil {
		t.Fatalf("%s: missing", what)
	}
	st, ok := a.Expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		t.Fatalf("%s: %T, want the reference %s", what, a.Expr, want)
	}
	var parts []string
	for _, s := range st.Traversal {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			parts = append(parts, s.Name)
		case hcl.TraverseAttr:
			parts = append(parts, s.Name)
		default:
			t.Fatalf("%s: unexpected %T", what, s)
		}
	}
	if got := strings.Join(parts, "."); got != want {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func checkNoBlocks(t *testing.T, what string, body *hclsyntax.Body) {
	t.Helper()
	if len(body.Blocks) > 0 {
		t.Errorf("%s: unexpected nested blocks", what)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
