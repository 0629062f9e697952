package renderer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/state"
)

func obj(kv ...any) cty.Value {
	m := map[string]cty.Value{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(cty.Value)
	}
	return cty.ObjectVal(m)
}

var str = cty.StringVal

// Every credential argument of the backends, those the old denylist
// missed first, is refused with the attribute's path and where
// credentials go instead.
func TestBackendCredentialsRefused(t *testing.T) {
	cases := []struct {
		name  string
		b     Backend
		field string // attribute path in the error
		env   string // a credential variable the error points to
	}{
		{"http client key", Backend{"http", []Attr{{"client_private_key_pem", str("-----BEGIN PRIVATE KEY-----")}}}, "backend.attrs.client_private_key_pem", "TF_HTTP_CLIENT_PRIVATE_KEY_PEM"},
		{"s3 sse key", Backend{"s3", []Attr{{"sse_customer_key", str("c2VjcmV0LWtleQ==")}}}, "backend.attrs.sse_customer_key", "AWS_SSE_CUSTOMER_KEY"},
		{"s3 web identity token", Backend{"s3", []Attr{{"assume_role_with_web_identity", obj("role_arn", str("arn:aws:iam::1:role/x"), "web_identity_token", str("eyJhbGciOi"))}}}, "backend.attrs.assume_role_with_web_identity.web_identity_token", "AWS_WEB_IDENTITY_TOKEN_FILE"},
		{"http_auth", Backend{"http", []Attr{{"http_auth", str("Basic dTpw")}}}, "backend.attrs.http_auth", "TF_HTTP_PASSWORD"},
		{"s3 security_token", Backend{"s3", []Attr{{"security_token", str("FwoGZXIvYXdzE")}}}, "backend.attrs.security_token", "AWS_SESSION_TOKEN"},
		{"http password", Backend{"http", []Attr{{"password", str("pw")}}}, "backend.attrs.password", "TF_HTTP_PASSWORD"},
		{"pg conn_str", Backend{"pg", []Attr{{"conn_str", str("postgres://u:p@h/db")}}}, "backend.attrs.conn_str", "PG_CONN_STR"},
		{"s3 keys", Backend{"s3", []Attr{{"secret_key", str("x")}}}, "backend.attrs.secret_key", "AWS_SECRET_ACCESS_KEY"},
		{"s3 keys, other case", Backend{"s3", []Attr{{"Secret_Key", str("x")}}}, "backend.attrs.Secret_Key", "AWS_SECRET_ACCESS_KEY"},
		{"s3 assume_role unknown key", Backend{"s3", []Attr{{"assume_role", obj("role_arn", str("arn"), "access_key", str("AKIA"))}}}, "backend.attrs.assume_role.access_key", "AWS_ACCESS_KEY_ID"},
		{"s3 endpoints unknown key", Backend{"s3", []Attr{{"endpoints", obj("s3", str("https://s3"), "token", str("t"))}}}, "backend.attrs.endpoints.token", "AWS_SESSION_TOKEN"},
		{"kubernetes token", Backend{"kubernetes", []Attr{{"token", str("eyJ")}}}, "backend.attrs.token", "KUBE_TOKEN"},
		{"kubernetes client_key", Backend{"kubernetes", []Attr{{"client_key", str("-----BEGIN")}}}, "backend.attrs.client_key", "KUBE_CLIENT_KEY_DATA"},
		{"kubernetes exec", Backend{"kubernetes", []Attr{{"exec", obj("command", str("aws"))}}}, "backend.attrs.exec", "KUBE_CONFIG_PATH"},
		{"password in a URL", Backend{"http", []Attr{{"address", str("https://ccm:hunter2@state.example.com/x")}}}, "backend.attrs.address", "TF_HTTP_PASSWORD"},
		{"password in a nested URL", Backend{"s3", []Attr{{"endpoints", obj("s3", str("https://AKIA:secret@minio:9000"))}}}, "backend.attrs.endpoints.s3", "AWS_SECRET_ACCESS_KEY"},
		{"password in a proxy URL", Backend{"s3", []Attr{{"https_proxy", str("http://u:p4ss@proxy:3128")}}}, "backend.attrs.https_proxy", "AWS_"},
		{"local has no credentials", Backend{"local", []Attr{{"token", str("x")}}}, "backend.attrs.token", "takes none"},
	}
	for _, c := range cases {
		err := c.b.validate()
		var ie *lbmodel.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want *lbmodel.InputError", c.name, err)
			continue
		}
		if ie.Field != "config "+c.field || !strings.Contains(err.Error(), c.env) || !strings.Contains(err.Error(), "environment") {
			t.Errorf("%s: %v\n want field %q and a pointer to %s", c.name, err, c.field, c.env)
		}
		for _, a := range c.b.Attrs {
			if s := a.Value.GoString(); len(s) > 20 && strings.Contains(err.Error(), s) {
				t.Errorf("%s: error echoes the value: %v", c.name, err)
			}
		}
	}
}

