package cloudconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
)

// mustLoad loads cloudconfigtest.Minimal plus extra (YAML).
func mustLoad(t *testing.T, extra string) *Config {
	t.Helper()
	c, err := Load([]byte(cloudconfigtest.Minimal + extra))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refused fails t unless loading cfg fails with an error that says want.
func refused(t *testing.T, cfg, want string) {
	t.Helper()
	if _, err := Load([]byte(cfg)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: got %v", want, err)
	}
}

func TestLoadDefaults(t *testing.T) {
	c := mustLoad(t, "")
	if c.Metadata.CacheTTL.Duration != 30*time.Second || c.Terraform.Concurrency != 4 || c.Terraform.ApplyPolicy != "auto" ||
		c.Network.Name != "default" || c.API.TokenEnv != "EXAMPLE_TOKEN" || c.Terraform.LockTimeout.Duration != 30*time.Second {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

// Every error names the field it is about.
func TestLoadErrorsNameTheField(t *testing.T) {
	cases := map[string]string{
		"clusterID":             strings.Replace(cloudconfigtest.Minimal, "clusterID: prod", "", 1),
		"api.endpoint":          strings.Replace(cloudconfigtest.Minimal, `"http://127.0.0.1:8440"`, `"ftp://x"`, 1),
		"terraform.workDir":     strings.Replace(cloudconfigtest.Minimal, "workDir: /var/lib/ccm, ", "", 1),
		"terraform.applyPolicy": cloudconfigtest.Minimal + "\n" + `loadBalancer: {}` + "\n",
		"state.type":            strings.Replace(cloudconfigtest.Minimal, "type: local", "type: consul", 1),
		"cacheTTL":              strings.Replace(cloudconfigtest.Minimal, `metadata: {endpoint: "http://127.0.0.1:8441"}`, `metadata: {endpoint: "http://127.0.0.1:8441", cacheTTL: soon}`, 1),
		"unknown field":         cloudconfigtest.Minimal + "\nregoin: typo\n",
	}
	cases["terraform.applyPolicy"] = strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, applyPolicy: yolo", 1)
	for field, cfg := range cases {
		refused(t, cfg, field)
	}
}

func TestReviewDefaults(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	c := mustLoad(t, "")
	if c.Review.Namespace != "example-ccm" || c.Review.Approvals.Required != 1 || c.LoadBalancer.MaxListeners != 100 ||
		c.LoadBalancer.Adoption.Enabled || c.LoadBalancer.Groups.CrossNamespace || c.rules.Len() != 4 {
		t.Fatalf("defaults: %+v, %d rules", c.Review, c.rules.Len())
	}
	if c.Review.Approvals.PolicyPropagation.Duration != DefaultPolicyPropagation {
		t.Fatalf("review.approvals.policyPropagation: %v, want %v", c.Review.Approvals.PolicyPropagation, DefaultPolicyPropagation)
	}
	if c = mustLoad(t, "review: {approvals: {policyPropagation: 0s}}\n"); c.Review.Approvals.PolicyPropagation.Duration != 0 {
		t.Fatalf("review.approvals.policyPropagation 0s: %v", c.Review.Approvals.PolicyPropagation)
	}
	if c = mustLoad(t, "loadBalancer: {groups: {crossNamespace: true}}\n"); !c.LoadBalancer.Groups.CrossNamespace {
		t.Fatal("groups.crossNamespace not set")
	}
	t.Setenv("POD_NAMESPACE", "ccm-prod")
	c = mustLoad(t, "review: {policy: {rules: []}}\n")
	if c.Review.Namespace != "ccm-prod" || c.rules.Len() != 0 {
		t.Fatalf("the pod's namespace and no rules: %+v, %d rules", c.Review, c.rules.Len())
	}
}

// A rule that does not compile stops start-up with an error naming it;
// so do out-of-range review settings.
func TestReviewConfigErrors(t *testing.T) {
	cases := map[string]string{
		`rule "broken"`:             cloudconfigtest.Minimal + `review: {policy: {rules: [{name: broken, effect: deny, message: m, when: "plan.nope"}]}}`,
		`rule "effect"`:             cloudconfigtest.Minimal + `review: {policy: {rules: [{name: effect, effect: warn, message: m, when: "true"}]}}`,
		"review.approvals.required": cloudconfigtest.Minimal + `review: {approvals: {required: -1}}`,
		`review.approvals.policyPropagation: "2h0m0s"`:  cloudconfigtest.Minimal + `review: {approvals: {policyPropagation: 2h}}`,
		`review.approvals.policyPropagation: "-1s"`:     cloudconfigtest.Minimal + `review: {approvals: {policyPropagation: -1s}}`,
		"loadBalancer.maxListeners":                     cloudconfigtest.Minimal + `loadBalancer: {maxListeners: 101}`,
		"loadBalancer.adoption.namespaces[0]":           cloudconfigtest.Minimal + `loadBalancer: {adoption: {enabled: true, namespaces: [""]}}`,
		"loadBalancer.sharedCertificates[0].id":         cloudconfigtest.Minimal + `loadBalancer: {sharedCertificates: [{id: lb-1, namespaces: [a]}]}`,
		"loadBalancer.sharedCertificates[0].namespaces": cloudconfigtest.Minimal + `loadBalancer: {sharedCertificates: [{id: cert-1}]}`,
	}
	for want, cfg := range cases {
		refused(t, cfg, want)
	}
}

func TestAdoptionAllows(t *testing.T) {
	for _, c := range []struct {
		cfg  AdoptionConfig
		ns   string
		want bool
	}{
		{AdoptionConfig{}, "a", false},
		{AdoptionConfig{Enabled: true}, "a", true},
		{AdoptionConfig{Enabled: true, Namespaces: []string{"a"}}, "a", true},
		{AdoptionConfig{Enabled: true, Namespaces: []string{"a"}}, "b", false},
		{AdoptionConfig{Namespaces: []string{"a"}}, "a", false},
	} {
		if got := c.cfg.Allows(c.ns); got != c.want {
			t.Errorf("%+v allows %q = %v", c.cfg, c.ns, got)
		}
	}
}

// The target pools' deregistration delay: 30s unless set; 0s turns it
// off; whole seconds up to an hour.
func TestDeregistrationDelay(t *testing.T) {
	checkDuration(t, "loadBalancer.targetPools.deregistrationDelay", func(c *Config) time.Duration { return c.Render().DeregistrationDelay }, []durationCase{
		{"", DefaultDeregistrationDelay, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 0s}}", 0, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 5m}}", 5 * time.Minute, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 2h}}", 0, true},
		{"loadBalancer: {targetPools: {deregistrationDelay: 1500ms}}", 0, true},
		{"loadBalancer: {targetPools: {deregistrationDelay: soon}}", 0, true},
	})
}

// A terraform process's memory limit: 512Mi unless set (0 here, the
// runner's default); "0" is Go's own collector; too small, negative or
// not a quantity is refused.
func TestProcessMemoryLimit(t *testing.T) {
	set := func(v string) string {
		return strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, processMemoryLimit: "+v, 1)
	}
	for v, want := range map[string]int64{"": 0, `"1Gi"`: 1 << 30, `"0"`: -1, `"256Mi"`: 256 << 20} {
		cfg := cloudconfigtest.Minimal
		if v != "" {
			cfg = set(v)
		}
		c, err := Load([]byte(cfg))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if got, err := c.Terraform.ProcessMemoryLimitBytes(); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{`"lots"`, `"-1Gi"`, `"1Mi"`} {
		refused(t, set(v), "terraform.processMemoryLimit")
	}
}
