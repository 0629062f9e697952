package renderer

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/redact"
	"github.com/example/cloud-provider-example/servicemodel"
)

// Defaults of Config.
const (
	DefaultRequiredVersion = ">= 1.9.0"
	DefaultProviderSource  = "example.com/example/example"
	DefaultProviderVersion = "0.1.0"
	// The shipped modules, relative to the workspace: materialise them with
	// modules.WriteTo(filepath.Join(workspace, "modules")).
	DefaultLoadBalancerModuleSource = "./modules/loadbalancer"
	DefaultRoutesModuleSource       = "./modules/routes"
	DefaultTargetPoolsModuleSource  = "./modules/targetpools"
	DefaultCertificatesModuleSource = "./modules/certificates"
)

// Config is everything rendering needs besides the objects.
// Zero fields take the defaults above.
type Config struct {
	// ClusterID names the cluster in load balancer names and tags.
	ClusterID string
	// Region of the cluster; nodes of other regions are skipped.
	Region string
	// Endpoint of the Example cloud API; empty leaves it to the provider's
	// environment. The token is never rendered: the provider reads
	// EXAMPLE_TOKEN.
	Endpoint string

	RequiredVersion string // terraform required_version
	ProviderSource  string
	ProviderVersion string // pinned exactly: "= <version>"

	LoadBalancerModule ModuleSource
	RoutesModule       ModuleSource
	TargetPoolsModule  ModuleSource
	CertificatesModule ModuleSource
	// ModulesDigest, when set, is written into the header of modules that
	// use a shipped (default) module source, so an upgrade of the shipped
	// modules changes Module.Hash and gets planned. Use modules.Digest().
	ModulesDigest string

	// Backend is the state backend block; a zero Backend renders none
	// (local state in the workspace).
	Backend Backend

	// The network holding the cluster's routes: NetworkID, or NetworkName
	// looked up in Region.
	NetworkID   string
	NetworkName string

	// Defaults for Services without the type / algorithm annotations.
	DefaultLoadBalancerType string
	DefaultAlgorithm        string

	// MaxListeners caps a Service's ports (0: MaxListeners, the Example
	// cloud's own limit).
	MaxListeners int

	// DeregistrationDelay is how long a node leaving a target pool keeps
	// its open connections (whole seconds; 0 removes it at once).
	DeregistrationDelay time.Duration

	// TargetPoolID, set per Service, makes its load balancer forward to
	// this target pool instead of listing the nodes (see TargetPools).
	TargetPoolID string

	// Certificates, set per Service, are the certificates of the TLS
	// Secrets its tls-secrets annotation names, by Secret name: the
	// certificate chain (PEM, public). The private keys are never rendered
	// (see TLSKeysEnv). A named Secret missing here is an error.
	Certificates map[string]string
	// SkipTLSSecrets, set per Service, renders it as if it named no TLS
	// Secret (no certificates, its http and https ports as tcp): for a
	// destroy or a read of its outputs, which must not depend on Secrets
	// that may be gone (a destroy removes what the state holds, whatever
	// the configuration says).
	SkipTLSSecrets bool
}

// MaxListeners is the Example cloud's limit of listeners per load
// balancer.
const MaxListeners = exampleapi.MaxListeners

// ModuleSource is where a module call's code comes from.
type ModuleSource struct {
	// Source is a module source address: a local path (./ or ../), a git or
	// other go-getter address (git::https://…?ref=v1.2.0), or a registry
	// address (host/namespace/name/system).
	Source string
	// Version constrains a registry module; it is an error for other
	// sources (pin git sources with ?ref=).
	Version string
}

// Backend describes terraform { backend "<Type>" { … } }. Credentials never
// go here: backends read them from the environment (e.g. PG_CONN_STR).
// Only the attributes allowed for Type (AllowedBackendAttrs) are accepted,
// and no string may hold a password.
type Backend struct {
	Type  string
	Attrs []Attr
}

