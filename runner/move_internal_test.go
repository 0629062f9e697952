package runner

import (
	"encoding/json"
	"strings"
	"testing"
)

// Only the backend block reaches the scratch directory: no provider, no
// module, so init installs nothing.
func TestBackendOnly(t *testing.T) {
	files := map[string][]byte{
		"main.tf": []byte(`terraform {
  required_version = ">= 1.9.0"
  required_providers {
    example = { source = "example.com/example/example", version = "= 0.1.0" }
  }
  backend "pg" {
    schema_name = "ccm"
  }
}

provider "example" {
  region = "ex-west-1"
}

module "lb" {
  source = "./modules/loadbalancer"
}
`),
		"notes.txt": []byte("terraform { backend \"local\" {} }"),
	}
	got, err := backendOnly(files)
	if err != nil {
		t.Fatal(err)
	}
	want := "terraform {\n  backend \"pg\" {\n    schema_name = \"ccm\"\n  }\n}\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := backendOnly(map[string][]byte{"main.tf": []byte(`terraform {}`)}); err == nil {
		t.Fatal("a module without backend must be refused: its state is in the workspace")
	}
}

func TestEmptied(t *testing.T) {
	raw := []byte(`{"version":4,"terraform_version":"1.11.4","serial":7,"lineage":"l-1","outputs":{"id":{"value":"lb-1","type":"string"}},"resources":[{"mode":"managed"}],"check_results":[]}`)
	out, err := emptied(raw)
	if err != nil {
		t.Fatal(err)
	}
	var h stateHeader
	if err := json.Unmarshal(out, &h); err != nil {
		t.Fatal(err)
	}
	if h.Lineage != "l-1" || h.Serial != 8 || !h.empty() || strings.Contains(string(out), "lb-1") {
		t.Fatalf("emptied: %s", out)
	}
}
