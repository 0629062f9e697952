// Command gen-provider-docs regenerates docs/provider from the provider's
// schema and examples/. Run it from anywhere in the repository:
//
//	go run ./hack/gen-provider-docs
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/example/cloud-provider-example/tfprovider/docgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen-provider-docs:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("finding the module root: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	pages, err := docgen.Generate(context.Background(), root)
	if err != nil {
		return err
	}
	if err := docgen.Write(root, pages); err != nil {
		return err
	}
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println("wrote", filepath.Join(docgen.OutputDir, n))
	}
	return nil
}
