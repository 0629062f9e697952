// Command gen-annotation-docs writes docs/annotations.md from the annotation
// definitions. Run it from the repository root: go run ./hack/gen-annotation-docs
package main

import (
	"fmt"
	"os"

	"github.com/example/cloud-provider-example/annotations"
)

func main() {
	if err := os.WriteFile(annotations.DocsPath, annotations.Markdown(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gen-annotation-docs: %v (run it from the repository root)\n", err)
		os.Exit(1)
	}
	fmt.Println("wrote", annotations.DocsPath)
}
