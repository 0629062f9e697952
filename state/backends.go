package state

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/zclconf/go-cty/cty"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Block is a backend block to render: non-secret settings only, in order.
type Block struct {
	Type  string
	Attrs []Attr
}

// Attr is one backend setting.
type Attr struct {
	Name  string
	Value cty.Value
}

// Location is where one object's state lives and how terraform reaches
// it: backend block, credentials, workspace.
type Location struct {
	// Key is the object's workspace: its state's name in the backend
	// (rendered from state.keyTemplate) and its workspace directory's name.
	Key string
	// Block goes into the rendered terraform block.
	Block Block
	// Env holds the credentials, for the terraform process only.
	Env map[string]string
	// CLIWorkspace is terraform's CLI workspace ("default" unless the
	// backend keeps many states in one place, as pg does).
	CLIWorkspace string
	// Delete removes the state after a destroy, where a workspace delete
	// does not (nil when there is nothing to do).
	Delete func(ctx context.Context) error
	// Unlock opens the state lock lockID the backend's own way, only
	// while that lock holds it (nil when terraform force-unlock always
	// can): see runner.Job.Unlock.
	Unlock func(ctx context.Context, lockID string) error
	// Exists tells cheaply, without terraform, whether a state is stored
	// (a file stat, a Secret GET, an HTTP GET, one SQL query, an S3
	// listing); nil when the backend has no such check.
	Exists func(ctx context.Context) (bool, error)
}

// Backends hands out per-object state locations.
type Backends struct {
	cfg     Config
	keyer   *keyer
	kube    kubernetes.Interface
	http    *http.Client
	s3HTTP  *awshttp.BuildableClient
	pgPool  pgPool
	offline bool
}

// Options are the runtime dependencies of some backends.
type Options struct {
	// Kube deletes Secrets and Leases of the kubernetes backend.
	Kube kubernetes.Interface
	// Offline gives locations whose backend block only is meant to be used
	// (examplectl render): no credential is read, nothing is created.
	Offline bool
}

// New validates cfg and returns its Backends.
func New(cfg Config, o Options) (*Backends, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k, err := newKeyer(cfg.KeyTemplate)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if cfg.HTTP != nil && cfg.HTTP.SkipCertVerification {
		hc.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // opt-in, test servers
	}
	return &Backends{cfg: cfg, keyer: k, kube: o.Kube, http: hc, s3HTTP: awshttp.NewBuildableClient(), offline: o.Offline}, nil
}

// SetKubernetesClient provides the client the kubernetes backend deletes
// Secrets and Leases with; the CCM has one only once it is initialised.
func (b *Backends) SetKubernetesClient(k kubernetes.Interface) { b.kube = k }

// Type is the configured backend type.
func (b *Backends) Type() string { return b.cfg.Type }

// Key is o's workspace, rendered from the key template.
func (b *Backends) Key(o Object) (string, error) { return b.keyer.Key(o) }

// LegacyKey is o's workspace under the previous scheme (8 hex digits,
// up to 80 characters): where states made before it may still be.
func (b *Backends) LegacyKey(o Object) (string, error) { return b.keyer.LegacyKey(o) }

// Location returns where o's state lives. Secrets are read now, so a rotated
// file is picked up by the next run.
func (b *Backends) Location(o Object) (*Location, error) {
	key, err := b.keyer.Key(o)
	if err != nil {
		return nil, err
	}
	return b.location(key)
}

// LegacyLocation returns where o's state lived under the legacy key scheme,
// in the same backend: the source of the migration to Location (see
// docs/state.md).
func (b *Backends) LegacyLocation(o Object) (*Location, error) {
	key, err := b.keyer.LegacyKey(o)
	if err != nil {
		return nil, err
	}
	return b.location(key)
}

func (b *Backends) location(key string) (*Location, error) {
	var err error
	t := &Location{Key: key, CLIWorkspace: "default", Env: map[string]string{}}
	switch b.cfg.Type {
	case TypeLocal:
		err = b.local(t)
	case TypeKubernetes:
		err = b.kubernetes(t)
	case TypePG:
		err = b.pg(t)
	case TypeS3:
		b.s3(t)
	case TypeHTTP:
		err = b.httpBackend(t)
	}
	if err != nil {
		return nil, fmt.Errorf("state backend %s for %s: %w", b.cfg.Type, key, err)
	}
	return t, nil
}

