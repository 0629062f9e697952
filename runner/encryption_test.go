package runner_test

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/lib/pq" // the driver terraform's pg backend uses
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// encryptedBackend is a backend OpenTofu stores an object's state in, and
// how to read that state straight from where it is stored (the file, the
// Secret's data, the table row, the S3 object, the http server's body).
type encryptedBackend struct {
	cfg    state.Config
	stored func(t *testing.T, tg *state.Location) []byte
}

func encryptionBackends() map[string]func(t *testing.T) encryptedBackend {
	return map[string]func(t *testing.T) encryptedBackend{
		"local": func(t *testing.T) encryptedBackend {
			return encryptedBackend{
				cfg: state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}},
				stored: func(t *testing.T, tg *state.Location) []byte {
					data, err := os.ReadFile(tg.Block.Attrs[0].Value.AsString())
					testkit.Must(t, err)
					return data
				},
			}
		},
		"kubernetes": func(t *testing.T) encryptedBackend {
			c := testcluster.Shared(t)
			ns := c.Namespace(t)
			return encryptedBackend{
				cfg: state.Config{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: ns, KubeconfigPath: c.AdminKubeconfig}},
				stored: func(t *testing.T, tg *state.Location) []byte {
					s, err := c.Client.CoreV1().Secrets(ns).Get(testkit.Context(t), "tfstate-default-"+tg.Key, metav1.GetOptions{})
					testkit.Must(t, err)
					// The backend gzips the state into data.tfstate.
					zr, err := gzip.NewReader(bytes.NewReader(s.Data["tfstate"]))
					testkit.Must(t, err)
					data, err := io.ReadAll(zr)
					testkit.Must(t, err)
					return data
				},
			}
		},
		"pg": func(t *testing.T) encryptedBackend {
			srv := testpg.Start(t)
			t.Setenv("CCM_TEST_PG", srv.ConnStr)
			return encryptedBackend{
				cfg: state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_TEST_PG", SchemaName: "ccm_states"}},
				stored: func(t *testing.T, tg *state.Location) []byte {
					db, err := sql.Open("postgres", srv.ConnStr)
					testkit.Must(t, err)
					defer db.Close()
					var data []byte
					testkit.Must(t, db.QueryRowContext(testkit.Context(t), `SELECT data FROM ccm_states.states WHERE name = $1`, tg.CLIWorkspace).Scan(&data))
					return data
				},
			}
		},
		"s3": func(t *testing.T) encryptedBackend {
			srv := s3Server(t)
			return encryptedBackend{
				cfg: state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}},
				stored: func(t *testing.T, tg *state.Location) []byte {
					out, err := srv.Client().GetObject(testkit.Context(t), &s3.GetObjectInput{Bucket: aws.String("states"), Key: aws.String(tg.Block.Attrs[1].Value.AsString())})
					testkit.Must(t, err)
					defer out.Body.Close()
					data, err := io.ReadAll(out.Body)
					testkit.Must(t, err)
					return data
				},
			}
		},
		"http": func(t *testing.T) encryptedBackend {
			srv := testhttpbackend.Start(t)
			return encryptedBackend{
				cfg: state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states"}},
				stored: func(t *testing.T, tg *state.Location) []byte {
					return srv.States()["states/"+tg.Key]
				},
			}
		},
	}
}

