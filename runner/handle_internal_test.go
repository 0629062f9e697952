package runner

import (
	"context"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// The version given to a handle is the one its commands check against: it
// runs nothing (the binary here would fail). If terraform-exec renames or
// retypes its cache field, this fails and says so: the runner then falls
// back to a version check per workspace.
func TestPresetVersion(t *testing.T) {
	tf, err := tfexec.NewTerraform(t.TempDir(), "/bin/false")
	if err != nil {
		t.Fatal(err)
	}
	want := version.Must(version.NewVersion("1.11.4"))
	if !presetVersion(tf, want) {
		t.Fatal("terraform-exec's Terraform has no execVersion *version.Version field any more: see presetVersion")
	}
	got, _, err := tf.Version(context.Background(), false)
	if err != nil || !got.Equal(want) {
		t.Fatalf("Version after preset = %v, %v; want %v without running the binary", got, err, want)
	}
}
