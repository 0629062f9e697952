package cloudconfig

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
)

// tofuWith is the minimal config on OpenTofu with terraform.encryption
// set to enc (YAML flow).
func tofuWith(enc string) string {
	return strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl",
		"lockFile: /opt/example/lock.hcl, distribution: tofu, binary: /usr/local/bin/tofu, encryption: "+enc, 1)
}

func TestEncryptionConfig(t *testing.T) {
	c, err := Load([]byte(tofuWith(`{passphraseSecret: {name: state-key, key: passphrase}, fallbackPassphraseSecret: {namespace: vault, name: state-key-old, key: passphrase}, migrate: true}`)))
	if err != nil {
		t.Fatal(err)
	}
	e := c.Terraform.Encryption
	// The namespace defaults to the controller's own (review.namespace).
	if e.PassphraseSecret.String() != c.Review.Namespace+"/state-key/passphrase" || e.FallbackPassphraseSecret.String() != "vault/state-key-old/passphrase" || !e.Migrate {
		t.Fatalf("%+v %+v", e.PassphraseSecret, e.FallbackPassphraseSecret)
	}
	kms := `{keyProviders: "key_provider \"aws_kms\" \"main\" {\n  kms_key_id = \"k\"\n  region = \"eu-west-1\"\n  key_spec = \"AES_256\"\n}\n", keyProvider: aws_kms.main, fallbackPassphraseSecret: {name: state-key, key: passphrase}}`
	if _, err := Load([]byte(tofuWith(kms))); err != nil {
		t.Fatalf("kms: %v", err)
	}
	// pbkdf2's work factor: OpenTofu's default unless set.
	if e.Iterations != 0 {
		t.Fatalf("iterations %d without the setting", e.Iterations)
	}
	c, err = Load([]byte(tofuWith(`{passphraseSecret: {name: state-key, key: passphrase}, iterations: 200000}`)))
	if err != nil || c.Terraform.Encryption.Iterations != 200000 {
		t.Fatalf("iterations: %v %+v", err, c)
	}
}

func TestEncryptionConfigErrorsNameTheField(t *testing.T) {
	terraform := strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl",
		"lockFile: /opt/example/lock.hcl, encryption: {passphraseSecret: {name: state-key, key: passphrase}}", 1)
	for want, cfg := range map[string]string{
		"terraform.encryption: needs distribution tofu (Terraform has no state encryption)":     terraform,
		"terraform.encryption: passphraseSecret or keyProvider is required":                     tofuWith(`{migrate: true}`),
		"terraform.encryption.passphraseSecret.name: \"\"":                                      tofuWith(`{passphraseSecret: {key: passphrase}}`),
		"terraform.encryption.passphraseSecret.key: \"a/b\"":                                    tofuWith(`{passphraseSecret: {name: k, key: a/b}}`),
		"terraform.encryption.passphraseSecret.namespace: \"No\"":                               tofuWith(`{passphraseSecret: {namespace: "No", name: k, key: p}}`),
		"terraform.encryption.fallbackPassphraseSecret: names the passphrase's own key":         tofuWith(`{passphraseSecret: {name: k, key: p}, fallbackPassphraseSecret: {name: k, key: p}}`),
		"terraform.encryption.passphraseSecret: and terraform.encryption.keyProvider: give one": tofuWith(`{passphraseSecret: {name: k, key: p}, keyProviders: "key_provider \"aws_kms\" \"a\" {}", keyProvider: aws_kms.a}`),
		"terraform.encryption.keyProvider: \"aws_kms.b\" is not a block of keyProviders":        tofuWith(`{keyProviders: "key_provider \"aws_kms\" \"a\" {}", keyProvider: aws_kms.b}`),
		"terraform.encryption.keyProviders: a method block":                                     tofuWith(`{keyProviders: "method \"aes_gcm\" \"a\" {}", keyProvider: aws_kms.a}`),
		"terraform.encryption.fallbackKeyProvider: is keyProvider itself":                       tofuWith(`{keyProviders: "key_provider \"aws_kms\" \"a\" {}", keyProvider: aws_kms.a, fallbackKeyProvider: aws_kms.a}`),
		"terraform.encryption.iterations: 199999: OpenTofu's pbkdf2 needs at least 200000":      tofuWith(`{passphraseSecret: {name: k, key: p}, iterations: 199999}`),
		"terraform.encryption.iterations: -1":                                                   tofuWith(`{passphraseSecret: {name: k, key: p}, iterations: -1}`),
		"unknown field \"passphrase\"":                                                          tofuWith(`{passphrase: "never in the config"}`),
	} {
		refused(t, cfg, want)
	}
}
