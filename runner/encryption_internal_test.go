package runner

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// hostilePassphrase has what HCL, JSON and Go would each escape.
const hostilePassphrase = `pa"ss\word ${x} %{y} é \n`

// encryptionBody parses TF_ENCRYPTION's value as OpenTofu does
// (hclsyntax) and returns its body.
func encryptionBody(t *testing.T, config string) *hclsyntax.Body {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(config), EncryptionEnv, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("TF_ENCRYPTION does not parse: %s\n%s", diags, config)
	}
	return f.Body.(*hclsyntax.Body)
}

// chain is a target block's methods, the fallbacks followed, and its
// enforced flag.
func chain(t *testing.T, b *hclsyntax.Body, target string) (methods []string, enforced bool) {
	t.Helper()
	for _, blk := range b.Blocks {
		if blk.Type != target {
			continue
		}
		if a, ok := blk.Body.Attributes["enforced"]; ok {
			v, _ := a.Expr.Value(nil)
			enforced = v.True()
		}
		for body := blk.Body; body != nil; {
			m := body.Attributes["method"].Expr.(*hclsyntax.ScopeTraversalExpr).Traversal
			methods = append(methods, m.RootName()+"."+m[1].(hcl.TraverseAttr).Name+"."+m[2].(hcl.TraverseAttr).Name)
			next := body
			body = nil
			for _, f := range next.Blocks {
				if f.Type == "fallback" {
					body = f.Body
				}
			}
		}
	}
	return methods, enforced
}

func TestEncryptionConfig(t *testing.T) {
	kms := "key_provider \"aws_kms\" \"main\" {\n  kms_key_id = \"arn:aws:kms:eu-west-1:1:key/a\"\n  region     = \"eu-west-1\"\n  key_spec   = \"AES_256\"\n}\nkey_provider \"aws_kms\" \"old\" {\n  kms_key_id = \"arn:aws:kms:eu-west-1:1:key/b\"\n  region     = \"eu-west-1\"\n  key_spec   = \"AES_256\"\n}\n"
	for name, c := range map[string]struct {
		e        Encryption
		methods  []string
		enforced bool
	}{
		"passphrase": {Encryption{Passphrase: hostilePassphrase}, []string{"method.aes_gcm.current"}, true},
		"rotation": {Encryption{Passphrase: "the-new-passphrase-1", PassphraseID: "ns/key-2/p", FallbackPassphrase: hostilePassphrase, FallbackPassphraseID: "ns/key-1/p"},
			[]string{"method.aes_gcm.current", "method.aes_gcm.fallback"}, true},
		"migration": {Encryption{Passphrase: hostilePassphrase, Migrate: true},
			[]string{"method.aes_gcm.current", "method.unencrypted.migrate"}, false},
		"rotation and migration": {Encryption{Passphrase: hostilePassphrase, PassphraseID: "b", FallbackPassphrase: "the-old-passphrase-1", FallbackPassphraseID: "a", Migrate: true},
			[]string{"method.aes_gcm.current", "method.aes_gcm.fallback", "method.unencrypted.migrate"}, false},
		"kms": {Encryption{KeyProviders: kms, KeyProvider: "aws_kms.main", FallbackKeyProvider: "aws_kms.old"},
			[]string{"method.aes_gcm.current", "method.aes_gcm.fallback"}, true},
		"passphrase to kms": {Encryption{KeyProviders: kms, KeyProvider: "aws_kms.main", FallbackPassphrase: hostilePassphrase},
			[]string{"method.aes_gcm.current", "method.aes_gcm.fallback"}, true},
		"iterations": {Encryption{Passphrase: "the-new-passphrase-1", PassphraseID: "b", FallbackPassphrase: hostilePassphrase, FallbackPassphraseID: "a", Iterations: MinIterations},
			[]string{"method.aes_gcm.current", "method.aes_gcm.fallback"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			config, err := c.e.Config()
			if err != nil {
				t.Fatal(err)
			}
			b := encryptionBody(t, config)
			for _, target := range []string{"state", "plan"} {
				methods, enforced := chain(t, b, target)
				if !slices.Equal(methods, c.methods) || enforced != c.enforced {
					t.Errorf("%s: methods %v enforced %v, want %v %v\n%s", target, methods, enforced, c.methods, c.enforced, config)
				}
			}
			// Each passphrase reads back exactly (escaped by hclwrite, not
			// by hand), and the key providers named are those used.
			keys := map[string]string{}
			for _, blk := range b.Blocks {
				switch {
				case blk.Type == "key_provider" && blk.Labels[0] == "pbkdf2":
					v, diags := blk.Body.Attributes["passphrase"].Expr.Value(nil)
					if diags.HasErrors() {
						t.Fatal(diags)
					}
					keys[blk.Labels[1]] = v.AsString()
					alias, _ := blk.Body.Attributes["encrypted_metadata_alias"].Expr.Value(nil)
					keys[blk.Labels[1]+" alias"] = alias.AsString()
					// Unset, OpenTofu's default count: shipped configs are unchanged.
					if a, ok := blk.Body.Attributes["iterations"]; ok {
						v, _ := a.Expr.Value(nil)
						keys[blk.Labels[1]+" iterations"] = v.AsBigFloat().String()
					}
				case blk.Type == "method" && blk.Labels[0] == "aes_gcm":
					tr := blk.Body.Attributes["keys"].Expr.(*hclsyntax.ScopeTraversalExpr).Traversal
					keys[blk.Labels[1]+" uses"] = tr[1].(hcl.TraverseAttr).Name + "." + tr[2].(hcl.TraverseAttr).Name
				}
			}
			if c.e.Passphrase != "" && (keys["current"] != c.e.Passphrase || keys["current uses"] != "pbkdf2.current") {
				t.Errorf("current key: %q", keys)
			}
			// A key's metadata is kept under its name, whichever role it has.
			if c.e.Passphrase != "" && keys["current alias"] != "passphrase:"+cmp.Or(c.e.PassphraseID, "passphrase") {
				t.Errorf("current alias: %q", keys)
			}
			if c.e.FallbackPassphrase != "" && keys["fallback alias"] != "passphrase:"+cmp.Or(c.e.FallbackPassphraseID, "passphrase") {
				t.Errorf("fallback alias: %q", keys)
			}
			if c.e.FallbackPassphrase != "" && (keys["fallback"] != c.e.FallbackPassphrase || keys["fallback uses"] != "pbkdf2.fallback") {
				t.Errorf("fallback key: %q", keys)
			}
			want := ""
			if c.e.Iterations != 0 {
				want = strconv.Itoa(c.e.Iterations)
			}
			for _, k := range []string{"current", "fallback"} {
				if keys[k] != "" && keys[k+" iterations"] != want {
					t.Errorf("%s key's iterations: %q, want %q", k, keys[k+" iterations"], want)
				}
			}
			if c.e.KeyProvider != "" && keys["current uses"] != c.e.KeyProvider {
				t.Errorf("current key: %q", keys)
			}
			if c.e.FallbackKeyProvider != "" && keys["fallback uses"] != c.e.FallbackKeyProvider {
				t.Errorf("fallback key: %q", keys)
			}
		})
	}
}

