// Package tours checks that the tours of the code stay true to it: a
// package doc that walks through its files names every one of them, and
// the README's table names every package directory.
package tours

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// root is the repository, two levels up.
var root = filepath.Join("..", "..")

// TestPackageTours: a package doc that walks through its files (names
// four or more of them: a tour) names each of them.
func TestPackageTours(t *testing.T) {
	tours := 0
	for _, dir := range packageDirs(t) {
		doc, files, holder := packageDoc(t, dir)
		var missing []string
		for _, f := range files {
			if f != holder && !strings.Contains(doc, f) {
				missing = append(missing, f)
			}
		}
		if len(files)-len(missing) < 4 {
			continue // not a tour: a doc that names a file or two in passing
		}
		tours++
		for _, f := range missing {
			t.Errorf("%s: the package doc's tour does not name %s", dir, f)
		}
	}
	if tours < 2 {
		t.Fatalf("found %d tours; engine and runner have one", tours)
	}
}

// TestReadmeTable: every package directory is in the README's table of
// paths (top-level ones as `dir/`, internal ones by name in its row).
func TestReadmeTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	internalRow := regexp.MustCompile("(?m)^\\| `internal/` \\|.*$").FindString(readme)
	if internalRow == "" {
		t.Fatal("README has no `internal/` row")
	}
	for _, dir := range packageDirs(t) {
		parts := strings.Split(dir, string(filepath.Separator))
		switch {
		case parts[0] == "internal" && len(parts) > 1:
			if parts[1] != "tours" && !strings.Contains(internalRow, "`"+parts[1]+"`") {
				t.Errorf("README's internal/ row does not name %s", parts[1])
			}
		case parts[0] != "internal" && parts[0] != "test" && parts[0] != "hack":
			if !strings.Contains(readme, "`"+parts[0]+"/") {
				t.Errorf("README's table does not name %s/", parts[0])
			}
		}
	}
}

