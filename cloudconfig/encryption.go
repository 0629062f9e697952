package cloudconfig

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/example/cloud-provider-example/runner"
)

// EncryptionConfig is OpenTofu's state and plan encryption
// (terraform.encryption, distribution tofu only; docs/opentofu.md). The
// keys are read from Kubernetes Secrets by the controller and reach tofu
// through its environment only, never a rendered file.
type EncryptionConfig struct {
	// PassphraseSecret holds the passphrase (pbkdf2, at least 16
	// characters); or KeyProvider names the key.
	PassphraseSecret *SecretKeyRef `json:"passphraseSecret,omitempty"`
	// FallbackPassphraseSecret is the key before a rotation: what it
	// encrypted still reads, and is written again with the current key.
	FallbackPassphraseSecret *SecretKeyRef `json:"fallbackPassphraseSecret,omitempty"`
	// KeyProviders are OpenTofu key_provider blocks (HCL), passed through
	// as they are (aws_kms, gcp_kms, openbao, ...): no secret in them,
	// the cloud config is readable by reviewers.
	KeyProviders string `json:"keyProviders,omitempty"`
	// KeyProvider and FallbackKeyProvider name blocks of KeyProviders
	// ("aws_kms.main") instead of a passphrase.
	KeyProvider         string `json:"keyProvider,omitempty"`
	FallbackKeyProvider string `json:"fallbackKeyProvider,omitempty"`
	// Migrate reads unencrypted states and plans too: each is written
	// encrypted by its object's next apply. Turn it off once done.
	Migrate bool `json:"migrate,omitempty"`
	// Iterations is the passphrases' pbkdf2 work factor (at least
	// runner.MinIterations); unset, OpenTofu's default. Fewer cost every
	// tofu process less CPU and make a stolen state easier to guess at.
	Iterations int `json:"iterations,omitempty"`
}

// SecretKeyRef is one key of a Secret.
type SecretKeyRef struct {
	// Namespace defaults to review.namespace, the controller's own, whose
	// Secrets it may read (deploy/base/role.yaml).
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Key       string `json:"key"`
}

// String names the key, never its value: namespace/name/key.
func (r SecretKeyRef) String() string { return r.Namespace + "/" + r.Name + "/" + r.Key }

func (e *EncryptionConfig) defaults(namespace string) {
	for _, r := range []*SecretKeyRef{e.PassphraseSecret, e.FallbackPassphraseSecret} {
		if r != nil && r.Namespace == "" {
			r.Namespace = namespace
		}
	}
}

// validate checks terraform.encryption, naming the field.
func (e *EncryptionConfig) validate(distribution string, bad func(field, format string, args ...any)) {
	const f = "terraform.encryption"
	if distribution != string(runner.DistributionTofu) {
		bad(f, "needs distribution tofu (Terraform has no state encryption)")
		return
	}
	names, err := runner.KeyProviderNames(e.KeyProviders)
	if err != nil {
		bad(f+".keyProviders", "%s", strings.TrimPrefix(err.Error(), "encryption: key providers: "))
	}
	for _, k := range []struct {
		secretField, providerField string
		secret                     *SecretKeyRef
		provider                   string
	}{
		{"passphraseSecret", "keyProvider", e.PassphraseSecret, e.KeyProvider},
		{"fallbackPassphraseSecret", "fallbackKeyProvider", e.FallbackPassphraseSecret, e.FallbackKeyProvider},
	} {
		switch {
		case k.secret != nil && k.provider != "":
			bad(f+"."+k.secretField, "and %s.%s: give one", f, k.providerField)
		case k.secret != nil:
			k.secret.validate(f+"."+k.secretField, bad)
		case k.provider != "" && err == nil && !slices.Contains(names, k.provider):
			bad(f+"."+k.providerField, "%q is not a block of keyProviders (have %v; want <type>.<name>)", k.provider, names)
		}
	}
	if e.PassphraseSecret == nil && e.KeyProvider == "" {
		bad(f, "passphraseSecret or keyProvider is required")
	}
	if a, b := e.PassphraseSecret, e.FallbackPassphraseSecret; a != nil && b != nil && *a == *b {
		bad(f+".fallbackPassphraseSecret", "names the passphrase's own key (%s): a rotated key goes into a Secret or key of its own", a)
	}
	if e.KeyProvider != "" && e.KeyProvider == e.FallbackKeyProvider {
		bad(f+".fallbackKeyProvider", "is keyProvider itself")
	}
	if e.Iterations != 0 && e.Iterations < runner.MinIterations {
		bad(f+".iterations", "%d: OpenTofu's pbkdf2 needs at least %d (unset: its default, 600000)", e.Iterations, runner.MinIterations)
	}
}

func (r *SecretKeyRef) validate(field string, bad func(field, format string, args ...any)) {
	if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
		bad(field+".name", "%q: %s", r.Name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
		bad(field+".namespace", "%q: %s", r.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(r.Key); len(errs) > 0 {
		bad(field+".key", "%q: %s", r.Key, strings.Join(errs, "; "))
	}
}
