package state

import (
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// inClusterTokenFile is the pod's service account token, which the
// kubernetes backend uses with in_cluster_config.
var inClusterTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token" //nolint:gosec // a path, not a credential

// Credentials returns every credential value the configured backend uses,
// read now (files are re-read, so call it again after a rotation): the pg
// connection string, the http password, the AWS_* secrets, the tokens,
// passwords and client keys of the kubernetes backend's kubeconfig (or the
// in-cluster token). For redactors (audit.Log.Redact); unreadable sources
// are skipped, since a run would fail on them anyway.
func (b *Backends) Credentials() []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
	}
	switch b.cfg.Type {
	case TypePG:
		if c := b.cfg.PG; c.ConnStrFile != "" {
			add(readOptional(c.ConnStrFile))
		} else {
			add(os.Getenv(c.ConnStrEnv))
		}
	case TypeHTTP:
		add(readOptional(b.cfg.HTTP.PasswordFile))
	case TypeS3:
		for _, k := range s3Secrets {
			add(os.Getenv(k))
		}
	case TypeKubernetes:
		path := b.cfg.Kubernetes.KubeconfigPath
		if path == "" {
			add(readOptional(inClusterTokenFile))
			break
		}
		kc, err := clientcmd.LoadFromFile(path)
		if err != nil {
			break
		}
		for _, ai := range kc.AuthInfos {
			add(ai.Token, ai.Password, string(ai.ClientKeyData), readOptional(ai.TokenFile))
		}
	}
	return out
}
