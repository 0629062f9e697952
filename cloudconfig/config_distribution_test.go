package cloudconfig

import (
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
)

func TestConfigDistribution(t *testing.T) {
	c := mustLoad(t, "")
	if c.Terraform.Distribution != "terraform" {
		t.Fatalf("default distribution %q, want terraform", c.Terraform.Distribution)
	}
	tofu := strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, distribution: tofu, binary: /usr/local/bin/tofu", 1)
	if c, err := Load([]byte(tofu)); err != nil || c.Terraform.Distribution != "tofu" {
		t.Fatalf("tofu: %+v %v", c, err)
	}
	for want, cfg := range map[string]string{
		`terraform.distribution: unknown distribution "pulumi"`: strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, distribution: pulumi", 1),
		// Case matters, as for every other enumerated field.
		`terraform.distribution: unknown distribution "OpenTofu"`:    strings.Replace(cloudconfigtest.Minimal, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, distribution: OpenTofu", 1),
		"terraform.installDir: not supported with distribution tofu": strings.Replace(tofu, "distribution: tofu", "distribution: tofu, installDir: /var/lib/tf", 1),
	} {
		refused(t, cfg, want)
	}
}
