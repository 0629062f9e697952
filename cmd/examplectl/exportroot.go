package main

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/renderer"
)

// exported is what export learns from the controller's applied main.tf.
type exported struct {
	// main is the root module without its backend block and with the
	// export's heading: state in DIR (local), the rest as applied.
	main []byte
	// endpoint is the provider block's.
	endpoint string
	// tags are the load balancer's (its owner proof).
	tags map[string]string
	// certificates are the certificates module's PEMs by key; empty
	// without TLS Secrets.
	certificates map[string]string
	// address is the reserved address of the Service's namespace the load
	// balancer holds, if any (read from the cloud); leftOut are those of
	// other namespaces it holds, which stay their owners'.
	address *exampleapi.Address
	leftOut []exampleapi.Address
}

// exportRoot reads the applied main.tf of a Service and makes it the
// standalone root module of DIR: the backend block goes (the state is
// DIR's own), the heading names the hand-over, everything else stays as
// the controller applied it, so that the plan after the imports is empty.
func exportRoot(mainTF []byte, heading []string) (*exported, error) {
	f, diags := hclwrite.ParseConfig(mainTF, renderer.MainFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse the applied %s: %s", renderer.MainFile, diags.Error())
	}
	syn, diags := hclsyntax.ParseConfig(mainTF, renderer.MainFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse the applied %s: %s", renderer.MainFile, diags.Error())
	}
	out := &exported{}
	body := syn.Body.(*hclsyntax.Body)
	var lb *hclsyntax.Body
	for _, b := range body.Blocks {
		switch {
		case b.Type == "provider" && len(b.Labels) == 1 && b.Labels[0] == "example":
			var err error
			if out.endpoint, err = stringAttr(b.Body, "endpoint"); err != nil {
				return nil, err
			}
		case b.Type == "module" && len(b.Labels) == 1 && b.Labels[0] == renderer.LoadBalancerModuleName:
			lb = b.Body
			var err error
			if out.tags, err = stringMapAttr(b.Body, "tags", ""); err != nil {
				return nil, err
			}
		case b.Type == "module" && len(b.Labels) == 1 && b.Labels[0] == renderer.CertificatesModuleName:
			var err error
			if out.certificates, err = stringMapAttr(b.Body, "certificates", "certificate_pem"); err != nil {
				return nil, err
			}
		case b.Type == "import":
			return nil, fmt.Errorf("the applied %s still imports a load balancer (adopt-id): export it once the controller has applied the adoption", renderer.MainFile)
		}
	}
	if lb == nil {
		return nil, fmt.Errorf("the applied %s has no module %q: not a Service's own load balancer", renderer.MainFile, renderer.LoadBalancerModuleName)
	}
	if tf := f.Body().FirstMatchingBlock("terraform", nil); tf != nil {
		for _, b := range tf.Body().Blocks() {
			if b.Type() == "backend" {
				tf.Body().RemoveBlock(b)
			}
		}
	}
	// The controller's heading (comments before the first block) is
	// replaced: this file is the team's now.
	text := string(hclwrite.Format(f.Bytes()))
	for strings.HasPrefix(text, "#") {
		_, text, _ = strings.Cut(text, "\n")
	}
	var buf bytes.Buffer
	for _, l := range heading {
		fmt.Fprintf(&buf, "# %s\n", l)
	}
	buf.WriteString(text)
	out.main = buf.Bytes()
	return out, nil
}

// stringAttr is body's attribute name, a string literal; "" if absent.
func stringAttr(body *hclsyntax.Body, name string) (string, error) {
	v, err := attrValue(body, name)
	if err != nil || v == cty.NilVal {
		return "", err
	}
	if v.Type() != cty.String || v.IsNull() {
		return "", fmt.Errorf("read %s: not a string", name)
	}
	return v.AsString(), nil
}

// stringMapAttr is body's attribute name, a literal map of strings; nil if
// absent. With field set, each element is an object and its field is
// taken (the certificates module's certificates: their certificate_pem).
func stringMapAttr(body *hclsyntax.Body, name, field string) (map[string]string, error) {
	v, err := attrValue(body, name)
	if err != nil || v == cty.NilVal {
		return nil, err
	}
	if v.IsNull() || !v.CanIterateElements() {
		return nil, fmt.Errorf("read %s: not a map", name)
	}
	out := map[string]string{}
	for k, e := range v.AsValueMap() {
		if field != "" {
			if !e.Type().IsObjectType() || !e.Type().HasAttribute(field) {
				return nil, fmt.Errorf("read %s: %s has no %s", name, k, field)
			}
			e = e.GetAttr(field)
		}
		if e.Type() != cty.String || e.IsNull() {
			return nil, fmt.Errorf("read %s: %s is not a string", name, k)
		}
		out[k] = e.AsString()
	}
	return out, nil
}

