package servicemodel

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

// update rewrites the golden files of the translation:
// go test ./servicemodel/ -run TestTranslateGolden -update
var update = flag.Bool("update", false, "rewrite testdata/translate/*.out.yaml from what Translate decides")

// translateIn is a golden case's input: the Service (its annotations
// read as the controller reads them, annotations.Read), the nodes and
// what the cluster's config and the engine decide (Config).
type translateIn struct {
	Config  Config          `json:"config"`
	Service *corev1.Service `json:"service"`
	Nodes   []*corev1.Node  `json:"nodes"`
	// path is the case's file, NAME.in.yaml.
	path string
}

// translateOut is the description the renderer renders, or the
// translation's refusal.
type translateOut struct {
	LoadBalancer *lbmodel.LoadBalancer `json:"loadBalancer,omitempty"`
	Error        string                `json:"error,omitempty"`
}

// goldenCases are the cases of testdata/translate, read strictly.
func goldenCases(t *testing.T) []translateIn {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "translate", "*.in.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []translateIn
	for _, p := range paths {
		c := translateIn{path: p}
		if b, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		} else if err := yaml.UnmarshalStrict(b, &c); err != nil || c.Service == nil {
			t.Fatalf("%s: %v (a case needs a service)", p, err)
		}
		cases = append(cases, c)
	}
	if len(cases) < 6 {
		t.Fatalf("found %d golden cases in testdata/translate, want at least 6", len(cases))
	}
	return cases
}

// TestTranslateGolden: each testdata/translate/NAME.in.yaml, translated,
// is NAME.out.yaml (rewritten with -update); a translated load balancer
// passes its own Validate.
func TestTranslateGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(c.path), ".in.yaml"), func(t *testing.T) {
			var out translateOut
			if lb, err := Translate(annotations.Read(c.Service), c.Nodes, c.Config); err != nil {
				out.Error = err.Error()
			} else {
				if err := lb.Validate(); err != nil {
					t.Errorf("the translation does not pass its own Validate: %v", err)
				}
				out.LoadBalancer = &lb
			}
			got, err := yaml.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(c.path, ".in.yaml") + ".out.yaml"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if want, err := os.ReadFile(golden); err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what is translated now (run with -update to rewrite it, and review the diff):\n%s", golden, got)
			}
		})
	}
}