func (b *Backends) local(t *Location) error {
	dir := b.cfg.Local.Dir
	if !b.offline {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, t.Key+".tfstate")
	t.Block = Block{Type: "local", Attrs: []Attr{{"path", cty.StringVal(path)}}}
	t.Exists = func(context.Context) (bool, error) {
		_, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	t.Delete = func(context.Context) error {
		for _, p := range []string{path, path + ".backup"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	return nil
}

func (b *Backends) kubernetes(t *Location) error {
	c := b.cfg.Kubernetes
	attrs := []Attr{
		{"secret_suffix", cty.StringVal(t.Key)},
		{"namespace", cty.StringVal(c.Namespace)},
		{"labels", cty.MapVal(map[string]cty.Value{"app.kubernetes.io/managed-by": cty.StringVal("example-cloud-controller-manager")})},
	}
	if c.KubeconfigPath != "" {
		t.Env["KUBE_CONFIG_PATH"] = c.KubeconfigPath
	} else {
		attrs = append(attrs, Attr{"in_cluster_config", cty.True})
	}
	t.Block = Block{Type: "kubernetes", Attrs: attrs}
	// The backend names them tfstate-<workspace>-<suffix> and
	// lock-tfstate-<workspace>-<suffix>; a workspace delete cannot remove
	// the default workspace's, so the CCM does.
	secret := "tfstate-default-" + t.Key
	lease := "lock-" + secret
	t.Exists = func(ctx context.Context) (bool, error) {
		if b.kube == nil {
			return false, fmt.Errorf("no kubernetes client to read Secret %s/%s", c.Namespace, secret)
		}
		_, err := b.kube.CoreV1().Secrets(c.Namespace).Get(ctx, secret, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("get Secret %s/%s: %w", c.Namespace, secret, err)
		}
		return true, nil
	}
	t.Delete = func(ctx context.Context) error {
		if b.kube == nil {
			return fmt.Errorf("no kubernetes client to delete Secret %s/%s", c.Namespace, secret)
		}
		err := b.kube.CoreV1().Secrets(c.Namespace).Delete(ctx, secret, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Secret %s/%s: %w", c.Namespace, secret, err)
		}
		err = b.kube.CoordinationV1().Leases(c.Namespace).Delete(ctx, lease, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete Lease %s/%s: %w", c.Namespace, lease, err)
		}
		return nil
	}
	// force-unlock cannot open the lock the backend takes to create a
	// state (it loads the state first, which takes that lock): the Lease
	// goes, if it still names lockID (the backend makes a new one).
	t.Unlock = func(ctx context.Context, lockID string) error {
		if b.kube == nil {
			return fmt.Errorf("no kubernetes client to open Lease %s/%s", c.Namespace, lease)
		}
		l, err := b.kube.CoordinationV1().Leases(c.Namespace).Get(ctx, lease, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get Lease %s/%s: %w", c.Namespace, lease, err)
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != lockID {
			return fmt.Errorf("lease %s/%s is not held by lock %s", c.Namespace, lease, lockID)
		}
		err = b.kube.CoordinationV1().Leases(c.Namespace).Delete(ctx, lease, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}})
		if err != nil {
			return fmt.Errorf("delete Lease %s/%s: %w", c.Namespace, lease, err)
		}
		return nil
	}
	return nil
}

func (b *Backends) pg(t *Location) error {
	c := b.cfg.PG
	conn := ""
	switch {
	case c.ConnStrFile != "" && !b.offline:
		data, err := os.ReadFile(c.ConnStrFile)
		if err != nil {
			return fmt.Errorf("read connStrFile: %w", err)
		}
		conn = strings.TrimSpace(string(data))
	case b.offline:
	default:
		conn = os.Getenv(c.ConnStrEnv)
		if conn == "" {
			return fmt.Errorf("environment variable %s (connStrEnv) is empty", c.ConnStrEnv)
		}
	}
	t.Env["PG_CONN_STR"] = conn
	var attrs []Attr
	if c.SchemaName != "" {
		attrs = append(attrs, Attr{"schema_name", cty.StringVal(c.SchemaName)})
	}
	t.Block = Block{Type: "pg", Attrs: attrs}
	// One schema, a workspace per object: the runner deletes the workspace.
	t.CLIWorkspace = t.Key
	t.Exists = func(ctx context.Context) (bool, error) { return b.pgPool.exists(ctx, conn, c.SchemaName, t.Key) }
	return nil
}

func (b *Backends) httpBackend(t *Location) error {
	c := b.cfg.HTTP
	addr := strings.TrimSuffix(c.Address, "/") + "/" + t.Key
	t.Block = Block{Type: "http", Attrs: []Attr{
		{"address", cty.StringVal(addr)},
		{"lock_address", cty.StringVal(addr)},
		{"unlock_address", cty.StringVal(addr)},
		{"lock_method", cty.StringVal("LOCK")},
		{"unlock_method", cty.StringVal("UNLOCK")},
	}}
	if c.SkipCertVerification {
		t.Block.Attrs = append(t.Block.Attrs, Attr{"skip_cert_verification", cty.True})
	}
	user, pass, err := readOptional(c.UsernameFile), readOptional(c.PasswordFile), error(nil)
	if c.UsernameFile != "" && user == "" || c.PasswordFile != "" && pass == "" {
		err = fmt.Errorf("usernameFile/passwordFile unreadable or empty")
	}
	if err != nil && !b.offline {
		return err
	}
	if user != "" {
		t.Env["TF_HTTP_USERNAME"] = user
	}
	if pass != "" {
		t.Env["TF_HTTP_PASSWORD"] = pass
	}
	t.Exists = func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
		if err != nil {
			return false, err
		}
		if user != "" || pass != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := b.http.Do(req)
		if err != nil {
			return false, fmt.Errorf("read state %s: %w", addr, err)
		}
		defer resp.Body.Close()
		// Terraform's http client: 200 with a body is a state; 404, or
		// no body, is none.
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusNoContent:
			return false, nil
		case resp.StatusCode != http.StatusOK:
			return false, fmt.Errorf("read state %s: %s", addr, resp.Status)
		}
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1))
		return n > 0, err
	}
	t.Delete = func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, addr, nil)
		if err != nil {
			return err
		}
		if user != "" || pass != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := b.http.Do(req)
		if err != nil {
			return fmt.Errorf("delete state %s: %w", addr, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotFound {
			return fmt.Errorf("delete state %s: %s", addr, resp.Status)
		}
		return nil
	}
	return nil
}

func readOptional(path string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
