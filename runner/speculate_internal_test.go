package runner

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// A preview waits for a terraform slot only within its budget: with every
// slot taken, it is ErrBusy (the webhook then compares renderings).
func TestSpeculateBusy(t *testing.T) {
	tc := tftest.Get(t)
	r, err := New(context.Background(), Config{
		Terraform: BinaryConfig{Distribution: Distribution(tc.Distribution), Path: tc.Terraform},
		WorkDir:   filepath.Join(t.TempDir(), "work"), CLIConfigFile: tc.CLIConfig, LockFile: tc.LockFile, Concurrency: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	held, err := r.slots.get(t.Context(), ClusterShare)
	if err != nil {
		t.Fatal(err)
	}
	defer r.slots.put(held)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	job := Job{Key: "busy", Files: map[string][]byte{"main.tf": []byte("terraform {}\n")}}
	if _, err := r.Speculate(ctx, job); !errors.Is(err, ErrBusy) {
		t.Fatalf("Speculate with every slot taken: %v, want ErrBusy", err)
	}
	if _, err := r.Speculate(t.Context(), Job{Key: ".preview", Files: job.Files}); err == nil {
		t.Fatal("a key outside the work directory's workspaces was accepted")
	}
}
