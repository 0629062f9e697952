package cloudconfig

import (
	"strings"
	"testing"
	"time"
)

const validConfig = `
clusterID: prod
region: ex-west-1
api: {endpoint: "http://127.0.0.1:8440", tokenFile: /etc/example/token}
metadata: {endpoint: "http://127.0.0.1:8441"}
terraform: {workDir: /var/lib/ccm, cliConfig: /opt/example/terraform.rc, lockFile: /opt/example/lock.hcl}
state: {type: local, local: {dir: /var/lib/ccm-state}}
`

func TestLoadDefaults(t *testing.T) {
	c, err := Load([]byte(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.CacheTTL.Duration != 30*time.Second || c.Terraform.Concurrency != 4 || c.Terraform.ApplyPolicy != "auto" ||
		c.Network.Name != "default" || c.API.TokenEnv != "EXAMPLE_TOKEN" || c.Terraform.LockTimeout.Duration != 30*time.Second {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

// Every error names the field it is about.
func TestLoadErrorsNameTheField(t *testing.T) {
	cases := map[string]string{
		"clusterID":             strings.Replace(validConfig, "clusterID: prod", "", 1),
		"api.endpoint":          strings.Replace(validConfig, `"http://127.0.0.1:8440"`, `"ftp://x"`, 1),
		"terraform.workDir":     strings.Replace(validConfig, "workDir: /var/lib/ccm, ", "", 1),
		"terraform.applyPolicy": validConfig + "\n" + `loadBalancer: {}` + "\n",
		"state.type":            strings.Replace(validConfig, "type: local", "type: consul", 1),
		"cacheTTL":              strings.Replace(validConfig, `metadata: {endpoint: "http://127.0.0.1:8441"}`, `metadata: {endpoint: "http://127.0.0.1:8441", cacheTTL: soon}`, 1),
		"unknown field":         validConfig + "\nregoin: typo\n",
	}
	cases["terraform.applyPolicy"] = strings.Replace(validConfig, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, applyPolicy: yolo", 1)
	for field, cfg := range cases {
		_, err := Load([]byte(cfg))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestReviewDefaults(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	c, err := Load([]byte(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Review.Namespace != "example-ccm" || c.Review.Approvals.Required != 1 || c.LoadBalancer.MaxListeners != 100 ||
		c.LoadBalancer.Adoption.Enabled || c.LoadBalancer.Groups.CrossNamespace || c.rules.Len() != 3 {
		t.Fatalf("defaults: %+v, %d rules", c.Review, c.rules.Len())
	}
	c, err = Load([]byte(validConfig + "loadBalancer: {groups: {crossNamespace: true}}\n"))
	if err != nil || !c.LoadBalancer.Groups.CrossNamespace {
		t.Fatalf("groups.crossNamespace: %v", err)
	}
	t.Setenv("POD_NAMESPACE", "ccm-prod")
	c, err = Load([]byte(validConfig + "review: {policy: {rules: []}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Review.Namespace != "ccm-prod" || c.rules.Len() != 0 {
		t.Fatalf("the pod's namespace and no rules: %+v, %d rules", c.Review, c.rules.Len())
	}
}

// A rule that does not compile stops start-up with an error naming it;
// so do out-of-range review settings.
func TestReviewConfigErrors(t *testing.T) {
	cases := map[string]string{
		`rule "broken"`:                                 validConfig + `review: {policy: {rules: [{name: broken, effect: deny, message: m, when: "plan.nope"}]}}`,
		`rule "effect"`:                                 validConfig + `review: {policy: {rules: [{name: effect, effect: warn, message: m, when: "true"}]}}`,
		"review.approvals.required":                     validConfig + `review: {approvals: {required: -1}}`,
		"loadBalancer.maxListeners":                     validConfig + `loadBalancer: {maxListeners: 101}`,
		"loadBalancer.adoption.namespaces[0]":           validConfig + `loadBalancer: {adoption: {enabled: true, namespaces: [""]}}`,
		"loadBalancer.sharedCertificates[0].id":         validConfig + `loadBalancer: {sharedCertificates: [{id: lb-1, namespaces: [a]}]}`,
		"loadBalancer.sharedCertificates[0].namespaces": validConfig + `loadBalancer: {sharedCertificates: [{id: cert-1}]}`,
	}
	for want, cfg := range cases {
		_, err := Load([]byte(cfg))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
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
	for _, tc := range []struct {
		set  string
		want time.Duration
		err  bool
	}{
		{"", DefaultDeregistrationDelay, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 0s}}", 0, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 5m}}", 5 * time.Minute, false},
		{"loadBalancer: {targetPools: {deregistrationDelay: 2h}}", 0, true},
		{"loadBalancer: {targetPools: {deregistrationDelay: 1500ms}}", 0, true},
		{"loadBalancer: {targetPools: {deregistrationDelay: soon}}", 0, true},
	} {
		c, err := Load([]byte(validConfig + tc.set + "\n"))
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), "loadBalancer.targetPools.deregistrationDelay")):
			t.Errorf("%q: %v, want an error naming the field", tc.set, err)
		case !tc.err && err != nil:
			t.Errorf("%q: %v", tc.set, err)
		case !tc.err && c.Render().DeregistrationDelay != tc.want:
			t.Errorf("%q: renders %s, want %s", tc.set, c.Render().DeregistrationDelay, tc.want)
		}
	}
}
