package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// TLS is what a Service's TLS Secrets give its load balancer: the
// certificates, rendered into main.tf, and their private keys, which are
// never rendered: they reach the provider in the environment of the
// workspace's terraform processes (renderer.TLSKeysEnv), read by an
// ephemeral resource that no saved plan and no state keeps.
type TLS struct {
	// Certificates by Secret name: the certificate chains (PEM).
	Certificates map[string]string
	// Keys by Secret name: the private keys (PEM).
	Keys map[string]string
}

// TLSSource reads the TLS Secrets a Service names: nil when it names
// none; an error names the Secret and what is wrong with it, never its
// content.
type TLSSource func(ctx context.Context, svc *corev1.Service) (*TLS, error)

// digest identifies the certificates (public): a changed Secret renders
// anew. The keys need not be in it: a new key comes with a new
// certificate.
func (t *TLS) digest() string {
	if t == nil {
		return ""
	}
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(t.Certificates)) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(name), name, len(t.Certificates[name]), t.Certificates[name])
	}
	return "/tls:" + hex.EncodeToString(h.Sum(nil))
}

// tlsFor reads svc's TLS Secrets, if it names any.
func (e *Engine) tlsFor(ctx context.Context, svc *corev1.Service) (*TLS, error) {
	if e.tls == nil {
		return nil, nil
	}
	return e.tls(ctx, svc)
}

// withTLS renders svc's certificates into cfg and puts their keys into the
// job's environment. Without t, the Service renders as if it named no
// TLS Secret (renderer.Config.SkipTLSSecrets).
func withTLS(cfg renderer.Config, t *TLS) renderer.Config {
	if t == nil {
		cfg.SkipTLSSecrets = true
		return cfg
	}
	cfg.Certificates = t.Certificates
	return cfg
}

// addKeys passes t's private keys to every terraform process of j.
func addKeys(j *runner.Job, t *TLS) error {
	if t == nil || len(t.Keys) == 0 {
		return nil
	}
	data, err := json.Marshal(t.Keys)
	if err != nil {
		return fmt.Errorf("encode private keys: %w", err)
	}
	env := maps.Clone(j.Env)
	if env == nil {
		env = map[string]string{}
	}
	env[renderer.TLSKeysEnv] = string(data)
	j.Env = env
	for _, name := range slices.Sorted(maps.Keys(t.Keys)) {
		j.Secrets = append(j.Secrets, t.Keys[name])
	}
	return nil
}
