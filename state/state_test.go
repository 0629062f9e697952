package state

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
)

func TestBadKeyTemplate(t *testing.T) {
	for _, tmpl := range []string{"{{.Cluster", "{{.Nope}}"} {
		if _, err := newKeyer(tmpl); err == nil {
			t.Errorf("template %q accepted", tmpl)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := map[string]Config{
		"state.type":                 {Type: "consul"},
		"state.local.dir":            {Type: TypeLocal, Local: &LocalConfig{Dir: "relative"}},
		"state.kubernetes.namespace": {Type: TypeKubernetes},
		"state.pg":                   {Type: TypePG, PG: &PGConfig{}},
		"state.s3.bucket":            {Type: TypeS3, S3: &S3Config{Bucket: "b"}},
		"state.http.address":         {Type: TypeHTTP, HTTP: &HTTPConfig{Address: "https://user:pw@host/x"}},
		"state.keyTemplate":          {Type: TypeLocal, Local: &LocalConfig{Dir: "/x"}, KeyTemplate: "{{"},
	}
	for field, c := range cases {
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: got %v", field, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("%s: error echoes credentials: %v", field, err)
		}
	}
}

// Secrets go to the environment, never into the backend block.
func TestSecretsStayOutOfTheBlock(t *testing.T) {
	dir := t.TempDir()
	connFile := filepath.Join(dir, "conn")
	testkit.Must(t, os.WriteFile(connFile, []byte("postgres://u:sekrit-pg@127.0.0.1/db\n"), 0o600))
	pwFile := filepath.Join(dir, "pw")
	testkit.Must(t, os.WriteFile(pwFile, []byte("sekrit-http"), 0o600))
	userFile := filepath.Join(dir, "user")
	testkit.Must(t, os.WriteFile(userFile, []byte("ccm"), 0o600))
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sekrit-aws")
	cfgs := []Config{
		{Type: TypePG, PG: &PGConfig{ConnStrFile: connFile, SchemaName: "ccm"}},
		{Type: TypeHTTP, HTTP: &HTTPConfig{Address: "http://127.0.0.1:1/state", UsernameFile: userFile, PasswordFile: pwFile}},
		{Type: TypeS3, S3: &S3Config{Bucket: "b", Region: "r", KeyPrefix: "ccm/"}},
		{Type: TypeKubernetes, Kubernetes: &KubernetesConfig{Namespace: "kube-system", KubeconfigPath: "/etc/kubeconfig"}},
		{Type: TypeLocal, Local: &LocalConfig{Dir: dir}},
	}
	for _, c := range cfgs {
		b, err := New(c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tg, err := b.Location(Object{"c", "service", "ns", "web"})
		if err != nil {
			t.Fatal(err)
		}
		if tg.Block.Type != c.Type {
			t.Errorf("%s: block type %q", c.Type, tg.Block.Type)
		}
		for _, a := range tg.Block.Attrs {
			if strings.Contains(a.Value.GoString(), "sekrit") {
				t.Errorf("%s: secret in backend attribute %s", c.Type, a.Name)
			}
		}
		hasSecret := false
		for _, v := range tg.Env {
			hasSecret = hasSecret || strings.Contains(v, "sekrit")
		}
		if c.Type != TypeKubernetes && c.Type != TypeLocal && !hasSecret {
			t.Errorf("%s: credentials not passed in the environment: %v", c.Type, keys(tg.Env))
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPGWorkspacePerObject(t *testing.T) {
	t.Setenv("CCM_PG", "postgres://x")
	b, err := New(Config{Type: TypePG, PG: &PGConfig{ConnStrEnv: "CCM_PG"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := b.Location(Object{"c", "service", "ns", "a"})
	z, _ := b.Location(Object{"c", "service", "ns", "z"})
	if a.CLIWorkspace == z.CLIWorkspace || a.CLIWorkspace != a.Key {
		t.Fatalf("want one workspace per object, got %q and %q", a.CLIWorkspace, z.CLIWorkspace)
	}
	t.Setenv("CCM_PG", "")
	if _, err := b.Location(Object{"c", "service", "ns", "a"}); err == nil {
		t.Fatal("an empty connection string must be an error")
	}
}

func TestLocalDelete(t *testing.T) {
	dir := t.TempDir()
	b, _ := New(Config{Type: TypeLocal, Local: &LocalConfig{Dir: dir}}, Options{})
	tg, err := b.Location(Object{"c", "service", "ns", "web"})
	if err != nil {
		t.Fatal(err)
	}
	path := tg.Block.Attrs[0].Value.AsString()
	testkit.Must(t, os.WriteFile(path, []byte("{}"), 0o600))
	testkit.Must(t, os.WriteFile(path+".backup", []byte("{}"), 0o600))
	if err := tg.Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("state file survived delete")
	}
	if err := tg.Delete(context.Background()); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

func TestHTTPDeleteSendsCredentials(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		got = append(got, r.Method+" "+r.URL.Path+" "+u+":"+p)
	}))
	defer srv.Close()
	dir := t.TempDir()
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "u"), []byte("ccm\n"), 0o600))
	testkit.Must(t, os.WriteFile(filepath.Join(dir, "p"), []byte("pw\n"), 0o600))
	b, _ := New(Config{Type: TypeHTTP, HTTP: &HTTPConfig{Address: srv.URL + "/states/", UsernameFile: filepath.Join(dir, "u"), PasswordFile: filepath.Join(dir, "p")}}, Options{})
	tg, err := b.Location(Object{"c", "service", "ns", "web"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "DELETE /states/"+tg.Key+" ccm:pw" {
		t.Fatalf("requests: %v", got)
	}
}