func TestBackendShapes(t *testing.T) {
	for name, b := range map[string]Backend{
		"unknown type":        {"consul", []Attr{{"path", str("x")}}},
		"object for a value":  {"s3", []Attr{{"bucket", obj("token", str("x"))}}},
		"list of objects":     {"s3", []Attr{{"allowed_account_ids", cty.TupleVal([]cty.Value{obj("token", str("x"))})}}},
		"string for object":   {"s3", []Attr{{"endpoints", str("https://s3")}}},
		"nested map in label": {"kubernetes", []Attr{{"labels", obj("a", obj("b", str("c")))}}},
		"duplicate":           {"pg", []Attr{{"schema_name", str("a")}, {"schema_name", str("b")}}},
		"unknown value":       {"pg", []Attr{{"schema_name", cty.UnknownVal(cty.String)}}},
	} {
		if err := b.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for name, b := range map[string]Backend{
		"s3 full": {"s3", []Attr{
			{"bucket", str("b")}, {"key", str("k")}, {"region", str("r")}, {"use_lockfile", cty.True},
			{"endpoints", obj("s3", str("https://minio:9000"), "sts", str("https://sts"))},
			{"assume_role", obj("role_arn", str("arn"), "tags", obj("team", str("x")), "policy_arns", cty.ListVal([]cty.Value{str("a")}))},
			{"assume_role_with_web_identity", obj("role_arn", str("arn"), "web_identity_token_file", str("/var/run/token"))},
			{"allowed_account_ids", cty.ListVal([]cty.Value{str("1")})},
		}},
		"kubernetes labels":    {"kubernetes", []Attr{{"labels", cty.MapVal(map[string]cty.Value{"a/b": str("c")})}, {"in_cluster_config", cty.True}}},
		"null value":           {"pg", []Attr{{"schema_name", cty.NullVal(cty.String)}}},
		"url without password": {"http", []Attr{{"address", str("https://user@state.example.com/x")}}},
	} {
		if err := b.validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := AllowedBackendAttrs("s3"); !strings.Contains(strings.Join(got, " "), "assume_role_with_web_identity.web_identity_token_file") {
		t.Errorf("AllowedBackendAttrs(s3) = %v", got)
	}
}

// Every block the state package produces passes the allowlist.
func TestStateBlocksAreAllowed(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	testkit.Must(t, os.WriteFile(pw, []byte("pw-1234"), 0o600))
	t.Setenv("CCM_PG", "postgres://u:p@h/db")
	for _, c := range []state.Config{
		{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: dir}},
		{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: "kube-system"}},
		{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: "kube-system", KubeconfigPath: "/k"}},
		{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_PG", SchemaName: "ccm"}},
		{Type: state.TypeS3, S3: &state.S3Config{Bucket: "b", Region: "r", KeyPrefix: "p/", Endpoint: "https://minio:9000", UsePathStyle: true}},
		{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: "https://h/s", PasswordFile: pw, SkipCertVerification: true}},
	} {
		b, err := state.New(c, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tg, err := b.Location(state.Object{Cluster: "c", Kind: "service", Namespace: "ns", Name: "web"})
		if err != nil {
			t.Fatal(err)
		}
		rb := Backend{Type: tg.Block.Type}
		for _, a := range tg.Block.Attrs {
			rb.Attrs = append(rb.Attrs, Attr{a.Name, a.Value})
		}
		if err := rb.validate(); err != nil {
			t.Errorf("%s: %v", c.Type, err)
		}
	}
}

// Nested objects go through the same allowlist, and a refused value is
// not printed.
func TestBackendAllowlistNested(t *testing.T) {
	cfg := func(name string, v cty.Value) Config {
		c := testConfig()
		c.Backend = Backend{Type: "s3", Attrs: []Attr{{Name: "bucket", Value: cty.StringVal("b")}, {Name: name, Value: v}}}
		return c
	}
	ok := cty.ObjectVal(map[string]cty.Value{"role_arn": cty.StringVal("arn"), "tags": cty.MapVal(map[string]cty.Value{"team": cty.StringVal("x")})})
	if _, err := LoadBalancer(annotations.Read(testService()), nil, cfg("assume_role", ok)); err != nil {
		t.Fatalf("allowed config: %v", err)
	}
	bad := cty.ObjectVal(map[string]cty.Value{"role_arn": cty.StringVal("arn"), "web_identity_token": cty.StringVal("eyJ")})
	_, err := LoadBalancer(annotations.Read(testService()), nil, cfg("assume_role_with_web_identity", bad))
	if err == nil || !strings.Contains(err.Error(), "backend.attrs.assume_role_with_web_identity.web_identity_token") || strings.Contains(err.Error(), "eyJ") {
		t.Fatalf("got %v", err)
	}
}
