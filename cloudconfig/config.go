// Package cloudconfig is the controller's --cloud-config file: its types,
// defaults, validation and the mapping to what rendering needs. The CCM and
// examplectl read it through this package only, so `examplectl render
// --config` renders what the controller renders.
package cloudconfig

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/deregistration"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
	"github.com/example/cloud-provider-example/tenancy"
)

// Config is the CCM's --cloud-config file (YAML). docs/cloud-config.md
// describes every field; Validate names the field of any error.
type Config struct {
	// ClusterID names the cluster in cloud object names, tags and
	// workspaces.
	ClusterID string `json:"clusterID"`
	// Region the cluster runs in.
	Region string `json:"region"`

	API      APIConfig      `json:"api"`
	Metadata MetadataConfig `json:"metadata"`
	// Network holds the cluster's routes.
	Network NetworkConfig `json:"network,omitempty"`

	Terraform    TerraformConfig    `json:"terraform"`
	Modules      ModulesConfig      `json:"modules,omitempty"`
	State        state.Config       `json:"state"`
	LoadBalancer LoadBalancerConfig `json:"loadBalancer,omitempty"`
	Review       ReviewConfig       `json:"review,omitempty"`
	Webhook      WebhookConfig      `json:"webhook,omitempty"`
	Sharding     ShardingConfig     `json:"sharding,omitempty"`
	GatewayAPI   GatewayAPIConfig   `json:"gatewayAPI,omitempty"`

	// rules are Review.Policy.Rules compiled (by Load).
	rules *policy.Rules
}

// ReviewConfig is where plans are recorded and how drift is checked.
type ReviewConfig struct {
	// Namespace holds the plan records (ConfigMaps and Secrets
	// ccm-plans-<workspace>); default kube-system.
	Namespace string `json:"namespace,omitempty"`
	// Keep is how many plans a record keeps (default 10).
	Keep int `json:"keep,omitempty"`
	// AuditLog is the JSON-lines audit log: a file path, or "-" (default)
	// for standard output.
	AuditLog string `json:"auditLog,omitempty"`
	// Drift checks every object's plan against the cloud periodically.
	Drift DriftConfig `json:"drift,omitempty"`
	// Approvals says how many people approve a plan.
	Approvals ApprovalsConfig `json:"approvals,omitempty"`
	// Policy holds the rules that flag plans for approval or deny them.
	Policy PolicyConfig `json:"policy,omitempty"`
}

// ApprovalsConfig is what an approval takes.
type ApprovalsConfig struct {
	// Required is how many distinct people (PlanApprovals with distinct,
	// API-server-verified approvers) a plan needs (default 1).
	Required int `json:"required,omitempty"`
	// PolicyPropagation (default 1m) is how long after an admission
	// policy that verifies identities (approvers, a Service's author) was
	// installed or changed its checks are not relied on: an API server
	// enforces a policy only once its informer has it, and every API
	// server of the cluster has its own. What was written in that window
	// counts as unchecked.
	PolicyPropagation *Duration `json:"policyPropagation,omitempty"`
}

// PolicyConfig holds the policy rules (CEL), compiled at start-up.
type PolicyConfig struct {
	// Rules flag plans; unset means policy.Defaults, an empty list none.
	Rules []policy.Rule `json:"rules,omitempty"`
}

// DriftConfig configures the drift worker.
type DriftConfig struct {
	// Disabled turns drift checks off.
	Disabled bool `json:"disabled,omitempty"`
	// Interval between checks of an object (default 15m), jittered by up
	// to 10 %.
	Interval Duration `json:"interval,omitempty"`
	// Concurrency bounds the checks run at once (default 1: they compete
	// with real changes for CPU).
	Concurrency int `json:"concurrency,omitempty"`
}

// APIConfig is the control API, used by Terraform's provider only: the CCM
// itself never calls it.
type APIConfig struct {
	Endpoint string `json:"endpoint"`
	// TokenFile holds the read-write token (a mounted Secret); else the
	// environment variable TokenEnv (default EXAMPLE_TOKEN).
	TokenFile string `json:"tokenFile,omitempty"`
	TokenEnv  string `json:"tokenEnv,omitempty"`
}

