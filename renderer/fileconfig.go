package renderer

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"sigs.k8s.io/yaml"
)

// FileConfig is Config as YAML (or JSON), for examplectl render and, later,
// the rendering part of the controller's cloud config:
//
//	clusterID: prod-eu
//	region: ex-west-1
//	endpoint: https://api.example.cloud
//	networkName: cluster-net          # or networkID: net-…
//	defaultLoadBalancerType: lb-small
//	defaultAlgorithm: round_robin
//	modules:
//	  loadBalancer: {source: "git::https://git.example.com/tf.git//lb?ref=v1.4.2"}
//	  routes: {source: registry.example.com/platform/routes/example, version: "~> 1.0"}
//	backend:
//	  type: pg
//	  attrs: {schema_name: ccm_prod_eu}
//
// Backend attributes are rendered sorted by name. Only the settings the
// backend type allows are accepted, nested keys included (s3's endpoints,
// assume_role, assume_role_with_web_identity; see AllowedBackendAttrs):
// credentials belong in the backend's environment variables, and an
// error names the refused attribute path and those variables.
type FileConfig struct {
	ClusterID               string       `json:"clusterID"`
	Region                  string       `json:"region"`
	Endpoint                string       `json:"endpoint,omitempty"`
	NetworkID               string       `json:"networkID,omitempty"`
	NetworkName             string       `json:"networkName,omitempty"`
	DefaultLoadBalancerType string       `json:"defaultLoadBalancerType,omitempty"`
	DefaultAlgorithm        string       `json:"defaultAlgorithm,omitempty"`
	RequiredVersion         string       `json:"requiredVersion,omitempty"`
	Provider                FileProvider `json:"provider,omitempty"`
	Modules                 FileModules  `json:"modules,omitempty"`
	Backend                 *FileBackend `json:"backend,omitempty"`
}

// FileProvider overrides the provider's source address and pinned version.
type FileProvider struct {
	Source  string `json:"source,omitempty"`
	Version string `json:"version,omitempty"`
}

// FileModules overrides the module sources (default: the shipped modules).
type FileModules struct {
	LoadBalancer FileModuleSource `json:"loadBalancer,omitempty"`
	Routes       FileModuleSource `json:"routes,omitempty"`
}

// FileModuleSource is ModuleSource in YAML.
type FileModuleSource struct {
	Source  string `json:"source,omitempty"`
	Version string `json:"version,omitempty"`
}

// FileBackend is Backend in YAML; attribute values are any JSON/YAML value.
type FileBackend struct {
	Type  string                     `json:"type"`
	Attrs map[string]json.RawMessage `json:"attrs,omitempty"`
}

// ParseConfigYAML reads a FileConfig strictly (unknown fields are errors)
// and returns the Config; validation happens when rendering.
func ParseConfigYAML(data []byte) (Config, error) {
	var fc FileConfig
	if err := yaml.UnmarshalStrict(data, &fc); err != nil {
		return Config{}, fmt.Errorf("parse config: %w", err)
	}
	return fc.Config()
}

// Config converts the file form.
func (fc FileConfig) Config() (Config, error) {
	c := Config{
		ClusterID: fc.ClusterID, Region: fc.Region, Endpoint: fc.Endpoint,
		NetworkID: fc.NetworkID, NetworkName: fc.NetworkName,
		DefaultLoadBalancerType: fc.DefaultLoadBalancerType, DefaultAlgorithm: fc.DefaultAlgorithm,
		RequiredVersion: fc.RequiredVersion,
		ProviderSource:  fc.Provider.Source, ProviderVersion: fc.Provider.Version,
		LoadBalancerModule: ModuleSource(fc.Modules.LoadBalancer),
		RoutesModule:       ModuleSource(fc.Modules.Routes),
	}
	if fc.Backend == nil {
		return c, nil
	}
	c.Backend.Type = fc.Backend.Type
	for _, name := range slices.Sorted(maps.Keys(fc.Backend.Attrs)) {
		raw := fc.Backend.Attrs[name]
		ty, err := ctyjson.ImpliedType(raw)
		if err != nil {
			return c, fmt.Errorf("config backend.attrs.%s: %w", name, err)
		}
		v, err := ctyjson.Unmarshal(raw, ty)
		if err != nil {
			return c, fmt.Errorf("config backend.attrs.%s: %w", name, err)
		}
		if v.IsNull() {
			v = cty.NullVal(cty.String)
		}
		c.Backend.Attrs = append(c.Backend.Attrs, Attr{Name: name, Value: v})
	}
	return c, nil
}