// Attr is one backend attribute, rendered in order.
type Attr struct {
	Name  string
	Value cty.Value
}

var clusterIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// validFor is c with its defaults, once c and in, what a root is
// rendered from, are valid.
func (c Config) validFor(in interface{ Validate() error }) (Config, error) {
	c, err := c.withDefaults()
	if err != nil {
		return c, err
	}
	return c, in.Validate()
}

// withDefaults validates c and fills its defaults.
func (c Config) withDefaults() (Config, error) {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&c.RequiredVersion, DefaultRequiredVersion)
	def(&c.ProviderSource, DefaultProviderSource)
	def(&c.ProviderVersion, DefaultProviderVersion)
	def(&c.LoadBalancerModule.Source, DefaultLoadBalancerModuleSource)
	def(&c.RoutesModule.Source, DefaultRoutesModuleSource)
	def(&c.TargetPoolsModule.Source, DefaultTargetPoolsModuleSource)
	def(&c.CertificatesModule.Source, DefaultCertificatesModuleSource)
	def(&c.DefaultLoadBalancerType, annotations.DefaultType)
	def(&c.DefaultAlgorithm, annotations.DefaultAlgorithm)

	switch {
	case !clusterIDRE.MatchString(c.ClusterID):
		return c, configError("clusterID", c.ClusterID, "must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit")
	case c.Region == "":
		return c, configError("region", c.Region, "is required")
	case !slices.Contains(annotations.Types, c.DefaultLoadBalancerType):
		return c, configError("defaultLoadBalancerType", c.DefaultLoadBalancerType, "must be one of "+strings.Join(annotations.Types, ", "))
	case !slices.Contains(annotations.Algorithms, c.DefaultAlgorithm):
		return c, configError("defaultAlgorithm", c.DefaultAlgorithm, "must be one of "+strings.Join(annotations.Algorithms, ", "))
	}
	for _, m := range []struct {
		field string
		src   ModuleSource
	}{{"modules.loadBalancer", c.LoadBalancerModule}, {"modules.routes", c.RoutesModule}, {"modules.certificates", c.CertificatesModule}} {
		if m.src.Version != "" && !IsRegistrySource(m.src.Source) {
			return c, configError(m.field+".version", m.src.Version, "applies to registry sources only; pin a git source with ?ref=<tag>")
		}
	}
	return c, c.Backend.validate()
}

// backendSetting says what one backend attribute may hold.
type backendSetting struct {
	// fields, when set, makes the attribute an object of these keys only.
	fields backendSettings
	// anyKeys makes it a map of plain values under keys of the user's
	// choosing (labels, tags).
	anyKeys bool
}

type backendSettings map[string]backendSetting

var (
	plain    = backendSetting{}
	freeKeys = backendSetting{anyKeys: true}
)