// MetadataConfig is the metadata API, read directly by Instances and Zones.
type MetadataConfig struct {
	Endpoint string `json:"endpoint"`
	// TokenFile / TokenEnv (default EXAMPLE_READONLY_TOKEN) hold the
	// read-only token; empty falls back to the API token.
	TokenFile string `json:"tokenFile,omitempty"`
	TokenEnv  string `json:"tokenEnv,omitempty"`
	// CacheTTL bounds how stale instance metadata may be (default 30s).
	CacheTTL Duration `json:"cacheTTL,omitempty"`
}

// NetworkConfig names the network whose route table holds pod routes.
type NetworkConfig struct {
	Name string `json:"name,omitempty"`
	ID   string `json:"id,omitempty"`
}

// TerraformConfig is how Terraform runs.
type TerraformConfig struct {
	// Binary is an explicit terraform path; else Version is looked up on
	// PATH, and downloaded into InstallDir when that is set.
	Binary     string `json:"binary,omitempty"`
	Version    string `json:"version,omitempty"`
	InstallDir string `json:"installDir,omitempty"`
	// WorkDir holds one workspace directory per object.
	WorkDir string `json:"workDir"`
	// CLIConfig and LockFile come from `make provider` (the image bakes
	// them): filesystem mirror of the Example provider, offline.
	CLIConfig      string   `json:"cliConfig"`
	LockFile       string   `json:"lockFile"`
	PluginCacheDir string   `json:"pluginCacheDir,omitempty"`
	Concurrency    int      `json:"concurrency,omitempty"`
	LockTimeout    Duration `json:"lockTimeout,omitempty"`
	StaleLockAge   Duration `json:"staleLockAge,omitempty"`
	// KeepPlanText keeps the human-readable text of the last plan with
	// changes in each workspace (.ccm/last-plan.txt); one more terraform
	// process per change.
	KeepPlanText bool `json:"keepPlanText,omitempty"`
	// ProcessMemoryLimit is the heap a terraform process grows to before
	// its garbage collector runs (a quantity, default 512Mi); "0" collects
	// as it goes (Go's default: less memory, a fifth more CPU).
	ProcessMemoryLimit string `json:"processMemoryLimit,omitempty"`
	// ApplyPolicy is auto (default), manual or plan-only.
	ApplyPolicy string `json:"applyPolicy,omitempty"`
	// Provider is where terraform gets the Example provider: attached
	// (default: served inside the controller, terraform attaches to it;
	// cliConfig is still used, lockFile is not) or spawned (the binary
	// from cliConfig's mirror, pinned by lockFile).
	Provider string `json:"provider,omitempty"`
	// Distribution is terraform (default) or tofu (OpenTofu: binary, else tofu
	// on PATH; no installDir, hc-install cannot install it).
	Distribution string `json:"distribution,omitempty"`
	// Encryption encrypts states and saved plans (distribution tofu).
	Encryption *EncryptionConfig `json:"encryption,omitempty"`
}

// ModulesConfig overrides the module sources (default: the shipped ones).
type ModulesConfig struct {
	LoadBalancer renderer.ModuleSource `json:"loadBalancer,omitempty"`
	Routes       renderer.ModuleSource `json:"routes,omitempty"`
}

// LoadBalancerConfig holds defaults for Services without annotations, and
// what Services may ask for.
type LoadBalancerConfig struct {
	DefaultType      string `json:"defaultType,omitempty"`
	DefaultAlgorithm string `json:"defaultAlgorithm,omitempty"`
	// MaxListeners caps a Service's ports (default and at most 100, the
	// Example cloud's limit): a larger Service is refused with an event.
	MaxListeners int `json:"maxListeners,omitempty"`
	// Adoption governs the adopt-id annotation.
	Adoption AdoptionConfig `json:"adoption,omitempty"`
	// SharedCertificates are cloud certificates the platform lets
	// namespaces name in certificate-ids besides their own (those this
	// cluster uploaded for a Service of the namespace): docs/tenancy.md.
	SharedCertificates []tenancy.SharedCertificate `json:"sharedCertificates,omitempty"`
	// TargetPools: load balancers forward to a target pool per node
	// selection, so node churn is one apply (default); disabled lists the
	// nodes on every load balancer.
	TargetPools TargetPoolsConfig `json:"targetPools,omitempty"`
	// Groups governs the group annotation (shared load balancers).
	Groups GroupsConfig `json:"groups,omitempty"`
	// TLSSecrets governs the tls-secrets annotation (docs/certificates.md).
	TLSSecrets TLSSecretsConfig `json:"tlsSecrets,omitempty"`
	// Addresses governs reserved addresses (docs/addresses.md).
	Addresses AddressesConfig `json:"addresses,omitempty"`
}

