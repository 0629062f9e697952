package ccm

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
)

// encryptionRead is how often the passphrase Secrets are read again (a
// Secret's new content is used from the next read); a failed read is
// retried at this pace too, and until one succeeds no terraform runs.
const encryptionRead = time.Minute

// encryptionKeys gives the runner the keys of terraform.encryption, read
// from their Secrets: they reach tofu through its environment only, and
// are scrubbed from events, plan records and the audit log.
type encryptionKeys struct {
	cfg    *cloudconfig.EncryptionConfig
	engine *engine.Engine
	redact func(source string, values ...string)
}

// run reads the keys now and then every encryptionRead, until ctx ends.
func (k *encryptionKeys) run(ctx context.Context, client kubernetes.Interface) {
	for {
		if err := k.load(ctx, client); err != nil {
			klog.ErrorS(err, "state encryption: keys not read; terraform waits for them", "retry", encryptionRead)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(encryptionRead):
		}
	}
}

// load reads the Secrets and hands the keys to the runner. A failure keeps
// the keys read before, if any.
func (k *encryptionKeys) load(ctx context.Context, client kubernetes.Interface) error {
	e := &engine.Encryption{KeyProviders: k.cfg.KeyProviders, KeyProvider: k.cfg.KeyProvider, FallbackKeyProvider: k.cfg.FallbackKeyProvider, Migrate: k.cfg.Migrate, Iterations: k.cfg.Iterations}
	var err error
	if r := k.cfg.PassphraseSecret; r != nil {
		if e.Passphrase, err = readPassphrase(ctx, client, "terraform.encryption.passphraseSecret", *r); err != nil {
			return err
		}
		e.PassphraseID = r.String()
	}
	if r := k.cfg.FallbackPassphraseSecret; r != nil {
		if e.FallbackPassphrase, err = readPassphrase(ctx, client, "terraform.encryption.fallbackPassphraseSecret", *r); err != nil {
			return err
		}
		e.FallbackPassphraseID = r.String()
	}
	// Scrubbed before any process can echo them.
	k.redact("state encryption", e.Secrets()...)
	if err := k.engine.SetEncryption(e); err != nil {
		return fmt.Errorf("terraform.encryption: %w", err)
	}
	return nil
}

// readPassphrase reads one key of a Secret; the error names the field and
// the Secret, never the value.
func readPassphrase(ctx context.Context, client kubernetes.Interface, field string, r cloudconfig.SecretKeyRef) (string, error) {
	s, err := client.CoreV1().Secrets(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: read Secret %s/%s: %w", field, r.Namespace, r.Name, err)
	}
	v, ok := s.Data[r.Key]
	switch {
	case !ok:
		return "", fmt.Errorf("%s: Secret %s/%s has no key %q", field, r.Namespace, r.Name, r.Key)
	case len(v) < engine.MinPassphraseLen:
		return "", fmt.Errorf("%s: Secret %s/%s key %q has %d characters: pbkdf2 needs at least %d", field, r.Namespace, r.Name, r.Key, len(v), engine.MinPassphraseLen)
	}
	return string(v), nil
}