// backendAllowed lists, per backend type, every attribute the renderer
// writes into a backend block: settings that locate and lock a state,
// never a credential. An allowlist, because backends keep adding
// credential arguments (client_private_key_pem, sse_customer_key,
// assume_role_with_web_identity.web_identity_token, ...) that a list of
// forbidden names misses.
var backendAllowed = map[string]backendSettings{
	"local": {"path": plain, "workspace_dir": plain},
	"kubernetes": {
		"secret_suffix": plain, "namespace": plain, "labels": freeKeys, "in_cluster_config": plain,
		"host": plain, "insecure": plain, "cluster_ca_certificate": plain,
		"config_path": plain, "config_paths": plain, "config_context": plain,
		"config_context_auth_info": plain, "config_context_cluster": plain,
	},
	"pg": {"schema_name": plain, "skip_schema_creation": plain, "skip_table_creation": plain, "skip_index_creation": plain},
	"s3": {
		"bucket": plain, "key": plain, "region": plain, "workspace_key_prefix": plain,
		"use_lockfile": plain, "dynamodb_table": plain, "encrypt": plain, "kms_key_id": plain, "acl": plain,
		"use_path_style": plain, "use_dualstack_endpoint": plain, "use_fips_endpoint": plain,
		"endpoints":  {fields: backendSettings{"s3": plain, "iam": plain, "sts": plain, "dynamodb": plain, "sso": plain}},
		"sts_region": plain, "profile": plain, "shared_config_files": plain, "shared_credentials_files": plain,
		"allowed_account_ids": plain, "forbidden_account_ids": plain,
		"skip_credentials_validation": plain, "skip_region_validation": plain, "skip_requesting_account_id": plain,
		"skip_metadata_api_check": plain, "skip_s3_checksum": plain, "max_retries": plain, "retry_mode": plain,
		"insecure": plain, "custom_ca_bundle": plain,
		"ec2_metadata_service_endpoint": plain, "ec2_metadata_service_endpoint_mode": plain,
		"http_proxy": plain, "https_proxy": plain, "no_proxy": plain,
		"assume_role": {fields: backendSettings{
			"role_arn": plain, "session_name": plain, "duration": plain, "external_id": plain,
			"policy": plain, "policy_arns": plain, "source_identity": plain, "tags": freeKeys, "transitive_tag_keys": plain,
		}},
		"assume_role_with_web_identity": {fields: backendSettings{
			"role_arn": plain, "session_name": plain, "duration": plain,
			"policy": plain, "policy_arns": plain, "web_identity_token_file": plain,
		}},
	},
	"http": {
		"address": plain, "update_method": plain, "lock_address": plain, "unlock_address": plain,
		"lock_method": plain, "unlock_method": plain, "skip_cert_verification": plain,
		"retry_max": plain, "retry_wait_min": plain, "retry_wait_max": plain,
		"client_ca_certificate_pem": plain, "client_certificate_pem": plain,
	},
}

// backendCredentialEnv says where each backend's credentials go instead.
var backendCredentialEnv = map[string]string{
	"local":      "the local backend takes none",
	"kubernetes": "KUBE_CONFIG_PATH (state.kubernetes.kubeconfigPath), KUBE_TOKEN, KUBE_CLIENT_CERT_DATA, KUBE_CLIENT_KEY_DATA or the in-cluster service account",
	"pg":         "PG_CONN_STR (state.pg.connStrFile or connStrEnv)",
	"s3":         "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_SSE_CUSTOMER_KEY in the controller's environment",
	"http":       "TF_HTTP_USERNAME, TF_HTTP_PASSWORD (state.http.usernameFile, passwordFile), TF_HTTP_CLIENT_PRIVATE_KEY_PEM",
}

// BackendTypes are the backend types the renderer writes.
func BackendTypes() []string { return slices.Sorted(maps.Keys(backendAllowed)) }

// AllowedBackendAttrs lists the attributes allowed in a backend block of
// type typ, nested ones as parent.child (nil for an unknown type).
func AllowedBackendAttrs(typ string) []string {
	var out []string
	var walk func(prefix string, s backendSettings)
	walk = func(prefix string, s backendSettings) {
		for name, set := range s {
			out = append(out, prefix+name)
			if set.fields != nil {
				walk(prefix+name+".", set.fields)
			}
		}
	}
	walk("", backendAllowed[typ])
	slices.Sort(out)
	return out
}

func (b Backend) validate() error {
	if b.Type == "" {
		if len(b.Attrs) > 0 {
			return configError("backend.type", "", "is required when backend attributes are given")
		}
		return nil
	}
	allowed, ok := backendAllowed[b.Type]
	if !ok {
		return configError("backend.type", b.Type, "is not a supported backend type (accepted: "+strings.Join(BackendTypes(), ", ")+")")
	}
	seen := map[string]bool{}
	for _, a := range b.Attrs {
		field := "backend.attrs." + a.Name
		switch {
		case !hclsyntax.ValidIdentifier(a.Name):
			return configError(field, a.Name, "is not a valid attribute name")
		case seen[a.Name]:
			return configError(field, a.Name, "is given twice")
		case a.Value == cty.NilVal || !a.Value.IsWhollyKnown():
			return configError(field, "", "has no value")
		}
		seen[a.Name] = true
		if err := checkSetting(b.Type, field, allowed, a.Name, a.Value); err != nil {
			return err
		}
	}
	return nil
}

