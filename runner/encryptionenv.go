package runner

import (
	"errors"
	"fmt"
	"maps"

	"k8s.io/klog/v2"
)

// encryptionEnv is what a runner gives every process for its encryption:
// TF_ENCRYPTION's value and the secrets in it.
type encryptionEnv struct {
	config  string
	secrets []string
	migrate bool
}

// errNoEncryptionKeys refuses operations while the keys are not yet known
// (Config.EncryptionLater): a state written now would be unencrypted.
var errNoEncryptionKeys = fmt.Errorf("%w: the keys are not read yet: nothing runs until they are", ErrEncryption)

// SetEncryption gives every terraform process started from now on e as its
// encryption (a rotation: the next operation of each workspace uses it).
// e's secrets are scrubbed from everything terraform says.
func (r *Runner) SetEncryption(e *Encryption) error {
	if r.cfg.Terraform.Distribution != DistributionTofu {
		return errors.New("runner: state encryption needs distribution tofu (Terraform has no state encryption)")
	}
	config, err := e.Config()
	if err != nil {
		return err
	}
	old := r.encryption.Swap(&encryptionEnv{config: config, secrets: e.Secrets(), migrate: e.Migrate})
	known.Set("state encryption", e.Secrets()...)
	if old == nil || old.config != config {
		klog.InfoS("state encryption", "keyProvider", keyName(e), "fallback", e.FallbackPassphrase != "" || e.FallbackKeyProvider != "", "migrate", e.Migrate)
	}
	return nil
}

// keyName says which key encrypts, never its value.
func keyName(e *Encryption) string {
	if e.KeyProvider != "" {
		return e.KeyProvider
	}
	return "pbkdf2 passphrase"
}

// encryptionReady refuses to run while encryption is configured and its
// keys are not known.
func (r *Runner) encryptionReady() error {
	if r.cfg.EncryptionLater && r.encryption.Load() == nil {
		return errNoEncryptionKeys
	}
	return nil
}

// migrating tells whether unencrypted states are being migrated: a plan
// without changes is then applied too, since that apply is what writes a
// state read unencrypted back encrypted.
func (r *Runner) migrating() bool {
	e := r.encryption.Load()
	return e != nil && e.migrate
}

// rekey gives w's handle the current encryption when it changed since
// w's last prepare (operations that do not prepare: applying a saved
// plan, destroy), and returns w's environment.
func (r *Runner) rekey(w *workspace) (map[string]string, error) {
	e := r.encryption.Load()
	if e == nil || w.env[EncryptionEnv] == e.config {
		return w.env, nil
	}
	env := maps.Clone(w.env)
	env[EncryptionEnv] = e.config
	if err := w.tf.SetEnv(env); err != nil {
		return nil, err
	}
	w.env = env
	w.secrets = append(w.secrets, e.secrets...)
	return env, nil
}
