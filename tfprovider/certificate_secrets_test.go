package tfprovider

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// Where a certificate's key comes from in certWorkspace.
const (
	keyFromVariable          = "variable"           // a plain sensitive variable
	keyFromEphemeralVariable = "ephemeral variable" // TF_VAR_private_key_pem, ephemeral
	keyFromPrivateKeys       = "example_private_keys"
)

// certWorkspace is a root module with an https load balancer whose
// certificate's key comes from source: a variable (TF_VAR_private_key_pem,
// ephemeral or not) or the ephemeral resource example_private_keys
// (EXAMPLE_PRIVATE_KEYS), the ways a configuration keeps the key out of
// its plan files too.
func certWorkspace(e *testEnv, source string) string {
	key := "var.private_key_pem"
	decl := `
variable "private_key_pem" {
  type      = string
  sensitive = true%s
}
`
	switch source {
	case keyFromVariable:
		decl = fmt.Sprintf(decl, "")
	case keyFromEphemeralVariable:
		decl = fmt.Sprintf(decl, "\n  ephemeral = true")
	case keyFromPrivateKeys:
		key = `ephemeral.example_private_keys.tls.keys["web"]`
		decl = `
ephemeral "example_private_keys" "tls" {
  names = ["web"]
}
`
	}
	return e.cliConfig(fmt.Sprintf(`
variable "certificate_pem" {
  type = string
}
%s
variable "key_version" {
  type = number
}

resource "example_certificate" "web" {
  certificate_pem        = var.certificate_pem
  private_key_wo         = %s
  private_key_wo_version = var.key_version

  lifecycle {
    create_before_destroy = true
  }
}
`, decl, key)) + httpsLBConfig("[example_certificate.web.id]")
}

// newCertWorkspace starts a simulator and a working directory holding
// certWorkspace for it and source, initialized by tc's terraform with env.
func newCertWorkspace(t *testing.T, source string, tc tftest.Toolchain, env []string) (*testEnv, string) {
	t.Helper()
	e := newTestEnv(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.tf"), certWorkspace(e, source))
	copyLockFile(t, dir, tc.LockFile)
	runTF(t, tc.Terraform, dir, env, "init", "-input=false")
	return e, dir
}

// keyEnv passes the certificate and key in the environment (TF_VAR_
// variables, and EXAMPLE_PRIVATE_KEYS for example_private_keys): never on
// a command line, which terraform's log prints.
func keyEnv(c simtest.Cert, version int) []string {
	keys, _ := json.Marshal(map[string]string{"web": c.KeyPEM})
	return []string{"TF_VAR_certificate_pem=" + c.CertPEM, "TF_VAR_private_key_pem=" + c.KeyPEM,
		fmt.Sprintf("TF_VAR_key_version=%d", version), EnvPrivateKeys + "=" + string(keys)}
}

// runTF runs terraform (or tofu) in dir and returns its standard output;
// a failure fails the test.
func runTF(t *testing.T, bin, dir string, env []string, args ...string) string {
	t.Helper()
	out, err := tryTF(bin, dir, env, args...)
	if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(bin), args[0], err)
	}
	return out
}

func tryTF(bin, dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(bin, append([]string{args[0], "-no-color"}, args[1:]...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w\n%s%s", err, out, stderr.String())
	}
	return string(out), nil
}

// TestAccCertificate_keyNowhere runs the real terraform (provider from the
// offline mirror, trace log on) through create, rotation and destroy of a
// certificate served by a load balancer, and looks for the private keys
// everywhere terraform leaves something: each saved plan file (every entry
// of the archive) and its `terraform show -json`, the state and its
// backup, `terraform show -json` of the state, the trace log (terraform's
// and the provider's), and every other file of the working directory.
// Both ephemeral sources are tried: an ephemeral variable and the
// provider's example_private_keys. (A variable must be ephemeral:
// terraform stores the values of other variables in the plan file, so
// there the key would be found.)
func TestAccCertificate_keyNowhere(t *testing.T) {
	tftest.RequireAcceptance(t)
	for _, source := range []string{keyFromEphemeralVariable, keyFromPrivateKeys} {
		t.Run(source, func(t *testing.T) {
			t.Parallel()
			testKeyNowhere(t, source)
		})
	}
}

func testKeyNowhere(t *testing.T, source string) {
	bin := tftest.Get(t)
	first := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
	second := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
	secrets := []string{keyBody(first), keyBody(second)}

	// The log is read below, beside the working directory's files.
	logFile := filepath.Join(t.TempDir(), "terraform.log")
	base := []string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logFile}
	e, dir := newCertWorkspace(t, source, bin, bin.EnvList(base...))
	tf := bin.Terraform

	var plans []string
	for i, c := range []simtest.Cert{first, second} {
		env := bin.EnvList(append(base, keyEnv(c, i+1)...)...)
		plan := filepath.Join(dir, fmt.Sprintf("step%d.tfplan", i+1))
		runTF(t, tf, dir, env, "plan", "-input=false", "-out="+plan)
		plans = append(plans, plan)
		// The saved plan is applied: the key is given again (an ephemeral
		// variable is not in the plan file).
		runTF(t, tf, dir, env, "apply", "-input=false", plan)
		lb := e.loadBalancers(t)
		certs := listCerts(t, e)
		if len(lb) != 1 || len(certs) != 1 || certs[0].Fingerprint != c.Fingerprint ||
			lb[0].Listeners[1].CertificateIDs[0] != certs[0].ID {
			t.Fatalf("after apply %d: load balancers %+v, certificates %+v", i+1, lb, certs)
		}
	}
	plain := bin.EnvList()

	// Every place terraform wrote to.
	texts := map[string]string{}
	for _, plan := range plans {
		texts["show "+filepath.Base(plan)] = runTF(t, tf, dir, plain, "show", plan)
		texts["show -json "+filepath.Base(plan)] = runTF(t, tf, dir, plain, "show", "-json", plan)
		for name, body := range zipEntries(t, plan) {
			texts[filepath.Base(plan)+":"+name] = body
		}
	}
	texts["show -json terraform.tfstate"] = runTF(t, tf, dir, plain, "show", "-json", "terraform.tfstate")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 || strings.HasSuffix(p, ".tfplan") {
			return err // plans are read entry by entry above; the provider binary is a symlink
		}
		raw, err := os.ReadFile(p)
		texts[p] = string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	runTF(t, tf, dir, bin.EnvList(append(base, keyEnv(second, 2)...)...), "destroy", "-input=false", "-auto-approve")
	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	texts["terraform.log"] = string(raw)

	for _, must := range []string{filepath.Join(dir, "terraform.tfstate"), filepath.Join(dir, "terraform.tfstate.backup"),
		"show -json step1.tfplan", "step2.tfplan:tfplan"} {
		if len(texts[must]) < 100 {
			t.Fatalf("%s is missing or nearly empty: the search would prove nothing", must)
		}
	}
	if !strings.Contains(texts["terraform.log"], "Example API request") || !strings.Contains(texts["terraform.log"], "/v1/certificates") {
		t.Fatal("the trace log has no provider request logs; the search would prove nothing")
	}
	if !strings.Contains(texts["show -json terraform.tfstate"], second.Fingerprint) {
		t.Fatal("the state does not show the certificate; the search would prove nothing")
	}
	for where, text := range texts {
		for i, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("private key %d found in %s", i+1, where)
			}
		}
		if strings.Contains(text, "PRIVATE KEY-----") {
			t.Errorf("a PEM private key block found in %s", where)
		}
	}
}