func TestEncryptionConfigRefused(t *testing.T) {
	for name, c := range map[string]struct {
		e    Encryption
		want string
	}{
		"no key":                    {Encryption{Migrate: true}, "a passphrase or a key provider is required"},
		"short passphrase":          {Encryption{Passphrase: "fifteen-chars!!"}, "the passphrase has 15 characters: pbkdf2 needs at least 16"},
		"short fallback":            {Encryption{Passphrase: "sixteen-chars!!!", FallbackPassphrase: "short", FallbackPassphraseID: "old"}, "the fallback passphrase has 5 characters"},
		"one name for two keys":     {Encryption{Passphrase: "sixteen-chars!!!", FallbackPassphrase: "sixteen-chars!!?"}, `both named "passphrase"`},
		"both":                      {Encryption{Passphrase: "sixteen-chars!!!", KeyProviders: `key_provider "aws_kms" "a" {}`, KeyProvider: "aws_kms.a"}, "a passphrase and a key provider: give one"},
		"unknown provider":          {Encryption{KeyProviders: `key_provider "aws_kms" "a" {}`, KeyProvider: "aws_kms.b"}, `no key_provider "aws_kms" "b" block`},
		"malformed provider name":   {Encryption{KeyProviders: `key_provider "aws_kms" "a" {}`, KeyProvider: "a"}, "want <type>.<name>"},
		"not a key provider":        {Encryption{KeyProviders: `method "aes_gcm" "x" {}`, KeyProvider: "aws_kms.a"}, "a method block: want key_provider"},
		"attribute":                 {Encryption{KeyProviders: `x = 1`, KeyProvider: "aws_kms.a"}, "only key_provider blocks"},
		"syntax":                    {Encryption{KeyProviders: `key_provider "aws_kms" {`, KeyProvider: "aws_kms.a"}, "key providers:"},
		"the runner's own provider": {Encryption{KeyProviders: `key_provider "pbkdf2" "current" {}`, KeyProvider: "pbkdf2.current"}, "is the runner's own"},
		"too few iterations":        {Encryption{Passphrase: "sixteen-chars!!!", Iterations: MinIterations - 1}, "199999 pbkdf2 iterations: OpenTofu needs at least 200000"},
		"negative iterations":       {Encryption{Passphrase: "sixteen-chars!!!", Iterations: -1}, "-1 pbkdf2 iterations"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.e.Config()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			for _, s := range c.e.Secrets() {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("the error shows a passphrase: %v", err)
				}
			}
		})
	}
}

