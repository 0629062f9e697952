package ccm

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/example/cloud-provider-example/cloudconfig"
)

// A passphrase is read from its Secret; a missing Secret or key, or a
// passphrase pbkdf2 refuses, is an error naming the field and the Secret,
// never the value.
func TestReadPassphrase(t *testing.T) {
	client := fake.NewClientset(&v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "example-ccm", Name: "state-key"},
		Data:       map[string][]byte{"passphrase": []byte("a passphrase long enough"), "short": []byte("too-short-key")},
	})
	ref := func(name, key string) cloudconfig.SecretKeyRef {
		return cloudconfig.SecretKeyRef{Namespace: "example-ccm", Name: name, Key: key}
	}
	const field = "terraform.encryption.passphraseSecret"
	if v, err := readPassphrase(context.Background(), client, field, ref("state-key", "passphrase")); err != nil || v != "a passphrase long enough" {
		t.Fatalf("%q %v", v, err)
	}
	for want, r := range map[string]cloudconfig.SecretKeyRef{
		field + `: read Secret example-ccm/gone`:                                                         ref("gone", "passphrase"),
		field + `: Secret example-ccm/state-key has no key "other"`:                                      ref("state-key", "other"),
		field + `: Secret example-ccm/state-key key "short" has 13 characters: pbkdf2 needs at least 16`: ref("state-key", "short"),
	} {
		_, err := readPassphrase(context.Background(), client, field, r)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "too-short-key") {
			t.Errorf("%v, want %q", err, want)
		}
	}
}
