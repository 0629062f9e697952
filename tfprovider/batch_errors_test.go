package tfprovider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// expectErrors checks that each case's configuration (a body without
// provider block) fails with its error, as a TestStep with ExpectError
// would, but in a few terraform processes for all cases instead of a
// plan (and apply) each: every case is a module of one root (cN/), and
// each diagnostic is the case's whose module it names. Terraform reports
// the errors of every module of a walk, and stops at the first walk that
// has any: each plan checks and drops the cases that failed it, until a
// plan succeeds; its apply must fail every case left. A destroy then
// removes what the apply created, before the caller's own checks of the
// cloud.
//
// Cases cannot use import blocks (root module only), and the objects
// they create must not share names (they are created side by side).
func (e *testEnv) expectErrors(t *testing.T, cases []configError) {
	t.Helper()
	s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: "errors"})
	dir := t.TempDir()
	at := attach(t, dir, s)
	left := make([]int, len(cases))
	for i, c := range cases {
		if err := os.Mkdir(filepath.Join(dir, caseModule(i)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, caseModule(i), "main.tf"), moduleRequirements+c.cfg)
		left[i] = i
	}
	root := func() {
		var b strings.Builder
		for _, i := range left {
			fmt.Fprintf(&b, "module %q {\n  source = \"./%[1]s\"\n}\n", caseModule(i))
		}
		writeFile(t, filepath.Join(dir, "main.tf"), e.cliConfig(b.String()))
	}
	root()
	// One plan checks every case: minutes on a busy machine, not bg's 30 s.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := at.tf.Init(ctx, at.opt); err != nil {
		t.Fatalf("terraform init: %v", err)
	}
	// check matches each case's error among the diagnostics of its
	// module, and drops it from left; the cases that did not fail stay.
	check := func(phase string, err error) {
		t.Helper()
		diags := caseDiagnostics(t, err.Error())
		var still []int
		for _, i := range left {
			got, failed := diags[caseModule(i)]
			if !failed {
				still = append(still, i)
				continue
			}
			if !regexp.MustCompile(cases[i].want).MatchString(got) {
				t.Errorf("case %d fails its %s without %q:\n%s\nconfiguration:\n%s", i, phase, cases[i].want, got, cases[i].cfg)
			}
		}
		left = still
	}
	for len(left) > 0 {
		_, err := at.tf.Plan(ctx, at.opt)
		if err == nil {
			break
		}
		n := len(left)
		check("plan", err)
		t.Logf("a plan failed %d cases, %d left", n-len(left), len(left))
		if len(left) == n {
			t.Fatalf("a plan failed but no case's module did: %v", err)
		}
		root()
	}
	if len(left) > 0 {
		err := at.tf.Apply(ctx, at.opt)
		if err == nil {
			t.Fatalf("cases %v applied without an error", left)
		}
		n := len(left)
		check("apply", err)
		t.Logf("the apply failed %d cases", n-len(left))
		for _, i := range left {
			t.Errorf("case %d applied without an error (want %q):\n%s", i, cases[i].want, cases[i].cfg)
		}
		if err := at.tf.Destroy(ctx, at.opt); err != nil {
			t.Fatalf("terraform destroy of the applied cases: %v", err)
		}
	}
}

// expectErrorsLeaving is expectErrors, then checkDestroy (a TestCase's
// CheckDestroy) on the cloud the cases left.
func (e *testEnv) expectErrorsLeaving(t *testing.T, checkDestroy resource.TestCheckFunc, cases []configError) {
	t.Helper()
	e.expectErrors(t, cases)
	// An empty state: the cases' destroy left none, as a TestCase's does.
	if err := checkDestroy(terraform.NewState()); err != nil { //nolint:staticcheck // the only constructor of a State with its root module
		t.Errorf("after the cases: %v", err)
	}
}

func caseModule(i int) string { return fmt.Sprintf("c%d", i) }

// moduleRequirements names the Example provider's source in a case's
// module, which inherits the root's provider configuration.
var moduleRequirements = fmt.Sprintf(`terraform {
  required_providers {
    example = { source = %q }
  }
}
`, Address)

var (
	diagStart = regexp.MustCompile(`^(Error|Warning): `)
	// A diagnostic names its module by the object (with module.c3...)
	// or by the file (on c3/main.tf line 7).
	diagModule = regexp.MustCompile(`(?:with module\.|on )(c\d+)[./]`)
)

// caseDiagnostics splits terraform's error output into diagnostics and
// joins the errors by the case module they name; an error that names none
// fails the test (it could be any case's). Warnings are not failures.
func caseDiagnostics(t *testing.T, out string) map[string]string {
	t.Helper()
	var blocks []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimPrefix(strings.TrimPrefix(line, "│"), " ")
		if diagStart.MatchString(line) || len(blocks) == 0 {
			blocks = append(blocks, "")
		}
		blocks[len(blocks)-1] += line + "\n"
	}
	byCase := map[string]string{}
	for _, b := range blocks {
		if !strings.HasPrefix(b, "Error: ") {
			continue // a warning, or the exit status before the first diagnostic
		}
		m := diagModule.FindStringSubmatch(b)
		if m == nil {
			t.Fatalf("a diagnostic names no case's module:\n%s", b)
		}
		byCase[m[1]] += b
	}
	if len(byCase) == 0 {
		t.Fatalf("no errors in terraform's output:\n%s", out)
	}
	return byCase
}
