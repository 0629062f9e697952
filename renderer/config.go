package renderer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/annotations"
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
)

// Config is everything rendering needs besides the Kubernetes objects.
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
}

// MaxListeners is the Example cloud's limit of listeners per load
// balancer.
const MaxListeners = 100

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
// go here: backends read them from the environment (e.g. PG_CONN_STR), and
// attributes named like credentials are rejected.
type Backend struct {
	Type  string
	Attrs []Attr
}

// Attr is one backend attribute, rendered in order.
type Attr struct {
	Name  string
	Value cty.Value
}

// credentialAttrs are backend arguments that carry secrets; rendering them
// would put a secret into a file users review and commit.
var credentialAttrs = []string{
	"access_key", "access_token", "client_certificate", "client_key", "client_secret",
	"conn_str", "credentials", "encryption_key", "password", "sas_token",
	"secret_key", "session_token", "token",
}

var clusterIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

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
	}{{"modules.loadBalancer", c.LoadBalancerModule}, {"modules.routes", c.RoutesModule}} {
		if m.src.Version != "" && !IsRegistrySource(m.src.Source) {
			return c, configError(m.field+".version", m.src.Version, "applies to registry sources only; pin a git source with ?ref=<tag>")
		}
	}
	return c, c.Backend.validate()
}

func (b Backend) validate() error {
	if b.Type == "" {
		if len(b.Attrs) > 0 {
			return configError("backend.type", "", "is required when backend attributes are given")
		}
		return nil
	}
	if !hclsyntax.ValidIdentifier(b.Type) {
		return configError("backend.type", b.Type, "is not a valid backend type")
	}
	seen := map[string]bool{}
	for _, a := range b.Attrs {
		field := "backend.attrs." + a.Name
		switch {
		case !hclsyntax.ValidIdentifier(a.Name):
			return configError(field, a.Name, "is not a valid attribute name")
		case seen[a.Name]:
			return configError(field, a.Name, "is given twice")
		case slices.Contains(credentialAttrs, strings.ToLower(a.Name)):
			return configError(field, "", "carries a credential: pass it through the backend's environment variable instead, never in rendered files")
		case a.Value == cty.NilVal || !a.Value.IsWhollyKnown():
			return configError(field, "", "has no value")
		}
		seen[a.Name] = true
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
	return &InputError{Field: "config " + field, Value: value, Reason: reason}
}

// InputError is an input the renderer cannot turn into a valid module: a
// Service field, a node or a config field, named in Field.
type InputError struct {
	Field  string
	Value  string
	Reason string
}

func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("%s: %q %s", e.Field, e.Value, e.Reason)
}