// Every process gets TF_ENCRYPTION (the runner builds one environment for
// all of them: init, plan, apply, show, state pull/push, import, ...),
// its keys are secrets, and a runner whose keys come later refuses to
// run until they are there.
func TestEncryptionEnv(t *testing.T) {
	r := &Runner{cfg: Config{Terraform: BinaryConfig{Distribution: DistributionTofu}, EncryptionLater: true, Env: map[string]string{"EXAMPLE_TOKEN": "a-token-value"}}}
	if err := r.encryptionReady(); !errors.Is(err, ErrEncryption) || !errors.Is(err, errNoEncryptionKeys) {
		t.Fatalf("before the keys: %v", err)
	}
	if _, ok := r.env(nil)[EncryptionEnv]; ok {
		t.Fatal("TF_ENCRYPTION set without keys")
	}
	e := &Encryption{Passphrase: hostilePassphrase, PassphraseID: "new", FallbackPassphrase: "the-old-passphrase-1", FallbackPassphraseID: "old"}
	if err := r.SetEncryption(e); err != nil {
		t.Fatal(err)
	}
	if err := r.encryptionReady(); err != nil {
		t.Fatal(err)
	}
	config, _ := e.Config()
	env := r.env(map[string]string{"PG_CONN_STR": "postgres://x"})
	if env[EncryptionEnv] != config || env["PG_CONN_STR"] == "" || env["EXAMPLE_TOKEN"] == "" {
		t.Fatalf("environment: %q", env)
	}
	secrets := r.secrets(nil)
	for _, s := range []string{hostilePassphrase, "the-old-passphrase-1", "a-token-value"} {
		if !slices.Contains(secrets, s) {
			t.Errorf("%q is not among the secrets scrubbed", s)
		}
	}
	// An error OpenTofu prints with the configuration quoted is scrubbed
	// process-wide.
	msg := (&Error{Op: "plan", Workspace: "w", Err: errors.New("TF_ENCRYPTION=" + config)}).Error()
	if strings.Contains(msg, hostilePassphrase) || strings.Contains(msg, "the-old-passphrase-1") {
		t.Fatalf("a passphrase shows in %q", msg)
	}
	if r.migrating() {
		t.Fatal("migrating without migrate")
	}
	terraform := &Runner{cfg: Config{Terraform: BinaryConfig{Distribution: DistributionTerraform}}}
	if err := terraform.SetEncryption(e); err == nil || !strings.Contains(err.Error(), "needs distribution tofu") {
		t.Fatalf("terraform: %v", err)
	}
}

// OpenTofu's decryption failures are ErrEncryption, and their message says
// what to check.
func TestEncryptionErrors(t *testing.T) {
	w := &workspace{key: "w"}
	for _, diags := range []string{
		"Error: Failed to load state: decryption failed for all provided methods: attempted decryption failed for state: cipher: message authentication failed",
		"Error loading state: encountered unencrypted payload without unencrypted method configured",
	} {
		err := w.newError("plan", errors.New("exit status 1"), []string{diags})
		if !errors.Is(err, ErrEncryption) || !strings.Contains(err.Error(), "state encryption: the configured key does not decrypt") {
			t.Errorf("%v", err)
		}
		if errors.Is(err, ErrStateLocked) || errors.Is(err, ErrStalePlan) {
			t.Errorf("%v: another kind too", err)
		}
	}
	if errors.Is(w.newError("plan", errors.New("exit status 1"), []string{"Error: something else"}), ErrEncryption) {
		t.Error("an unrelated error is ErrEncryption")
	}
}
