package state

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
)

var web = Object{"c", "service", "ns", "web"}

func mustExist(t *testing.T, tg *Location, want bool) {
	t.Helper()
	got, err := tg.Exists(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", tg.Key, err)
	}
	if got != want {
		t.Fatalf("%s: exists = %v, want %v", tg.Key, got, want)
	}
}

// LegacyLocation is the same backend under the legacy key.
func TestLegacyLocation(t *testing.T) {
	b, _ := New(Config{Type: TypeLocal, Local: &LocalConfig{Dir: t.TempDir()}}, Options{})
	tg, _ := b.Location(web)
	old, err := b.LegacyLocation(web)
	if err != nil {
		t.Fatal(err)
	}
	lk, _ := b.LegacyKey(web)
	k, _ := b.Key(web)
	if old.Key != lk || tg.Key != k || old.Key == tg.Key || old.Block.Type != tg.Block.Type {
		t.Fatalf("legacy %+v, location %+v", old, tg)
	}
	if old.Block.Attrs[0].Value.Equals(tg.Block.Attrs[0].Value).True() {
		t.Fatal("legacy and new location share a state file")
	}
}

func TestExistsLocal(t *testing.T) {
	b, _ := New(Config{Type: TypeLocal, Local: &LocalConfig{Dir: t.TempDir()}}, Options{})
	tg, _ := b.LegacyLocation(web)
	mustExist(t, tg, false)
	testkit.Must(t, os.WriteFile(tg.Block.Attrs[0].Value.AsString(), []byte("{}"), 0o600))
	mustExist(t, tg, true)
	testkit.Must(t, tg.Delete(context.Background()))
	mustExist(t, tg, false)
}

func TestExistsKubernetes(t *testing.T) {
	kube := fake.NewClientset()
	b, _ := New(Config{Type: TypeKubernetes, Kubernetes: &KubernetesConfig{Namespace: "kube-system"}}, Options{})
	tg, _ := b.LegacyLocation(web)
	if _, err := tg.Exists(context.Background()); err == nil {
		t.Fatal("no client: want an error, not a guess")
	}
	b.SetKubernetesClient(kube)
	mustExist(t, tg, false)
	_, err := kube.CoreV1().Secrets("kube-system").Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tfstate-default-" + tg.Key, Namespace: "kube-system"}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	mustExist(t, tg, true)
	other, _ := b.Location(web)
	mustExist(t, other, false)
}

func TestExistsHTTP(t *testing.T) {
	srv := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("ccm", "pw-http-1"))
	dir := t.TempDir()
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "u"), []byte("ccm"), 0o600))
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "p"), []byte("pw-http-1"), 0o600))
	cfg := Config{Type: TypeHTTP, HTTP: &HTTPConfig{Address: srv.URL + "/states", UsernameFile: filepath.Join(dir, "u"), PasswordFile: filepath.Join(dir, "p")}}
	b, _ := New(cfg, Options{})
	tg, _ := b.LegacyLocation(web)
	mustExist(t, tg, false)
	if !slices.Contains(srv.Requests(), "GET /states/"+tg.Key) {
		t.Fatalf("requests: %v", srv.Requests())
	}
	// Only through terraform's protocol: POST a state.
	req := strings.NewReader(`{"version":4}`)
	resp, err := httpPost(srv.URL+"/states/"+tg.Key, req)
	if err != nil || resp != 200 {
		t.Fatalf("POST: %d %v", resp, err)
	}
	mustExist(t, tg, true)
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "p"), []byte("wrong"), 0o600))
	tg, _ = b.LegacyLocation(web)
	if _, err := tg.Exists(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("refused credentials: %v", err)
	}
}

// pg: one query on terraform's table; no schema or table means no state.
func TestExistsPG(t *testing.T) {
	pw := `pg"pw\ with @:/% ü`
	srv := testpg.Start(t, testpg.WithPassword(pw))
	t.Setenv("CCM_PG", srv.ConnStr)
	b, _ := New(Config{Type: TypePG, PG: &PGConfig{ConnStrEnv: "CCM_PG", SchemaName: "ccm"}}, Options{})
	tg, _ := b.LegacyLocation(web)
	mustExist(t, tg, false) // no schema yet
	db, err := sql.Open("postgres", srv.ConnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The table terraform's pg backend creates.
	for _, q := range []string{
		`CREATE SCHEMA ccm`,
		`CREATE TABLE ccm.states (id bigserial PRIMARY KEY, name text UNIQUE, data text)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	mustExist(t, tg, false)
	if _, err := db.Exec(`INSERT INTO ccm.states (name, data) VALUES ($1, '{}')`, tg.Key); err != nil {
		t.Fatal(err)
	}
	mustExist(t, tg, true)
	other, _ := b.Location(web)
	mustExist(t, other, false)

	// A broken connection string: the error names the workspace and
	// holds no form of the password.
	t.Setenv("CCM_PG", "postgres://ccm:"+pw+"@127.0.0.1:1/x") // unescaped: not a valid URL
	tg, _ = b.LegacyLocation(web)
	_, err = tg.Exists(context.Background())
	if err == nil || !strings.Contains(err.Error(), tg.Key) {
		t.Fatalf("bad connection string: %v", err)
	}
	for _, leak := range []string{"pg\"pw", `pg\"pw`, "with @", "ü"} {
		if strings.Contains(err.Error(), leak) {
			t.Fatalf("error leaks %q: %v", leak, err)
		}
	}
}

func TestCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		testkit.Must(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	kubeconfig := write("kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: kube-token-1234, client-key-data: a2V5LWRhdGEtNTY3OA==}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-1")
	t.Setenv("CCM_PG", "postgres://u:pg-env-pw@h/db")
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{Type: TypePG, PG: &PGConfig{ConnStrFile: write("conn", "postgres://u:pg-file-pw@h/db\n")}}, []string{"postgres://u:pg-file-pw@h/db"}},
		{Config{Type: TypePG, PG: &PGConfig{ConnStrEnv: "CCM_PG"}}, []string{"postgres://u:pg-env-pw@h/db"}},
		{Config{Type: TypeHTTP, HTTP: &HTTPConfig{Address: "https://h/s", UsernameFile: write("u", "ccm"), PasswordFile: write("p", "http-pw-1\n")}}, []string{"http-pw-1"}},
		{Config{Type: TypeS3, S3: &S3Config{Bucket: "b", Region: "r"}}, []string{"aws-secret-1"}},
		{Config{Type: TypeKubernetes, Kubernetes: &KubernetesConfig{Namespace: "n", KubeconfigPath: kubeconfig}}, []string{"key-data-5678", "kube-token-1234"}},
		{Config{Type: TypeLocal, Local: &LocalConfig{Dir: dir}}, nil},
	} {
		b, err := New(c.cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := b.Credentials()
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: credentials %q, want %q", c.cfg.Type, got, c.want)
		}
	}
}

func httpPost(url string, body *strings.Reader) (int, error) {
	req, _ := http.NewRequest(http.MethodPost, url, body)
	req.SetBasicAuth("ccm", "pw-http-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