// TestAccCertificate_openTofu: OpenTofu 1.10 has no write-only arguments
// (it announces no support, and would keep the value in plan and state),
// so a certificate fails validation with the provider's explanation,
// before anything is created or stored.
func TestAccCertificate_openTofu(t *testing.T) {
	tftest.RequireAcceptance(t)
	tc := tftest.OpenTofu(t)
	t.Parallel()
	c := simtest.NewCert(t, simtest.CertOptions{})
	envList := tc.EnvList()
	e, dir := newCertWorkspace(t, keyFromVariable, tc, envList)
	out, err := tryTF(tc.Terraform, dir, append(envList, keyEnv(c, 1)...), "plan", "-input=false")
	if err == nil {
		t.Fatalf("OpenTofu planned a certificate with a write-only key:\n%s", out)
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	for _, want := range []string{"Write-only arguments are not supported by this client", "OpenTofu 1.10 does not"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(err.Error(), keyBody(c)) {
		t.Error("the error shows the private key")
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); !os.IsNotExist(err) {
		t.Errorf("a state was written: %v", err)
	}
	if certs := listCerts(t, e); len(certs) != 0 {
		t.Errorf("certificates were created: %+v", certs)
	}
}

func keyBody(c simtest.Cert) string { return strings.Split(c.KeyPEM, "\n")[1] }

func listCerts(t *testing.T, e *testEnv) []exampleapi.Certificate {
	t.Helper()
	ctx, cancel := bg()
	defer cancel()
	certs, err := e.client.ListCertificates(ctx, exampleapi.CertificateFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

// zipEntries reads every file of a saved plan (a zip archive).
func zipEntries(t *testing.T, path string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("reading plan file %s: %v", path, err)
	}
	defer zr.Close()
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(raw)
	}
	return out
}

// TestAccPrivateKeys_refusals: example_private_keys fails to open, naming
// what is missing and quoting no key, when its environment variable is
// unset, is not a JSON object, or lacks a name.
func TestAccPrivateKeys_refusals(t *testing.T) {
	tftest.RequireAcceptance(t)
	bin := tftest.Get(t)
	t.Parallel()
	c := simtest.NewCert(t, simtest.CertOptions{})
	e, dir := newCertWorkspace(t, keyFromPrivateKeys, bin, bin.EnvList())
	tf := bin.Terraform
	vars := keyEnv(c, 1)[:3]
	other, _ := json.Marshal(map[string]string{"api": c.KeyPEM})
	for _, tc := range []struct{ env, want string }{
		{"", "the environment variable EXAMPLE_PRIVATE_KEYS is not set"},
		{EnvPrivateKeys + "=" + c.KeyPEM, "EXAMPLE_PRIVATE_KEYS is not a JSON object"},
		{EnvPrivateKeys + "=" + string(other), `EXAMPLE_PRIVATE_KEYS holds no private key named "web"`},
	} {
		env := bin.EnvList(vars...)
		if tc.env != "" {
			env = append(env, tc.env)
		}
		out, err := tryTF(tf, dir, env, "plan", "-input=false")
		if err == nil {
			t.Fatalf("%s: plan succeeded", tc.want)
		}
		if msg := strings.Join(strings.Fields(err.Error()), " "); !strings.Contains(msg, tc.want) {
			t.Errorf("want %q in:\n%s", tc.want, err)
		}
		if strings.Contains(out+err.Error(), keyBody(c)) {
			t.Errorf("%s: the error quotes the key", tc.want)
		}
	}
	if certs := listCerts(t, e); len(certs) != 0 {
		t.Errorf("certificates created: %+v", certs)
	}
}
