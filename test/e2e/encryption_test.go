package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
)

// TestStateEncryptedThroughTheController: with terraform.encryption, the
// controller reads its passphrase from a Secret in its namespace, as the
// chart's RBAC lets it, and OpenTofu writes the state it keeps in the
// kubernetes backend encrypted: the Secret holds an envelope, not a state,
// and the passphrase is in no log, event or record. The Service is served
// and deleted as without encryption. (Rotation, the wrong key and the
// other backends: runner's TestEncryptionOnEveryBackend.)
func TestStateEncryptedThroughTheController(t *testing.T) {
	testsize.SkipShort(t, "OpenTofu through the controller (runner tests encryption in make test-short too)")
	t.Parallel()
	const passphrase = "e2e-state-passphrase-0123456789"
	key := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "state-key", Namespace: namespace},
		StringData: map[string]string{"passphrase": passphrase}}
	e := newEnv(t, options{tc: tftest.OpenTofu(t), state: "kubernetes", secrets: []*v1.Secret{key},
		encryption: map[string]any{"passphraseSecret": map[string]any{"name": "state-key", "key": "passphrase"}, "iterations": runner.MinIterations}})
	e.addNode("node-a", "ex-west-1a")
	services := e.kube.CoreV1().Services("default")
	_, err := services.Create(testkit.Context(t), lbService("enc", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitIngress("enc", 90*time.Second)

	s, err := e.stateSecret("default", "enc")
	if err != nil || s == nil {
		t.Fatalf("no state Secret: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.Data["tfstate"]))
	testkit.Must(t, err)
	stored, err := io.ReadAll(zr)
	testkit.Must(t, err)
	var envelope struct {
		Version   *int            `json:"version"`
		Resources json.RawMessage `json:"resources"`
		Encrypted string          `json:"encryption_version"`
		// Meta is each key provider's metadata (base64 of JSON).
		Meta map[string]string `json:"meta"`
	}
	testkit.Must(t, json.Unmarshal(stored, &envelope))
	if envelope.Encrypted == "" || envelope.Version != nil || envelope.Resources != nil || bytes.Contains(stored, []byte("example_load_balancer")) {
		t.Fatalf("the state Secret %s holds a readable state, not an encrypted one:\n%.400s", s.Name, stored)
	}
	// terraform.encryption.iterations reached tofu: the key was derived
	// with that work factor, which the state keeps to be read with.
	if meta := decodedMeta(t, envelope.Meta); !strings.Contains(fmt.Sprint(meta), fmt.Sprintf(`"iterations":%d`, runner.MinIterations)) {
		t.Fatalf("the key provider's metadata does not show %d iterations: %v", runner.MinIterations, meta)
	}

	// The passphrase reached tofu through its environment only.
	logData, err := os.ReadFile(e.ccmLog)
	testkit.Must(t, err)
	if bytes.Contains(logData, []byte(passphrase)) {
		t.Fatal("the controller's log shows the passphrase")
	}
	evs, err := e.kube.CoreV1().Events("default").List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	cms, err := e.kube.CoreV1().ConfigMaps(namespace).List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	if strings.Contains(fmt.Sprint(evs.Items), passphrase) || strings.Contains(fmt.Sprint(cms.Items), passphrase) {
		t.Fatal("an event or a plan record shows the passphrase")
	}

	// Deleting reads the encrypted state and destroys what it holds.
	testkit.Must(t, services.Delete(testkit.Context(t), "enc", metav1.DeleteOptions{}))
	testkit.Eventually(t, 90*time.Second, "load balancer and state Secret gone", func() error {
		if n := e.lbCount(); n != 0 {
			return fmt.Errorf("%d load balancers", n)
		}
		s, err := e.stateSecret("default", "enc")
		if err != nil {
			return err
		}
		if s != nil {
			return fmt.Errorf("state Secret %s still there", s.Name)
		}
		return nil
	})
}

// decodedMeta is an encrypted state's key provider metadata, decoded.
func decodedMeta(t testing.TB, meta map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range meta {
		data, err := base64.StdEncoding.DecodeString(v)
		testkit.Must(t, err)
		out[k] = string(data)
	}
	return out
}