// AddressesConfig governs the reserved addresses Services take and keep.
type AddressesConfig struct {
	// MaxPerNamespace bounds the reserved addresses of one namespace
	// (default 5): the controller reserves none past it for address-keep,
	// and says so with an AddressCapReached event. Addresses a namespace
	// reserved outside the controller count too.
	MaxPerNamespace int `json:"maxPerNamespace,omitempty"`
}

// TLSSecretsConfig governs certificates from Kubernetes TLS Secrets.
type TLSSecretsConfig struct {
	// ResyncInterval is how often the Secrets that Services name are read
	// again (default 30s), so a renewed certificate is uploaded and the
	// load balancer moved to it. An unchanged Secret costs one GET and no
	// terraform.
	ResyncInterval Duration `json:"resyncInterval,omitempty"`
}

// GroupsConfig governs load balancer groups (docs/shared-load-balancers.md).
type GroupsConfig struct {
	// CrossNamespace is retired and ignored: a Service joins a group of
	// another namespace with that namespace's consent, a ReferenceGrant
	// (docs/tenancy.md), never by a cluster-wide switch.
	CrossNamespace bool `json:"crossNamespace,omitempty"`
}

// TargetPoolsConfig configures the target pools.
type TargetPoolsConfig struct {
	Disabled bool `json:"disabled,omitempty"`
	// ApplyPolicy of the pools' plans (default auto, whatever the
	// cluster's): a pool only follows the nodes, and under manual every
	// node joining would wait for a person before any load balancer
	// could use it. Policy rules still apply.
	ApplyPolicy string `json:"applyPolicy,omitempty"`
	// MaxPerNamespace bounds the pools the Services of one namespace may
	// have created for node selections of their own (default 8): beyond
	// it, a Service lists its nodes itself, in its own plan.
	MaxPerNamespace int `json:"maxPerNamespace,omitempty"`
	// PruneInterval is how often pools that no Service selects any more
	// are destroyed (default 10m).
	PruneInterval Duration `json:"pruneInterval,omitempty"`
	// DeregistrationDelay is how long a node leaving a pool keeps its
	// open connections, getting no new ones (default 30s; 0s removes it
	// at once; at most 1h).
	DeregistrationDelay *Duration `json:"deregistrationDelay,omitempty"`
	// DrainTaints mark a drain under way: an unschedulable node with one
	// of them leaves the pools (default node.example.com/draining and
	// karpenter.sh/disrupted). The autoscaler's deletion taint, the
	// shutdown taint, the exclude label and deletion always do.
	DrainTaints []string `json:"drainTaints,omitempty"`
	// MinHealthyPercent of a pool's Ready nodes stay while nodes leave
	// (default 50; 0 lets every leaving node go at once, but a pool keeps
	// one while any is Ready): the rest wait for replacements, in waves.
	MinHealthyPercent *int `json:"minHealthyPercent,omitempty"`
	// SettleTime a node that stopped leaving must stay so before it
	// returns to the pools (default 10s): a flapping node costs one apply
	// out and one back.
	SettleTime *Duration `json:"settleTime,omitempty"`
}

// Deregistration is the node lifecycle's settings (defaults applied).
func (t TargetPoolsConfig) Deregistration() deregistration.Settings {
	s := deregistration.Settings{DrainTaints: t.DrainTaints, MinHealthyShare: float64(DefaultMinHealthyPercent) / 100, SettleTime: DefaultSettleTime}
	if t.MinHealthyPercent != nil {
		s.MinHealthyShare = float64(*t.MinHealthyPercent) / 100
	}
	if t.SettleTime != nil {
		s.SettleTime = t.SettleTime.Duration
	}
	return s
}

// Defaults of loadBalancer.targetPools' node lifecycle.
const (
	DefaultDeregistrationDelay = 30 * time.Second
	DefaultMinHealthyPercent   = 50
	DefaultSettleTime          = 10 * time.Second
)

// DefaultAddressesPerNamespace is loadBalancer.addresses.maxPerNamespace's
// default.
const DefaultAddressesPerNamespace = 5

// DefaultPolicyPropagation is review.approvals.policyPropagation's
// default: an API server's informer usually delivers a new policy within
// a second; a loaded one has taken over 30 s.
const DefaultPolicyPropagation = time.Minute