// packageDirs are the directories holding Go source, relative to root.
func packageDirs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			seen[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for d := range seen {
		if d != "." {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// packageDoc is the package doc of dir, its non-test files' names and
// the file that holds the doc.
func packageDoc(t *testing.T, dir string) (doc string, files []string, holder string) {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		files = append(files, n)
		f, err := parser.ParseFile(fset, filepath.Join(root, dir, n), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc += f.Doc.Text()
			holder = n
		}
	}
	return doc, files, holder
}

// TestEngineSeam: the front-ends reach terraform only through the engine
// (ADR 0016): ccm, servicelb, gatewaycontroller and review import neither
// runner nor renderer, and ccm stays within the 14 project packages the
// ADR counts. The two front-ends, servicelb and gatewaycontroller, are
// peers (ADR 0022): neither imports the other, nor ccm, which adapts and
// wires them.
func TestEngineSeam(t *testing.T) {
	const module = "github.com/example/cloud-provider-example/"
	frontEnds := []string{"servicelb", "gatewaycontroller"}
	for _, dir := range []string{"ccm", "servicelb", "gatewaycontroller", "review"} {
		imports := projectImports(t, dir, module)
		for _, below := range []string{"runner", "renderer"} {
			if imports[below] {
				t.Errorf("%s imports %s: it reaches terraform through the engine only", dir, below)
			}
		}
		if dir == "ccm" && len(imports) > 14 {
			t.Errorf("ccm imports %d project packages, more than 14: %v", len(imports), sortedKeys(imports))
		}
		if !slices.Contains(frontEnds, dir) {
			continue
		}
		for _, other := range append(frontEnds, "ccm") {
			if other != dir && imports[other] {
				t.Errorf("%s imports %s: the front-ends are peers, and ccm wires them", dir, other)
			}
		}
	}
}

// TestModelSeam: the load balancer model is below both front-ends and
// above the renderer: gateway (the Gateway API's decisions) and
// servicemodel (a Service's translation) describe load balancers in it
// without the renderer, and lbmodel imports neither a front-end nor what
// lies below the engine, nor the engine.
func TestModelSeam(t *testing.T) {
	const module = "github.com/example/cloud-provider-example/"
	if imports := projectImports(t, "gateway", module); imports["renderer"] || !imports["lbmodel"] {
		t.Errorf("gateway imports %v: it describes load balancers in lbmodel, never through the renderer", sortedKeys(imports))
	}
	imports := projectImports(t, "servicemodel", module)
	for _, other := range []string{"gateway", "gatewaycontroller", "ccm", "servicelb", "engine", "renderer", "runner", "review"} {
		if imports[other] || !imports["lbmodel"] {
			t.Errorf("servicemodel imports %v: it describes a Service's load balancer in lbmodel, below the engine and beside gateway", sortedKeys(imports))
			break
		}
	}
	imports = projectImports(t, "lbmodel", module)
	for _, above := range []string{"gateway", "gatewaycontroller", "ccm", "servicelb", "servicemodel", "engine", "renderer", "runner", "review"} {
		if imports[above] {
			t.Errorf("lbmodel imports %s: the model is what front-ends hand the engine, and imports neither", above)
		}
	}
	for _, user := range []string{"gateway", "engine", "renderer"} {
		if !projectImports(t, user, module)["lbmodel"] {
			t.Errorf("%s does not import lbmodel: the seam this test guards has moved", user)
		}
	}
}

// TestServiceLBTestsOverFakes: servicelb's tests see the engine and the
// cloud through fakes (issue 54), so they run without terraform or the
// simulator: none imports tftest, starts or builds the simulator, or
// opens an engine. The real ones are the e2e tests'.
func TestServiceLBTestsOverFakes(t *testing.T) {
	const module = "github.com/example/cloud-provider-example/"
	banned := map[string][]string{module + "engine": {"Open"}, module + "simulator/simtest": {"Start", "BuildBinary"}}
	files, err := filepath.Glob(filepath.Join(root, "servicelb", "*_test.go"))
	if err != nil || len(files) < 10 {
		t.Fatalf("servicelb's tests: %d files, %v; it has over 10", len(files), err)
	}
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]string{} // an import's name in the file: its path
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if path == module+"internal/tftest" {
				t.Errorf("%s imports %s: servicelb's tests run without terraform", p, path)
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			byName[name] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && slices.Contains(banned[byName[x.Name]], sel.Sel.Name) {
				t.Errorf("%s: %s.%s: servicelb's tests run over fakes of the engine and the cloud", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

// TestSmallTypes: no type of ccm or servicelb has more than 20 methods
// (issue 54): the Service front-end is small types that own their files,
// and the adapter stays an adapter.
func TestSmallTypes(t *testing.T) {
	for _, dir := range []string{"ccm", "servicelb"} {
		paths, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		methods := map[string]int{}
		fset := token.NewFileSet()
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
					methods[receiverName(fd.Recv.List[0].Type)]++
				}
			}
		}
		if len(methods) < 5 {
			t.Fatalf("%s: methods of %d types; it has more: the test reads the wrong files", dir, len(methods))
		}
		for typ, n := range methods {
			if n > 20 {
				t.Errorf("%s.%s has %d methods, more than 20", dir, typ, n)
			}
		}
	}
}

// receiverName is the type a method's receiver expression names.
func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

// TestReviewDocNamesBoard: review's package doc names every exported
// function and method of Board, so a reader learns there what Board does.
func TestReviewDocNamesBoard(t *testing.T) {
	doc, files, _ := packageDoc(t, "review")
	fset := token.NewFileSet()
	named := 0
	for _, n := range files {
		f, err := parser.ParseFile(fset, filepath.Join(root, "review", n), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || (fn.Recv != nil && types.ExprString(fn.Recv.List[0].Type) != "*Board") {
				continue
			}
			named++
			if !regexp.MustCompile(`\b` + fn.Name.Name + `\b`).MatchString(doc) {
				t.Errorf("review's doc does not name %s", fn.Name.Name)
			}
		}
	}
	if named < 20 {
		t.Fatalf("found %d exported functions and Board methods in review; it has over 30", named)
	}
}

// projectImports are the project packages that dir's non-test files import,
// by path below the module.
func projectImports(t *testing.T, dir, module string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, dir, n), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.HasPrefix(p, module) {
				out[strings.TrimPrefix(p, module)] = true
			}
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
