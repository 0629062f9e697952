package runner

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// EncryptionEnv is the variable OpenTofu reads its encryption configuration
// from. The configuration travels in the environment only: the rendered
// files are read by reviewers and must never hold the key.
const EncryptionEnv = "TF_ENCRYPTION"

// MinPassphraseLen is the shortest passphrase OpenTofu's pbkdf2 key
// provider accepts (in bytes).
const MinPassphraseLen = 16

// MinIterations is the fewest pbkdf2 iterations OpenTofu (1.10) accepts.
// Its default (600,000) costs every tofu process about half a second of
// CPU per passphrase; fewer trade the passphrase's resistance to guessing
// for that CPU (tests run at the minimum).
const MinIterations = 200_000

// Encryption is OpenTofu's state and plan encryption: method aes_gcm, keyed
// by a passphrase (key provider pbkdf2) or by one of KeyProviders (a KMS).
type Encryption struct {
	// Passphrase keys the encryption; or KeyProvider names the key.
	Passphrase string
	// FallbackPassphrase (or FallbackKeyProvider) is the key before a
	// rotation: what it encrypted still reads, and is written again with
	// the current key.
	FallbackPassphrase string
	// PassphraseID and FallbackPassphraseID name the passphrases, not
	// secretly (their Secret: namespace/name/key; default "passphrase"): a
	// state keeps its key's metadata (pbkdf2's salt) under that name, where
	// the same key finds it after a rotation made it the fallback. Two
	// passphrases need two names.
	PassphraseID         string
	FallbackPassphraseID string
	// KeyProviders are key_provider blocks (HCL) passed through as they
	// are, for key providers other than a passphrase (aws_kms, gcp_kms,
	// openbao, ...).
	KeyProviders string
	// KeyProvider and FallbackKeyProvider name blocks of KeyProviders as
	// "<type>.<name>" (aws_kms.main).
	KeyProvider         string
	FallbackKeyProvider string
	// Migrate reads unencrypted states and plans too (a fallback to the
	// method unencrypted, so nothing is enforced): a state read so is
	// written back encrypted by its next apply.
	Migrate bool
	// Iterations is pbkdf2's work factor for keys written from now on
	// (at least MinIterations); 0 is OpenTofu's default. A state keeps
	// the count it was encrypted with in its metadata, so changing it
	// never stops a state from reading.
	Iterations int
}

// ErrEncryption means OpenTofu could not decrypt a state or a plan: the key
// is wrong, or the data is unencrypted and migration is off.
var ErrEncryption = errors.New("state encryption")

// Names of the blocks the runner renders; KeyProviders' blocks keep theirs.
const (
	encCurrent  = "current"
	encFallback = "fallback"
	encMigrate  = "migrate"
	// defaultPassphraseID names a passphrase given no name.
	defaultPassphraseID = "passphrase"
)

