package cloudconfig

import (
	"strings"
	"testing"
)

func TestConfigEngine(t *testing.T) {
	c, err := Load([]byte(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Terraform.Engine != "terraform" {
		t.Fatalf("default engine %q, want terraform", c.Terraform.Engine)
	}
	tofu := strings.Replace(validConfig, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, engine: tofu, binary: /usr/local/bin/tofu", 1)
	if c, err = Load([]byte(tofu)); err != nil || c.Terraform.Engine != "tofu" {
		t.Fatalf("tofu: %+v %v", c, err)
	}
	for want, cfg := range map[string]string{
		`terraform.engine: unknown engine "pulumi"`: strings.Replace(validConfig, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, engine: pulumi", 1),
		// Case matters, as for every other enumerated field.
		`terraform.engine: unknown engine "OpenTofu"`:          strings.Replace(validConfig, "lockFile: /opt/example/lock.hcl", "lockFile: /opt/example/lock.hcl, engine: OpenTofu", 1),
		"terraform.installDir: not supported with engine tofu": strings.Replace(tofu, "engine: tofu", "engine: tofu, installDir: /var/lib/tf", 1),
	} {
		if _, err := Load([]byte(cfg)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}
