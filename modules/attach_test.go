package modules_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/tfprovider"
)

// attachedProvider serves the Example provider inside the test process,
// as the controller does by default (runner.ProviderAttached), and returns
// the TF_REATTACH_PROVIDERS value that attaches terraform to it: terraform
// test otherwise starts the provider binary for every run block, about
// 0.3 CPU-s each. The provider from the mirror is still installed and
// started by the other tests (TestValidate, TestTargetPoolsModule, ...).
func attachedProvider(t *testing.T) string {
	t.Helper()
	srv, err := tfprovider.ServeInProcess(tfprovider.InProcessOptions{Name: "modules"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	reattach, err := json.Marshal(tfexec.ReattachInfo{tfprovider.Address: {
		Protocol: "grpc", ProtocolVersion: 6, Pid: srv.Pid(), Test: true,
		Addr: tfexec.ReattachConfigAddr{Network: srv.Addr().Network(), String: srv.Addr().String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(reattach)
}

// terraformAttached runs terraform args in dir attached to reattach (no
// provider installed or started), and returns its standard output.
// terraform-exec cannot attach terraform test.
func terraformAttached(t *testing.T, tc tftest.Toolchain, dir, reattach string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(tc.Terraform, args...)
	cmd.Dir = dir
	env := tc.Env(map[string]string{"TF_REATTACH_PROVIDERS": reattach, "TF_IN_AUTOMATION": "1"})
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("terraform %s in %s: %w\n%s", args[0], dir, err, stderr.String())
	}
	return stdout.String(), nil
}
