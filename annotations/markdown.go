package annotations

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DocsPath is where Markdown's output lives, relative to the repository root.
const DocsPath = "docs/annotations.md"

// Markdown renders docs/annotations.md from Definitions.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# Service annotations\n\n")
	b.WriteString("<!-- Generated from annotations/definitions.go by `go run ./hack/gen-annotation-docs`. Do not edit. -->\n\n")
	b.WriteString("Annotations on a Service of `type: LoadBalancer` that shape the Terraform the controller renders for it\n" +
		"(`examplectl render --service svc.yaml` shows the result). Values are trimmed, and an empty value counts as\n" +
		"not set. An invalid value, or an unknown `" + Prefix + "` annotation, fails rendering with an error\n" +
		"naming the annotation and the accepted values, so a typo never silently falls back to a default.\n\n")

	b.WriteString("| Annotation | Type | Default |\n|---|---|---|\n")
	for _, d := range Definitions {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", d.Name, anchor(d.Name), d.Kind, cell(text(d.Default)))
	}
	for _, d := range Definitions {
		fmt.Fprintf(&b, "\n## `%s`\n\n%s\n\n", d.Name, text(d.Description))
		fmt.Fprintf(&b, "- Type: %s\n", d.Kind)
		if d.Kind == KindEnum {
			fmt.Fprintf(&b, "- Accepted: `%s`\n", strings.Join(d.Accepted, "`, `"))
		} else {
			fmt.Fprintf(&b, "- Accepted: %s\n", text(strings.Join(d.Accepted, ", ")))
		}
		fmt.Fprintf(&b, "- Default: %s\n\n", text(d.Default))
		fmt.Fprintf(&b, "```yaml\nmetadata:\n  annotations:\n    %s: %q\n```\n", d.Name, d.Example)
	}
	b.WriteString("\n## Retired annotations\n\nThe controller ignores these (a Service carrying one keeps working) and says so in a\n" +
		"`RetiredAnnotation` warning event on the Service.\n\n")
	for _, n := range slices.Sorted(maps.Keys(Retired)) {
		fmt.Fprintf(&b, "- `%s`: %s.\n", n, text(Retired[n]))
	}
	return b.Bytes()
}

// anchor is GitHub's heading id: lower case, punctuation but '-' dropped.
func anchor(n Name) string {
	var b strings.Builder
	for _, r := range strings.ToLower(string(n)) {
		if r == '-' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// text keeps placeholders such as lb-<id> from being read as HTML tags.
func text(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}
