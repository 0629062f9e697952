package state

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
)

// Backend types.
const (
	TypeLocal      = "local"
	TypeKubernetes = "kubernetes"
	TypePG         = "pg"
	TypeS3         = "s3"
	TypeHTTP       = "http"
)

// Types lists the supported backend types.
var Types = []string{TypeLocal, TypeKubernetes, TypePG, TypeS3, TypeHTTP}

// Config is the state section of the CCM's cloud config.
type Config struct {
	// Type is the backend: local (dev default), kubernetes (in-cluster
	// default), pg, s3 or http.
	Type string `json:"type"`
	// KeyTemplate names each object's state (Go template over .Cluster,
	// .Kind, .Namespace, .Name); the result is sanitised, cut to fit 63
	// characters and suffixed with a 64-bit hash of the object's identity
	// in letters (see docs/state.md).
	KeyTemplate string            `json:"keyTemplate,omitempty"`
	Local       *LocalConfig      `json:"local,omitempty"`
	Kubernetes  *KubernetesConfig `json:"kubernetes,omitempty"`
	PG          *PGConfig         `json:"pg,omitempty"`
	S3          *S3Config         `json:"s3,omitempty"`
	HTTP        *HTTPConfig       `json:"http,omitempty"`
}

// LocalConfig keeps one state file per object under Dir.
type LocalConfig struct {
	Dir string `json:"dir"`
}

// KubernetesConfig keeps one Secret per object (tfstate-default-<key>).
type KubernetesConfig struct {
	Namespace string `json:"namespace"`
	// InClusterConfig uses the pod's service account (the default when
	// KubeconfigPath is empty).
	InClusterConfig bool `json:"inClusterConfig,omitempty"`
	// KubeconfigPath is passed to terraform as KUBE_CONFIG_PATH.
	KubeconfigPath string `json:"kubeconfigPath,omitempty"`
}

// PGConfig keeps every object's state in one schema, a workspace each.
type PGConfig struct {
	// ConnStrFile holds the connection string (preferred: a mounted Secret).
	ConnStrFile string `json:"connStrFile,omitempty"`
	// ConnStrEnv names an environment variable of the CCM holding it.
	ConnStrEnv string `json:"connStrEnv,omitempty"`
	SchemaName string `json:"schemaName,omitempty"`
}

// S3Config keeps one object per state under KeyPrefix, locked with
// S3-native lock files. Credentials come from the CCM's AWS_* environment.
type S3Config struct {
	Bucket       string `json:"bucket"`
	Region       string `json:"region"`
	KeyPrefix    string `json:"keyPrefix,omitempty"`
	Endpoint     string `json:"endpoint,omitempty"`
	UsePathStyle bool   `json:"usePathStyle,omitempty"`
}

// HTTPConfig keeps one state per object at <Address>/<key> (Terraform's
// http backend protocol with LOCK/UNLOCK).
type HTTPConfig struct {
	Address      string `json:"address"`
	UsernameFile string `json:"usernameFile,omitempty"`
	PasswordFile string `json:"passwordFile,omitempty"`
	// SkipCertVerification is for test servers only.
	SkipCertVerification bool `json:"skipCertVerification,omitempty"`
}

// Validate checks the config and names the offending field.
func (c *Config) Validate() error {
	if !slices.Contains(Types, c.Type) {
		return fmt.Errorf("state.type: unknown backend %q (accepted: %v)", c.Type, Types)
	}
	if _, err := newKeyer(c.KeyTemplate); err != nil {
		return fmt.Errorf("state.keyTemplate: %w", err)
	}
	switch c.Type {
	case TypeLocal:
		if c.Local == nil || c.Local.Dir == "" {
			return fmt.Errorf("state.local.dir: required for the local backend")
		}
		if !filepath.IsAbs(c.Local.Dir) {
			return fmt.Errorf("state.local.dir: %q must be an absolute path", c.Local.Dir)
		}
	case TypeKubernetes:
		if c.Kubernetes == nil || c.Kubernetes.Namespace == "" {
			return fmt.Errorf("state.kubernetes.namespace: required for the kubernetes backend")
		}
	case TypePG:
		if c.PG == nil || (c.PG.ConnStrFile == "" && c.PG.ConnStrEnv == "") {
			return fmt.Errorf("state.pg: connStrFile or connStrEnv is required (the connection string is never put in the config)")
		}
	case TypeS3:
		if c.S3 == nil || c.S3.Bucket == "" || c.S3.Region == "" {
			return fmt.Errorf("state.s3.bucket and state.s3.region: required for the s3 backend")
		}
	case TypeHTTP:
		if c.HTTP == nil || c.HTTP.Address == "" {
			return fmt.Errorf("state.http.address: required for the http backend")
		}
		u, err := url.Parse(c.HTTP.Address)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("state.http.address: %q is not an http(s) URL", c.HTTP.Address)
		}
		if u.User != nil {
			return fmt.Errorf("state.http.address: credentials in the URL are not allowed; use usernameFile/passwordFile")
		}
	}
	return nil
}
