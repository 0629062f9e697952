package engine_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
)

// Through the engine, on OpenTofu with state encryption, as the controller
// runs it: the state stored is encrypted, and so is a plan awaiting
// approval as the plan store keeps it; a controller restarted with a
// rotated key (the old one as fallback) applies that approved plan and
// writes the state under the new key; one restarted with only the old key
// is refused with an error naming encryption, and the state is left as it
// was. No passphrase reaches a plan text or an error.
func TestEncryptionThroughTheEngine(t *testing.T) {
	tofu := tftest.OpenTofu(t)
	store := newMemStore()
	// pbkdf2 at its minimum work factor: a third of the default's CPU.
	key1 := runner.Encryption{Passphrase: "engine passphrase number one", PassphraseID: "example-ccm/state-key-1/passphrase", Iterations: runner.MinIterations}
	key2 := runner.Encryption{Passphrase: "engine passphrase number two", PassphraseID: "example-ccm/state-key-2/passphrase",
		FallbackPassphrase: key1.Passphrase, FallbackPassphraseID: key1.PassphraseID, Iterations: runner.MinIterations}
	f := newFixtureOn(t, tofu, 2, engine.Options{})
	f.encryption = &key1
	eng := f.engine(t, 2, engine.Options{Plans: store, PlanText: true})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("sealed", 80)
	stored := func() []byte {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(f.stateDir, "*.tfstate"))
		if len(files) != 1 {
			t.Fatalf("state files: %v", files)
		}
		data, err := os.ReadFile(files[0])
		testkit.Must(t, err)
		if !bytes.Contains(data, []byte(`"encryption_version"`)) || bytes.Contains(data, []byte("example_load_balancer")) || bytes.Contains(data, []byte(`"resources"`)) {
			t.Fatalf("the stored state is readable:\n%s", data)
		}
		return data
	}
	noKey := func(what, text string) {
		t.Helper()
		for _, k := range []string{key1.Passphrase, key2.Passphrase} {
			if strings.Contains(text, k) {
				t.Fatalf("%s shows a passphrase: %s", what, text)
			}
		}
	}

	applied(t, eng, svc, nodes)
	created := stored()
	// A change awaiting approval: the plan kept for it is encrypted.
	svc.Spec.Ports[0].Port = 8080
	id, out := planned(t, eng, svc, nodes)
	store.keep(t, string(svc.UID), out)
	kept := store.kept[out.Workspace].Pending
	if bytes.HasPrefix(kept.Data, []byte("PK")) || !bytes.Contains(kept.Data, []byte(`"encryption_version"`)) {
		t.Fatalf("the kept plan is not encrypted: %q", kept.Data[:min(40, len(kept.Data))])
	}
	if !strings.Contains(out.Awaiting.Text, "8080") {
		t.Fatalf("plan text: %q", out.Awaiting.Text)
	}
	noKey("the plan text", out.Awaiting.Text)

	// Restarted with the key rotated: the approval applies the kept plan.
	f.encryption = &key2
	rotated := f.engine(t, 2, engine.Options{Plans: store, PlanText: true})
	_, out, err := rotated.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual, id))
	if err != nil || out.Applied == nil || out.Applied.ID != id {
		t.Fatalf("approved after the rotation: %+v %v", out, err)
	}
	store.keep(t, string(svc.UID), out)
	after := stored()
	if bytes.Equal(after, created) {
		t.Fatal("the state was not written again")
	}
	if lbs := f.allLBs(t); len(lbs) != 1 || lbs[0].Listeners[0].Port != 8080 {
		t.Fatalf("load balancers: %+v", lbs)
	}

	// Restarted with the old key alone: refused, naming encryption.
	f.encryption = &runner.Encryption{Passphrase: key1.Passphrase, PassphraseID: key1.PassphraseID, Iterations: key1.Iterations}
	old := f.engine(t, 2, engine.Options{Plans: store, PlanText: true})
	svc.Spec.Ports[0].Port = 9090
	_, _, err = old.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if !errors.Is(err, runner.ErrEncryption) || !strings.Contains(err.Error(), "state encryption") {
		t.Fatalf("the old key after the rotation: %v", err)
	}
	noKey("the error", err.Error())
	if !bytes.Equal(stored(), after) {
		t.Fatal("the refused run changed the stored state")
	}
}
