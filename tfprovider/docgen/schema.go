package docgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// renderSchema writes the reference of a block: arguments (required, then
// optional) under argsTitle, read-only attributes under attrsTitle (or
// with the arguments when attrsTitle is empty), then one section per
// nested object, like tfplugindocs.
func renderSchema(b *tfprotov6.SchemaBlock, argsTitle, attrsTitle string) string {
	var w strings.Builder
	var nested []nestedSection
	req, opt, ro := split(b.Attributes)

	fmt.Fprintf(&w, "## %s\n\n", argsTitle)
	writeGroup(&w, "Required", req, "", &nested)
	writeGroup(&w, "Optional", opt, "", &nested)
	if len(req)+len(opt) == 0 {
		w.WriteString("This has no arguments.\n\n")
	}
	if len(ro) > 0 {
		if attrsTitle != "" {
			fmt.Fprintf(&w, "## %s\n\n", attrsTitle)
			w.WriteString("In addition to the arguments above, these attributes are exported.\n\n")
		}
		writeGroup(&w, "Read-Only", ro, "", &nested)
	}
	for i := 0; i < len(nested); i++ { // writeGroup may append more
		n := nested[i]
		fmt.Fprintf(&w, "<a id=\"%s\"></a>\n### Nested Schema for `%s`\n\n", anchor(n.path), n.path)
		r, o, c := split(n.attrs)
		writeGroup(&w, "Required", r, n.path, &nested)
		writeGroup(&w, "Optional", o, n.path, &nested)
		writeGroup(&w, "Read-Only", c, n.path, &nested)
	}
	return strings.TrimRight(w.String(), "\n")
}

type nestedSection struct {
	path  string
	attrs []*tfprotov6.SchemaAttribute
}

func split(attrs []*tfprotov6.SchemaAttribute) (req, opt, ro []*tfprotov6.SchemaAttribute) {
	sorted := slices.Clone(attrs)
	slices.SortFunc(sorted, func(a, b *tfprotov6.SchemaAttribute) int { return strings.Compare(a.Name, b.Name) })
	for _, a := range sorted {
		switch {
		case a.Required:
			req = append(req, a)
		case a.Optional:
			opt = append(opt, a)
		default:
			ro = append(ro, a)
		}
	}
	return req, opt, ro
}

func writeGroup(w *strings.Builder, title string, attrs []*tfprotov6.SchemaAttribute, parent string, nested *[]nestedSection) {
	if len(attrs) == 0 {
		return
	}
	if parent == "" {
		fmt.Fprintf(w, "### %s\n\n", title)
	} else {
		// Nested sections are headings already; their groups are labels.
		fmt.Fprintf(w, "%s:\n\n", title)
	}
	for _, a := range attrs {
		path := a.Name
		if parent != "" {
			path = parent + "." + a.Name
		}
		flags := []string{typeName(a)}
		if a.Sensitive {
			flags = append(flags, "Sensitive")
		}
		if a.WriteOnly {
			flags = append(flags, "Write-only")
		}
		if a.Optional && a.Computed {
			flags = append(flags, "Computed")
		}
		desc := strings.TrimSpace(a.Description)
		if a.NestedType != nil {
			*nested = append(*nested, nestedSection{path: path, attrs: a.NestedType.Attributes})
			desc += fmt.Sprintf(" (see [below for nested schema](#%s))", anchor(path))
		}
		fmt.Fprintf(w, "- `%s` (%s) %s\n", a.Name, strings.Join(flags, ", "), strings.TrimSpace(desc))
	}
	w.WriteString("\n")
}

func anchor(path string) string { return "nestedatt--" + strings.ReplaceAll(path, ".", "--") }

// typeName names an attribute's type the way the Terraform docs do.
func typeName(a *tfprotov6.SchemaAttribute) string {
	if n := a.NestedType; n != nil {
		switch n.Nesting {
		case tfprotov6.SchemaObjectNestingModeList:
			return "Attributes List"
		case tfprotov6.SchemaObjectNestingModeSet:
			return "Attributes Set"
		case tfprotov6.SchemaObjectNestingModeMap:
			return "Attributes Map"
		}
		return "Attributes"
	}
	return ctyName(a.Type)
}

func ctyName(t tftypes.Type) string {
	switch {
	case t == nil:
		return "Dynamic"
	case t.Is(tftypes.String):
		return "String"
	case t.Is(tftypes.Number):
		return "Number"
	case t.Is(tftypes.Bool):
		return "Boolean"
	case t.Is(tftypes.List{}):
		return "List of " + ctyName(t.(tftypes.List).ElementType)
	case t.Is(tftypes.Set{}):
		return "Set of " + ctyName(t.(tftypes.Set).ElementType)
	case t.Is(tftypes.Map{}):
		return "Map of " + ctyName(t.(tftypes.Map).ElementType)
	case t.Is(tftypes.Object{}):
		return "Object"
	}
	return "Dynamic"
}