// plainState tells whether data is a readable Terraform state, naming the
// load balancer; else it must be OpenTofu's encrypted envelope.
func plainState(t *testing.T, data []byte, name string) bool {
	t.Helper()
	var st struct {
		Version   *int            `json:"version"`
		Resources json.RawMessage `json:"resources"`
		Encrypted string          `json:"encryption_version"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("stored state is not JSON at all: %v", err)
	}
	if st.Version != nil && st.Resources != nil && bytes.Contains(data, []byte(name)) {
		return true
	}
	if st.Encrypted == "" || st.Version != nil || st.Resources != nil || bytes.Contains(data, []byte(name)) || bytes.Contains(data, []byte("example_load_balancer")) {
		t.Fatalf("stored state is neither a state nor an encrypted envelope:\n%s", data)
	}
	return false
}

const (
	passphrase1 = "first passphrase \"of\" the ${cluster}"
	passphrase2 = "second-passphrase-after-rotation"
	wrongKey    = "not-the-passphrase-anyone-used"
)

// On every backend OpenTofu runs here: an unencrypted state becomes
// encrypted after one apply with migrate on (an apply of a plan with no
// change); without migrate an unencrypted state is refused; the stored
// state is then OpenTofu's envelope, never a readable state; a saved plan
// is encrypted on disk; the wrong key fails naming encryption and leaves
// the stored state byte for byte; a rotated key (the old one as fallback)
// reads the old state and writes it again under the new key, which alone
// then reads it. No key reaches a file of the workspace or an error.
func TestEncryptionOnEveryBackend(t *testing.T) {
	testsize.SkipShort(t, "OpenTofu on five backends, about 40 processes each")
	backends := encryptionBackends()
	for _, name := range slices.Sorted(maps.Keys(backends)) {
		t.Run(name, func(t *testing.T) {
			tc := tftest.OpenTofu(t)
			b := backends[name](t)
			e := newEnv(t, nil, func(c *runner.Config) {
				c.Terraform = runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: tc.Terraform}
			})
			tg := serviceLocation(t, b.cfg, "enc")
			job := func(port int64) runner.Job {
				j := e.job(t, tg.Key, lbModule{name: "enc-lb", port: port, block: toBlock(tg.Block)})
				j.Env, j.CLIWorkspace, j.DeleteState, j.Exists = tg.Env, tg.CLIWorkspace, tg.Delete, tg.Exists
				return j
			}
			refresh := func(j runner.Job) error {
				_, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{Refresh: true})
				return err
			}
			// Each key is named by its Secret, as the controller names it.
			ids := map[string]string{passphrase1: "ns/state-key-1/passphrase", passphrase2: "ns/state-key-2/passphrase", wrongKey: "ns/state-key-1/passphrase"}
			setKey := func(enc runner.Encryption) {
				t.Helper()
				enc.PassphraseID, enc.FallbackPassphraseID = ids[enc.Passphrase], ids[enc.FallbackPassphrase]
				enc.Iterations = runner.MinIterations // pbkdf2 at a third of its default CPU
				testkit.Must(t, e.r.SetEncryption(&enc))
			}
			refused := func(what string, err error, before []byte) {
				t.Helper()
				if !errors.Is(err, runner.ErrEncryption) || !strings.Contains(err.Error(), "state encryption") {
					t.Fatalf("%s: want an encryption error, got %v", what, err)
				}
				for _, k := range []string{passphrase1, passphrase2, wrongKey} {
					if strings.Contains(err.Error(), k) {
						t.Fatalf("%s: the error shows a passphrase: %v", what, err)
					}
				}
				if after := b.stored(t, tg); !bytes.Equal(after, before) {
					t.Fatalf("%s: the stored state changed", what)
				}
			}

			// An unencrypted state, as before encryption was configured.
			e.ensure(t, job(80))
			plain := b.stored(t, tg)
			if !plainState(t, plain, "enc-lb") {
				t.Fatal("without encryption the stored state is not readable")
			}
			// Encryption without migrate refuses it, and writes nothing.
			setKey(runner.Encryption{Passphrase: passphrase1})
			refused("unencrypted state without migrate", refresh(job(80)), plain)
			// Migrate: the next apply (of a plan without changes) writes it
			// encrypted.
			setKey(runner.Encryption{Passphrase: passphrase1, Migrate: true})
			applies := e.r.Processes()["apply"]
			testkit.Must(t, refresh(job(80)))
			if e.r.Processes()["apply"] != applies+1 {
				t.Fatal("migrating: the plan without changes was not applied")
			}
			migrated := b.stored(t, tg)
			if plainState(t, migrated, "enc-lb") {
				t.Fatalf("after the migration the stored state is still readable:\n%s", migrated)
			}
			// Enforced again: the encrypted state reads (this plan reads
			// it), a saved plan is encrypted on disk (no zip), and applies.
			setKey(runner.Encryption{Passphrase: passphrase1})
			p, err := e.r.Plan(testkit.Context(t), job(81), runner.PlanOptions{})
			testkit.Must(t, err)
			planFile, err := os.ReadFile(p.File)
			testkit.Must(t, err)
			if bytes.HasPrefix(planFile, []byte("PK")) || !bytes.Contains(planFile, []byte(`"encryption_version"`)) {
				t.Fatalf("the saved plan is not encrypted: %q...", planFile[:min(len(planFile), 40)])
			}
			if _, err := e.r.Apply(testkit.Context(t), p); err != nil {
				t.Fatal(err)
			}
			first := b.stored(t, tg)
			if plainState(t, first, "enc-lb") {
				t.Fatal("after an apply the stored state is readable")
			}
			// The wrong key: refused naming encryption, nothing written.
			setKey(runner.Encryption{Passphrase: wrongKey})
			refused("wrong key", refresh(job(81)), first)
			// Rotation: the new key with the old one as fallback reads the
			// old state and writes it again under the new key.
			setKey(runner.Encryption{Passphrase: passphrase2, FallbackPassphrase: passphrase1})
			e.ensure(t, job(82))
			rotated := b.stored(t, tg)
			if plainState(t, rotated, "enc-lb") || bytes.Equal(rotated, first) {
				t.Fatal("after the rotation the stored state is readable or unchanged")
			}
			setKey(runner.Encryption{Passphrase: passphrase1})
			refused("the old key after the rotation", refresh(job(82)), rotated)
			setKey(runner.Encryption{Passphrase: passphrase2})
			testkit.Must(t, refresh(job(82)))
			if lbs := e.lbs(t, "enc-lb"); len(lbs) != 1 || lbs[0].Listeners[0].Port != 82 {
				t.Fatalf("load balancers: %+v", lbs)
			}
			for _, f := range walk(t, e.r, tg.Key) {
				for _, k := range []string{passphrase1, passphrase2, wrongKey} {
					if strings.Contains(f.content, k) {
						t.Fatalf("%s holds a passphrase", f.path)
					}
				}
			}
		})
	}
}

// TestEncryptionWithAKeyProvider: key_provider blocks of the cloud config
// reach OpenTofu as they are. A KMS is not reachable here, so the key
// provider is OpenTofu's external one running a script that speaks its
// protocol, as KMS plugins do (e.g. ovh/opentofu-kms-ovhcloud); it serves
// one fixed data key. A state encrypted with a passphrase is rotated to
// the provider (the passphrase as fallback) and then reads with the
// provider alone; without the provider it is refused.
func TestEncryptionWithAKeyProvider(t *testing.T) {
	tc := tftest.OpenTofu(t)
	b := encryptionBackends()["local"](t)
	e := newEnv(t, nil, func(c *runner.Config) {
		c.Terraform = runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: tc.Terraform}
	})
	script := filepath.Join(t.TempDir(), "kms.sh")
	testkit.Must(t, os.WriteFile(script, []byte(`#!/bin/sh
echo '{"magic":"OpenTofu-External-Key-Provider","version":1}'
in=$(cat)
key=AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=
if [ "$in" = "null" ]; then
  echo '{"keys":{"encryption_key":"'$key'"},"meta":{"external_data":{}}}'
else
  echo '{"keys":{"encryption_key":"'$key'","decryption_key":"'$key'"},"meta":{"external_data":{}}}'
fi
`), 0o700))
	providers := fmt.Sprintf("key_provider \"external\" \"kms\" {\n  command = [%q]\n}\n", script)
	tg := serviceLocation(t, b.cfg, "kms")
	job := func(port int64) runner.Job {
		j := e.job(t, tg.Key, lbModule{name: "kms-lb", port: port, block: toBlock(tg.Block)})
		j.Env, j.CLIWorkspace, j.DeleteState, j.Exists = tg.Env, tg.CLIWorkspace, tg.Delete, tg.Exists
		return j
	}
	setKey := func(enc runner.Encryption) {
		t.Helper()
		if enc.Passphrase != "" || enc.FallbackPassphrase != "" {
			enc.PassphraseID, enc.FallbackPassphraseID = "ns/state-key/passphrase", "ns/state-key/passphrase"
			enc.Iterations = runner.MinIterations
		}
		testkit.Must(t, e.r.SetEncryption(&enc))
	}

	setKey(runner.Encryption{Passphrase: passphrase1})
	e.ensure(t, job(80))
	byPassphrase := b.stored(t, tg)
	if plainState(t, byPassphrase, "kms-lb") {
		t.Fatal("the stored state is readable")
	}
	// To the key provider, the passphrase as fallback: the old state
	// reads, and the next apply writes it under the provider's key.
	setKey(runner.Encryption{KeyProviders: providers, KeyProvider: "external.kms", FallbackPassphrase: passphrase1})
	e.ensure(t, job(81))
	byProvider := b.stored(t, tg)
	if plainState(t, byProvider, "kms-lb") || bytes.Equal(byProvider, byPassphrase) {
		t.Fatal("after the rotation the stored state is readable or unchanged")
	}
	// The provider alone reads it; the passphrase alone no longer does.
	setKey(runner.Encryption{KeyProviders: providers, KeyProvider: "external.kms"})
	e.ensure(t, job(82))
	setKey(runner.Encryption{Passphrase: passphrase1})
	if _, err := e.r.Ensure(testkit.Context(t), job(82), runner.EnsureOptions{Refresh: true}); !errors.Is(err, runner.ErrEncryption) {
		t.Fatalf("the passphrase alone read a state the provider wrote: %v", err)
	}
	if lbs := e.lbs(t, "kms-lb"); len(lbs) != 1 || lbs[0].Listeners[0].Port != 82 {
		t.Fatalf("load balancers: %+v", lbs)
	}
}