// Secrets are the values of e that must never be shown.
func (e *Encryption) Secrets() []string {
	var out []string
	for _, v := range []string{e.Passphrase, e.FallbackPassphrase} {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Validate checks e without the keys' values mattering beyond their length.
func (e *Encryption) Validate() error {
	_, err := e.Config()
	return err
}

// Config is e as OpenTofu's encryption configuration (the body of an
// encryption block, what TF_ENCRYPTION holds), built with hclwrite.
func (e *Encryption) Config() (string, error) {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	providers, err := parseKeyProviders(e.KeyProviders)
	if err != nil {
		return "", err
	}
	id, fallbackID := cmp.Or(e.PassphraseID, defaultPassphraseID), cmp.Or(e.FallbackPassphraseID, defaultPassphraseID)
	if e.Passphrase != "" && e.FallbackPassphrase != "" && id == fallbackID {
		return "", fmt.Errorf("encryption: the passphrase and the fallback passphrase are both named %q: a rotated key needs a name (Secret or key) of its own", id)
	}
	current, err := e.key(body, encCurrent, e.Passphrase, id, e.KeyProvider, providers, "passphrase", "key provider")
	if err != nil {
		return "", err
	}
	if current == nil {
		return "", errors.New("encryption: a passphrase or a key provider is required")
	}
	if e.Iterations != 0 && e.Iterations < MinIterations {
		return "", fmt.Errorf("encryption: %d pbkdf2 iterations: OpenTofu needs at least %d (0: its default)", e.Iterations, MinIterations)
	}
	fallback, err := e.key(body, encFallback, e.FallbackPassphrase, fallbackID, e.FallbackKeyProvider, providers, "fallback passphrase", "fallback key provider")
	if err != nil {
		return "", err
	}
	for _, b := range providers {
		body.AppendBlock(b)
	}
	// aes_gcm with each key; the chain of methods: current, then the
	// fallback, then unencrypted when migrating.
	chain := []hcl.Traversal{method(body, "aes_gcm", encCurrent, current)}
	if fallback != nil {
		chain = append(chain, method(body, "aes_gcm", encFallback, fallback))
	}
	if e.Migrate {
		chain = append(chain, method(body, "unencrypted", encMigrate, nil))
	}
	for _, target := range []string{"state", "plan"} {
		t := body.AppendNewBlock(target, nil).Body()
		t.SetAttributeTraversal("method", chain[0])
		// Enforced refuses the unencrypted method anywhere in the chain.
		t.SetAttributeValue("enforced", cty.BoolVal(!e.Migrate))
		for _, m := range chain[1:] {
			t = t.AppendNewBlock("fallback", nil).Body()
			t.SetAttributeTraversal("method", m)
		}
	}
	return string(f.Bytes()), nil
}

// key renders the pbkdf2 key provider of passphrase, or checks that
// provider names one of providers, and returns the key's traversal (nil
// for none).
func (e *Encryption) key(body *hclwrite.Body, name, passphrase, id, provider string, providers []*hclwrite.Block, what, providerWhat string) (hcl.Traversal, error) {
	switch {
	case passphrase != "" && provider != "":
		return nil, fmt.Errorf("encryption: a %s and a %s: give one", what, providerWhat)
	case passphrase != "":
		if len(passphrase) < MinPassphraseLen {
			return nil, fmt.Errorf("encryption: the %s has %d characters: pbkdf2 needs at least %d", what, len(passphrase), MinPassphraseLen)
		}
		kp := body.AppendNewBlock("key_provider", []string{"pbkdf2", name}).Body()
		kp.SetAttributeValue("passphrase", cty.StringVal(passphrase))
		// Unaliased, the metadata would be kept under the block's address,
		// which is another after a rotation (current becomes fallback).
		kp.SetAttributeValue("encrypted_metadata_alias", cty.StringVal("passphrase:"+id))
		if e.Iterations != 0 {
			kp.SetAttributeValue("iterations", cty.NumberIntVal(int64(e.Iterations)))
		}
		return traversal("key_provider", "pbkdf2", name), nil
	case provider != "":
		typ, pname, ok := strings.Cut(provider, ".")
		if !ok || typ == "" || pname == "" || strings.Contains(pname, ".") {
			return nil, fmt.Errorf("encryption: %s %q: want <type>.<name> of a key_provider block", providerWhat, provider)
		}
		for _, b := range providers {
			if l := b.Labels(); l[0] == typ && l[1] == pname {
				return traversal("key_provider", typ, pname), nil
			}
		}
		return nil, fmt.Errorf("encryption: %s %q: no key_provider %q %q block among the key providers", providerWhat, provider, typ, pname)
	}
	return nil, nil
}

// parseKeyProviders reads text as key_provider blocks, and nothing else.
func parseKeyProviders(text string) ([]*hclwrite.Block, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	f, diags := hclwrite.ParseConfig([]byte(text), "keyProviders", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("encryption: key providers: %s", diags.Error())
	}
	if len(f.Body().Attributes()) > 0 {
		return nil, errors.New("encryption: key providers: only key_provider blocks, no attributes")
	}
	blocks := f.Body().Blocks()
	for _, b := range blocks {
		if b.Type() != "key_provider" || len(b.Labels()) != 2 {
			return nil, fmt.Errorf("encryption: key providers: a %s block: want key_provider \"<type>\" \"<name>\" blocks only", b.Type())
		}
		if b.Labels()[1] == encCurrent || b.Labels()[1] == encFallback {
			if b.Labels()[0] == "pbkdf2" {
				return nil, fmt.Errorf("encryption: key providers: key_provider \"pbkdf2\" %q is the runner's own: choose another name", b.Labels()[1])
			}
		}
	}
	return blocks, nil
}

// method renders a method block using keys (none for unencrypted) and
// returns its traversal.
func method(body *hclwrite.Body, typ, name string, keys hcl.Traversal) hcl.Traversal {
	b := body.AppendNewBlock("method", []string{typ, name}).Body()
	if keys != nil {
		b.SetAttributeTraversal("keys", keys)
	}
	return traversal("method", typ, name)
}

func traversal(root string, attrs ...string) hcl.Traversal {
	t := hcl.Traversal{hcl.TraverseRoot{Name: root}}
	for _, a := range attrs {
		t = append(t, hcl.TraverseAttr{Name: a})
	}
	return t
}

// encryptionFailed tells whether terraform's diagnostics say that a state or
// plan could not be decrypted (OpenTofu's words, internal/encryption).
func encryptionFailed(diags string) bool {
	for _, s := range []string{
		"decryption failed for all provided methods",
		"encountered unencrypted payload without unencrypted method configured",
		"invalid encrypted payload version",
	} {
		if strings.Contains(diags, s) {
			return true
		}
	}
	return false
}

// KeyProviderNames checks text as key_provider blocks and returns their
// names as "<type>.<name>" (for the cloud config's validation).
func KeyProviderNames(text string) ([]string, error) {
	blocks, err := parseKeyProviders(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, b.Labels()[0]+"."+b.Labels()[1])
	}
	return out, nil
}