// checkSetting checks one attribute (or nested key) against its level of
// the allowlist, and what it holds against its kind.
func checkSetting(typ, field string, level backendSettings, name string, v cty.Value) error {
	set, ok := level[name]
	if !ok {
		names := slices.Sorted(maps.Keys(level))
		return configError(field, "", fmt.Sprintf("is not an allowed setting of the %s backend (allowed here: %s); credentials never go in rendered files but in the environment of terraform: %s",
			typ, strings.Join(names, ", "), backendCredentialEnv[typ]))
	}
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	isMap := ty.IsObjectType() || ty.IsMapType()
	switch {
	case set.fields != nil:
		if !isMap {
			return configError(field, "", "must be an object with keys "+strings.Join(slices.Sorted(maps.Keys(set.fields)), ", "))
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			if err := checkSetting(typ, field+"."+k.AsString(), set.fields, k.AsString(), ev); err != nil {
				return err
			}
		}
		return nil
	case set.anyKeys:
		if !isMap {
			return configError(field, "", "must be a map of strings")
		}
	case isMap:
		return configError(field, "", "must be a single value or a list, not an object")
	}
	return checkPlain(typ, field, v)
}

// checkPlain refuses nested objects where plain values belong, and any
// string holding a password (a URL's user:password@, password=...).
func checkPlain(typ, field string, v cty.Value) error {
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		if s := v.AsString(); redact.Text(s) != s {
			return configError(field, "", "holds a password: credentials never go in rendered files but in the environment of terraform: "+backendCredentialEnv[typ])
		}
	case ty.IsPrimitiveType():
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType() || ty.IsMapType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			if ev.Type().IsPrimitiveType() || ev.IsNull() {
				if err := checkPlain(typ, field, ev); err != nil {
					return err
				}
				continue
			}
			return configError(fmt.Sprintf("%s[%s]", field, k.GoString()), "", "must be a plain value")
		}
	default:
		return configError(field, "", "must be a plain value")
	}
	return nil
}

// IsRegistrySource reports whether src is a module registry address
// ([host/]namespace/name/system[//subdir]), following Terraform's rules:
// local paths, go-getter addresses and github.com/bitbucket.org shorthands
// are not.
func IsRegistrySource(src string) bool {
	if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") ||
		strings.Contains(src, "::") || strings.Contains(src, "://") || strings.ContainsAny(src, "?#") {
		return false
	}
	if i := strings.Index(src, "//"); i >= 0 {
		src = src[:i]
	}
	parts := strings.Split(src, "/")
	if len(parts) == 4 {
		host := strings.ToLower(parts[0])
		if host == "github.com" || host == "bitbucket.org" || !strings.Contains(host, ".") && !strings.Contains(host, ":") {
			return false
		}
		parts = parts[1:]
	}
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !registryPartRE.MatchString(p) {
			return false
		}
	}
	return true
}

var registryPartRE = regexp.MustCompile(`^[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?$`)

func configError(field, value, reason string) error {
	return &lbmodel.InputError{Field: "config " + field, Value: value, Reason: reason}
}

// Service is what a Service's translation reads of c
// (servicemodel.Translate): c's cluster, region, defaults and limits, and
// what is set per Service (the target pool, the certificates).
func (c Config) Service() servicemodel.Config {
	return servicemodel.Config{
		ClusterID: c.ClusterID, Region: c.Region,
		DefaultType: c.DefaultLoadBalancerType, DefaultAlgorithm: c.DefaultAlgorithm,
		MaxListeners: c.MaxListeners, TargetPoolID: c.TargetPoolID,
		Certificates: c.Certificates, SkipTLSSecrets: c.SkipTLSSecrets,
	}
}