func attrValue(body *hclsyntax.Body, name string) (cty.Value, error) {
	attr, ok := body.Attributes[name]
	if !ok {
		return cty.NilVal, nil
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("read %s: %s", name, diags.Error())
	}
	if !v.IsWhollyKnown() {
		return cty.NilVal, fmt.Errorf("read %s: not a literal", name)
	}
	return v, nil
}

// withModuleOf appends to the exported root module the call of module
// name from another applied root module (the address's workspace's
// main.tf): the team's configuration holds both.
func withModuleOf(main, other []byte, name, comment string) ([]byte, error) {
	f, diags := hclwrite.ParseConfig(main, renderer.MainFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse the exported %s: %s", renderer.MainFile, diags.Error())
	}
	o, diags := hclwrite.ParseConfig(other, renderer.MainFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse the applied %s of module %s: %s", renderer.MainFile, name, diags.Error())
	}
	call := o.Body().FirstMatchingBlock("module", []string{name})
	if call == nil {
		return nil, fmt.Errorf("the applied root module has no module %q", name)
	}
	if f.Body().FirstMatchingBlock("module", []string{name}) != nil {
		return nil, fmt.Errorf("the exported root module already calls a module %q", name)
	}
	f.Body().AppendNewline()
	f.Body().AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment, Bytes: []byte("# " + comment + "\n")}})
	f.Body().AppendBlock(call)
	return hclwrite.Format(f.Bytes()), nil
}

// importTarget is one object the exported root module takes over.
type importTarget struct {
	// to is its resource address, id its cloud id.
	to, id string
}

// importsFile renders the import blocks of targets, in order.
func importsFile(targets []importTarget) ([]byte, error) {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	body.AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenComment,
		Bytes: []byte("# The objects the controller applied, taken over by this configuration's state.\n")}})
	for _, t := range targets {
		trav, diags := hclsyntax.ParseTraversalAbs([]byte(t.to), "import", hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("import address %q: %s", t.to, diags.Error())
		}
		body.AppendNewline()
		b := body.AppendNewBlock("import", nil).Body()
		b.SetAttributeTraversal("to", trav)
		b.SetAttributeValue("id", cty.StringVal(t.id))
	}
	return hclwrite.Format(f.Bytes()), nil
}

// stateOnly are the arguments an import cannot know (the cloud does not
// keep them): the first apply after it only records them.
var stateOnly = map[string]bool{
	"on_name_conflict": true, "owner_tags": true, "timeouts": true, // example_load_balancer
	"on_duplicate": true, "delete_leftovers": true, "private_key_wo_version": true, // example_certificate
}

// checkImportPlan refuses a plan that would do more than take over the
// imported objects: anything created, replaced or destroyed, anything not
// imported, an update of an argument the cloud keeps (the cloud moved
// away from what the controller applied: the team's first apply would
// change it).
func checkImportPlan(p *tfjson.Plan, want []importTarget) error {
	imported := map[string]bool{}
	var problems []string
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode {
			continue
		}
		a := rc.Change.Actions
		switch {
		case rc.Change.Importing == nil && a.NoOp():
			continue
		case rc.Change.Importing == nil:
			problems = append(problems, fmt.Sprintf("%s would be %s", rc.Address, actionWords(a)))
			continue
		case !a.NoOp() && !a.Update():
			problems = append(problems, fmt.Sprintf("%s would be imported and %s", rc.Address, actionWords(a)))
			continue
		}
		imported[rc.Address] = true
		if a.Update() {
			for _, attr := range cloudChanges(rc.Change) {
				problems = append(problems, fmt.Sprintf("%s: %s differs in the cloud from what the controller applied", rc.Address, attr))
			}
		}
	}
	for _, t := range want {
		if !imported[t.to] {
			problems = append(problems, fmt.Sprintf("%s (%s) is not imported", t.to, t.id))
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("the plan in the exported directory does more than take the objects over:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func actionWords(a tfjson.Actions) string {
	words := make([]string, len(a))
	for i, x := range a {
		words[i] = string(x) + "d"
	}
	return strings.Join(words, " and ")
}

// cloudChanges are the top-level arguments an update changes, besides
// state-only ones and an empty list or map becoming null (or back).
func cloudChanges(c *tfjson.Change) []string {
	before, _ := c.Before.(map[string]any)
	after, _ := c.After.(map[string]any)
	unknown, _ := c.AfterUnknown.(map[string]any)
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if stateOnly[k] {
			continue
		}
		if u, _ := unknown[k].(bool); u || !reflect.DeepEqual(emptyAsNil(before[k]), emptyAsNil(after[k])) {
			out = append(out, k)
		}
	}
	return out
}

func emptyAsNil(v any) any {
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	}
	return v
}