// AdoptionConfig says who may adopt an existing load balancer.
type AdoptionConfig struct {
	// Enabled allows the adopt-id annotation at all (default false).
	Enabled bool `json:"enabled,omitempty"`
	// Namespaces, when set, allows it only for Services in these
	// namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
}

// Allows tells whether a Service in namespace may adopt.
func (a AdoptionConfig) Allows(namespace string) bool {
	return a.Enabled && (len(a.Namespaces) == 0 || slices.Contains(a.Namespaces, namespace))
}

// Duration is a time.Duration written as "30s" in YAML. A malformed value
// is kept and reported by Validate, which knows the field's name.
type Duration struct {
	time.Duration
	invalid string
}

// UnmarshalJSON reads "30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	*d = Duration{}
	if s == "" || s == "null" {
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.invalid = s
		return nil
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Load reads and validates a cloud config. Unknown fields are errors:
// a typo must not silently fall back to a default.
func Load(data []byte) (*Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("cloud config: %w", err)
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("cloud config: %w", err)
	}
	rules, err := policy.Compile(c.Review.Policy.Rules)
	if err != nil {
		return nil, fmt.Errorf("cloud config: review.policy.rules: %w", err)
	}
	c.rules = rules
	return &c, nil
}

// Rules are the compiled policy rules (review.policy.rules).
func (c *Config) Rules() *policy.Rules { return c.rules }

// defaultNamespace is the controller's own namespace: the pod's (the
// Deployment passes POD_NAMESPACE), else example-ccm.
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "example-ccm"
}

func (c *Config) defaults() {
	if c.API.TokenEnv == "" {
		c.API.TokenEnv = "EXAMPLE_TOKEN"
	}
	if c.Metadata.TokenEnv == "" {
		c.Metadata.TokenEnv = "EXAMPLE_READONLY_TOKEN"
	}
	if c.Metadata.CacheTTL.Duration == 0 {
		c.Metadata.CacheTTL.Duration = 30 * time.Second
	}
	if c.Terraform.Concurrency == 0 {
		c.Terraform.Concurrency = 4
	}
	if c.Terraform.LockTimeout.Duration == 0 {
		c.Terraform.LockTimeout.Duration = 30 * time.Second
	}
	if c.Terraform.ApplyPolicy == "" {
		c.Terraform.ApplyPolicy = string(annotations.ApplyAuto)
	}
	if c.Terraform.Distribution == "" {
		c.Terraform.Distribution = string(runner.DistributionTerraform)
	}
	if c.Review.Namespace == "" {
		c.Review.Namespace = defaultNamespace()
	}
	if c.Terraform.Encryption != nil {
		c.Terraform.Encryption.defaults(c.Review.Namespace)
	}
	if c.Review.Approvals.Required == 0 {
		c.Review.Approvals.Required = 1
	}
	if c.Review.Approvals.PolicyPropagation == nil {
		c.Review.Approvals.PolicyPropagation = &Duration{Duration: DefaultPolicyPropagation}
	}
	if c.Review.Policy.Rules == nil {
		c.Review.Policy.Rules = policy.Defaults
	}
	if c.LoadBalancer.TargetPools.ApplyPolicy == "" {
		c.LoadBalancer.TargetPools.ApplyPolicy = string(annotations.ApplyAuto)
	}
	if c.LoadBalancer.TargetPools.MaxPerNamespace == 0 {
		c.LoadBalancer.TargetPools.MaxPerNamespace = 8
	}
	if c.LoadBalancer.Addresses.MaxPerNamespace == 0 {
		c.LoadBalancer.Addresses.MaxPerNamespace = DefaultAddressesPerNamespace
	}
	if c.LoadBalancer.TargetPools.PruneInterval.Duration == 0 {
		c.LoadBalancer.TargetPools.PruneInterval.Duration = 10 * time.Minute
	}
	if c.LoadBalancer.TargetPools.DeregistrationDelay == nil {
		c.LoadBalancer.TargetPools.DeregistrationDelay = &Duration{Duration: DefaultDeregistrationDelay}
	}
	if c.LoadBalancer.TargetPools.DrainTaints == nil {
		c.LoadBalancer.TargetPools.DrainTaints = slices.Clone(deregistration.DefaultDrainTaints)
	}
	if c.LoadBalancer.TargetPools.MinHealthyPercent == nil {
		c.LoadBalancer.TargetPools.MinHealthyPercent = ptr.To(DefaultMinHealthyPercent)
	}
	if c.LoadBalancer.TargetPools.SettleTime == nil {
		c.LoadBalancer.TargetPools.SettleTime = &Duration{Duration: DefaultSettleTime}
	}
	if c.LoadBalancer.TLSSecrets.ResyncInterval.Duration == 0 {
		c.LoadBalancer.TLSSecrets.ResyncInterval.Duration = 30 * time.Second
	}
	if c.LoadBalancer.MaxListeners == 0 {
		c.LoadBalancer.MaxListeners = renderer.MaxListeners
	}
	c.Webhook.defaults()
	c.Sharding.defaults()
	c.GatewayAPI.defaults()
	if c.Review.Keep == 0 {
		c.Review.Keep = 10
	}
	if c.Review.AuditLog == "" {
		c.Review.AuditLog = "-"
	}
	if c.Review.Drift.Interval.Duration == 0 {
		c.Review.Drift.Interval.Duration = 15 * time.Minute
	}
	if c.Review.Drift.Concurrency == 0 {
		c.Review.Drift.Concurrency = 1
	}
	if c.Network.Name == "" && c.Network.ID == "" {
		c.Network.Name = "default"
	}
}

// Validate checks c and names the offending field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.ClusterID == "" {
		bad("clusterID", "required")
	}
	if c.Region == "" {
		bad("region", "required")
	}
	checkURL := func(field, v string) {
		u, err := url.Parse(v)
		if v == "" {
			bad(field, "required")
		} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(field, "%q is not an http(s) URL", v)
		}
	}
	checkURL("api.endpoint", c.API.Endpoint)
	checkURL("metadata.endpoint", c.Metadata.Endpoint)
	if c.Terraform.WorkDir == "" {
		bad("terraform.workDir", "required")
	}
	if c.Terraform.CLIConfig == "" {
		bad("terraform.cliConfig", "required (written by `make provider`; the image bakes one)")
	}
	if c.Terraform.Concurrency < 0 {
		bad("terraform.concurrency", "must be positive")
	}
	if _, err := c.Terraform.ProcessMemoryLimitBytes(); err != nil {
		bad("terraform.processMemoryLimit", "%v", err)
	}
	if !slices.Contains(annotations.ApplyPolicies, c.Terraform.ApplyPolicy) {
		bad("terraform.applyPolicy", "unknown policy %q (accepted: %v)", c.Terraform.ApplyPolicy, annotations.ApplyPolicies)
	}
	if p := c.Terraform.Provider; p != "" && p != string(runner.ProviderAttached) && p != string(runner.ProviderSpawned) {
		bad("terraform.provider", "unknown mode %q (accepted: %s, %s)", p, runner.ProviderAttached, runner.ProviderSpawned)
	}
	if e := runner.Distribution(c.Terraform.Distribution); !slices.Contains(runner.Distributions, e) {
		bad("terraform.distribution", "unknown distribution %q (accepted: %s, %s)", e, runner.DistributionTerraform, runner.DistributionTofu)
	} else if e == runner.DistributionTofu && c.Terraform.InstallDir != "" {
		bad("terraform.installDir", "not supported with distribution tofu (hc-install installs only Terraform): set terraform.binary or put tofu on PATH")
	}
	if c.Terraform.Encryption != nil {
		c.Terraform.Encryption.validate(c.Terraform.Distribution, bad)
	}
	if p := c.LoadBalancer.TargetPools.ApplyPolicy; !slices.Contains(annotations.ApplyPolicies, p) {
		bad("loadBalancer.targetPools.applyPolicy", "unknown policy %q (accepted: %v)", p, annotations.ApplyPolicies)
	}
	for field, d := range map[string]Duration{
		"metadata.cacheTTL": c.Metadata.CacheTTL, "terraform.lockTimeout": c.Terraform.LockTimeout, "terraform.staleLockAge": c.Terraform.StaleLockAge,
		"review.drift.interval": c.Review.Drift.Interval, "loadBalancer.tlsSecrets.resyncInterval": c.LoadBalancer.TLSSecrets.ResyncInterval,
		"loadBalancer.targetPools.pruneInterval": c.LoadBalancer.TargetPools.PruneInterval,
	} {
		if d.invalid != "" {
			bad(field, "invalid duration %q (want e.g. 30s, 5m)", d.invalid)
		}
	}
	if d := c.LoadBalancer.TargetPools.DeregistrationDelay; d != nil && (d.invalid != "" || d.Duration > time.Hour || d.Duration%time.Second != 0) {
		bad("loadBalancer.targetPools.deregistrationDelay", "%q: want whole seconds from 0s to 1h", cmp.Or(d.invalid, d.String()))
	}
	if p := c.LoadBalancer.TargetPools.MinHealthyPercent; p != nil && (*p < 0 || *p > 100) {
		bad("loadBalancer.targetPools.minHealthyPercent", "%d: want 0 to 100", *p)
	}
	if d := c.LoadBalancer.TargetPools.SettleTime; d != nil && (d.invalid != "" || d.Duration < 0 || d.Duration > 10*time.Minute) {
		bad("loadBalancer.targetPools.settleTime", "%q: want a duration from 0s to 10m", cmp.Or(d.invalid, d.String()))
	}
	for _, t := range c.LoadBalancer.TargetPools.DrainTaints {
		if errs := validation.IsQualifiedName(t); len(errs) > 0 {
			bad("loadBalancer.targetPools.drainTaints", "%q is not a taint key: %s", t, strings.Join(errs, "; "))
		}
	}
	if c.LoadBalancer.TargetPools.MaxPerNamespace < 0 {
		bad("loadBalancer.targetPools.maxPerNamespace", "must not be negative")
	}
	if c.LoadBalancer.Addresses.MaxPerNamespace < 0 {
		bad("loadBalancer.addresses.maxPerNamespace", "must not be negative")
	}
	c.Sharding.validate(bad)
	c.GatewayAPI.validate(bad)
	if c.Review.Keep < 1 {
		bad("review.keep", "must be at least 1")
	}
	if c.Review.Approvals.Required < 1 {
		bad("review.approvals.required", "must be at least 1")
	}
	if d := c.Review.Approvals.PolicyPropagation; d != nil && (d.invalid != "" || d.Duration > time.Hour) {
		bad("review.approvals.policyPropagation", "%q: want a duration from 0s to 1h", cmp.Or(d.invalid, d.String()))
	}
	if m := c.LoadBalancer.MaxListeners; m < 1 || m > renderer.MaxListeners {
		bad("loadBalancer.maxListeners", "%d is out of range 1-%d (the Example cloud's limit)", m, renderer.MaxListeners)
	}
	for i, ns := range c.LoadBalancer.Adoption.Namespaces {
		if ns == "" {
			bad(fmt.Sprintf("loadBalancer.adoption.namespaces[%d]", i), "is empty")
		}
	}
	for i, sc := range c.LoadBalancer.SharedCertificates {
		field := fmt.Sprintf("loadBalancer.sharedCertificates[%d]", i)
		if !strings.HasPrefix(sc.ID, "cert-") {
			bad(field+".id", "%q is not a certificate id (cert-...)", sc.ID)
		}
		if len(sc.Namespaces) == 0 || slices.Contains(sc.Namespaces, "") {
			bad(field+".namespaces", "must list the namespaces that may use it (\"*\": every namespace), none empty")
		}
	}
	if err := c.State.Validate(); err != nil {
		errs = append(errs, err)
	}
	c.Webhook.validate(bad)
	return errors.Join(errs...)
}

// ReadToken reads a token from a file, else from an environment variable.
func ReadToken(file, env string) (string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read token file: %w", err)
		}
		return strings.TrimSpace(string(data)), nil
	}
	if v := os.Getenv(env); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("no token: set tokenFile or the environment variable %s", env)
}

// ProcessMemoryLimitBytes is ProcessMemoryLimit for runner.Config: 0 for
// the default, negative for Go's own collector.
func (t TerraformConfig) ProcessMemoryLimitBytes() (int64, error) {
	if t.ProcessMemoryLimit == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(t.ProcessMemoryLimit)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a quantity (want e.g. 512Mi, or 0)", t.ProcessMemoryLimit)
	case q.Sign() < 0:
		return 0, fmt.Errorf("%q: must not be negative", t.ProcessMemoryLimit)
	case q.IsZero():
		return -1, nil
	case q.Value() < 64<<20:
		return 0, fmt.Errorf("%q: below 64Mi a terraform process would collect all the time", t.ProcessMemoryLimit)
	}
	return q.Value(), nil
}
