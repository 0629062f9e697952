package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/spf13/cobra"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/termsafe"
)

// The provider's environment, which export's own cloud reads share.
const (
	envToken    = "EXAMPLE_TOKEN"
	envEndpoint = "EXAMPLE_ENDPOINT"
)

func newExportCmd() *cobra.Command {
	var terraform string
	cmd := objectCmd(&cobra.Command{
		Use:   "export NAMESPACE/NAME DIR [--terraform PATH]",
		Short: "Write a Service's load balancer as a root module of a team's own, with its state: the hand-over out of the controller",
		Long: `export writes into DIR (new or empty) a standalone Terraform root module for
the load balancer of a Service and the certificates of its TLS Secrets: the
root module the controller last applied (examplectl plan), without its
backend block, the shipped modules in DIR/modules, and import blocks for
their cloud ids (imports.tf). It then runs terraform init, a plan that must
only take the objects over (nothing created, replaced or destroyed, no
argument the cloud keeps changed), its apply, which writes DIR's local state
and changes nothing in the cloud, and a last plan, which must show no
changes. terraform plan -detailed-exitcode in DIR then exits 0.

It reads the plan record in the controller's namespace and the cloud (the
provider's EXAMPLE_TOKEN, and EXAMPLE_PRIVATE_KEYS, {"secret": "PEM key"}, for a
Service with TLS Secrets), and refuses a load balancer whose tags do not name
the Service, and a rendering not yet applied. A reserved address of the
Service's namespace that the load balancer holds is exported with it, as
its own workspace applied it; one of another namespace, held through that
namespace's ReferenceGrant, is left out (said in the output): it stays its
owner's, and leaves the load balancer once the Service lets go of it.
The controller still manages the load balancer afterwards: hand it over with
the annotation loadbalancer.example.com/deletion-policy: retain, then delete
the Service or change its type (docs/addresses.md).`,
		Args: cobra.ExactArgs(2),
	}, func(cmd *cobra.Command, c *cluster, ref objectref.Ref, args []string) error {
		return runExport(cmd.Context(), c, ref, args[0], terraform, cmd.OutOrStdout(), cmd.ErrOrStderr())
	})
	cmd.Flags().StringVar(&terraform, "terraform", "", "the terraform (or tofu) binary to run in DIR (default: terraform on PATH)")
	return cmd
}

func runExport(ctx context.Context, c *cluster, ref objectref.Ref, dir, terraform string, stdout, stderr io.Writer) error {
	if ref.Kind != objectref.KindService {
		return fmt.Errorf("export takes a Service (namespace/name), not %s", ref.Describe())
	}
	if err := emptyDir(dir); err != nil {
		return err
	}
	t, err := c.resolve(ctx, ref, true)
	if err != nil {
		return err
	}
	rec := t.record
	if rec.Applied == nil || rec.Applied.HCLHash == "" {
		return fmt.Errorf("the controller has applied nothing for %s yet", ref.Describe())
	}
	if filesHash(rec.Files) != rec.Applied.HCLHash {
		return fmt.Errorf("%s's latest rendering is not applied yet (%s): export once the controller has applied it (examplectl status %s)",
			ref.Describe(), termsafe.Line(planLine(latestPlan(rec))), ref.Arg())
	}
	var lbID string
	if err := json.Unmarshal(rec.Applied.Outputs["id"], &lbID); err != nil || lbID == "" {
		return fmt.Errorf("%s's last apply recorded no load balancer id", ref.Describe())
	}
	ex, err := exportRoot([]byte(rec.Files[renderer.MainFile]), []string{
		fmt.Sprintf("Exported by examplectl from %s (uid %s) on %s: the root module the controller applied.", ref.Describe(), t.service.UID, time.Now().UTC().Format(time.RFC3339)),
		"Yours now: the state is in this directory (terraform.tfstate) until you give it a backend.",
	})
	if err != nil {
		return fmt.Errorf("export %s: %w", ref.Describe(), err)
	}
	targets, err := exportTargets(ctx, ex, lbID, ref.Namespace)
	if err != nil {
		return fmt.Errorf("export %s: %w", ref.Describe(), err)
	}
	if len(ex.certificates) > 0 && os.Getenv(renderer.TLSKeysEnv) == "" {
		return fmt.Errorf("export %s: its certificates need their private keys at every plan: set %s to {\"<TLS Secret>\": \"<PEM key>\"} for %s",
			ref.Describe(), renderer.TLSKeysEnv, termsafe.Line(fmt.Sprint(slices.Sorted(maps.Keys(ex.certificates)))))
	}
	if ex.address != nil {
		if ex.main, err = withAddress(ctx, c, ex); err != nil {
			return fmt.Errorf("export %s: %w", ref.Describe(), err)
		}
	}
	imports, err := importsFile(targets)
	if err != nil {
		return err
	}
	if err := writeExport(dir, ex.main, imports); err != nil {
		return err
	}
	if err := takeOver(ctx, dir, terraform, targets, stderr); err != nil {
		return fmt.Errorf("export %s into %s: %w", ref.Describe(), dir, err)
	}
	fmt.Fprintf(stdout, "Exported %s's load balancer %s", ref.Describe(), lbID)
	if ex.address != nil {
		fmt.Fprintf(stdout, ", its reserved address %s (%s)", ex.address.ID, ex.address.IP)
	}
	if n := len(ex.certificates); n > 0 {
		fmt.Fprintf(stdout, " and %d certificate(s)", n)
	}
	fmt.Fprintf(stdout, " to %s: terraform plan there shows no changes.\n", dir)
	for _, a := range ex.leftOut {
		fmt.Fprintf(stdout, "Left out: the reserved address %s (%s) on it is another namespace's, held through that namespace's ReferenceGrant.\n"+
			"It stays its owner's: once the Service lets go of it, the controller takes it off this load balancer, whose IP then changes.\n", a.ID, a.IP)
	}
	fmt.Fprintf(stdout, "The controller still manages it. To hand it over, annotate the Service %s=%s, then delete it or change its type;\n"+
		"the plan that forgets it waits for a reviewer (examplectl status %s).\n", annotations.LBDeletionPolicy, annotations.DeletionRetain, ref.Arg())
	return nil
}

// exportTargets finds in the cloud what the applied root module of a
// Service of namespace ns made: the load balancer lbID, which must carry
// the module's tags (the owner proof), the reserved address of ns it
// holds, and the certificates its listeners serve, by the fingerprints of
// the module's PEMs.
func exportTargets(ctx context.Context, ex *exported, lbID, ns string) ([]importTarget, error) {
	endpoint := ex.endpoint
	if endpoint == "" {
		endpoint = os.Getenv(envEndpoint)
	}
	token := os.Getenv(envToken)
	if token == "" {
		return nil, fmt.Errorf("set %s to a token of the Example cloud: export reads the load balancer, as terraform will", envToken)
	}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: endpoint, Token: token})
	if err != nil {
		return nil, err
	}
	lb, err := api.GetLoadBalancer(ctx, lbID)
	if err != nil {
		return nil, fmt.Errorf("read load balancer %s: %w", lbID, err)
	}
	for k, v := range ex.tags {
		if lb.Tags[k] != v {
			return nil, fmt.Errorf("load balancer %s does not carry the tag %s=%s the controller applied: not taken over", lbID, k, v)
		}
	}
	addrs, err := api.ListAddresses(ctx, exampleapi.AddressFilter{Region: lb.Region})
	if err != nil {
		return nil, fmt.Errorf("list reserved addresses: %w", err)
	}
	targets := []importTarget{{to: renderer.LoadBalancerAddress, id: lbID}}
	for _, a := range addrs {
		if a.LoadBalancerID == lbID && othersAddress(a, ex.tags[exampleapi.TagClusterID], ns) {
			ex.leftOut = append(ex.leftOut, a)
			continue
		}
		if a.LoadBalancerID == lbID {
			if ex.address != nil {
				return nil, fmt.Errorf("load balancer %s holds two reserved addresses (%s, %s)", lbID, ex.address.ID, a.ID)
			}
			ex.address = &a
			targets = append(targets, importTarget{to: renderer.AddressResource, id: a.ID})
		}
	}
	served := map[string]string{} // fingerprint -> id
	for _, l := range lb.Listeners {
		for _, id := range l.CertificateIDs {
			cert, err := api.GetCertificate(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("read certificate %s: %w", id, err)
			}
			served[cert.Fingerprint] = id
		}
	}
	for _, key := range slices.Sorted(maps.Keys(ex.certificates)) {
		info, err := exampleapi.InspectCertificate(ex.certificates[key])
		if err != nil {
			return nil, fmt.Errorf("certificate of TLS Secret %s: %w", key, err)
		}
		id, ok := served[info.Fingerprint]
		if !ok {
			return nil, fmt.Errorf("load balancer %s serves no certificate of TLS Secret %s as applied", lbID, key)
		}
		targets = append(targets, importTarget{to: renderer.CertificateAddress(key), id: id})
	}
	return targets, nil
}

// othersAddress tells whether reserved address a is this cluster's
// (clusterID) address of a namespace other than ns, the exported
// Service's: held through that namespace's ReferenceGrant, it is not the
// Service's to hand over (ccm/handover.go goesWith), so export leaves it
// out. The exported plan stays empty without it: the load balancer's
// module names no address (the address's own workspace attaches it), and
// its IP is only read.
func othersAddress(a exampleapi.Address, clusterID, ns string) bool {
	owner := a.Tags[exampleapi.TagNamespace]
	return clusterID != "" && a.Tags[exampleapi.TagClusterID] == clusterID && owner != "" && owner != ns
}

// withAddress adds to the exported root module the reserved address the
// load balancer holds, as its own workspace applied it (its record): the
// controller's address, of the namespace its tags name.
func withAddress(ctx context.Context, c *cluster, ex *exported) ([]byte, error) {
	a := ex.address
	ns := a.Tags[exampleapi.TagNamespace]
	if ns == "" || a.Tags[exampleapi.TagClusterID] != ex.tags[exampleapi.TagClusterID] {
		return nil, fmt.Errorf("reserved address %s (%s) on the load balancer is not the controller's", a.ID, a.IP)
	}
	ref := objectref.Address(ns, a.Name)
	t, err := c.resolve(ctx, ref, false)
	if err != nil {
		return nil, fmt.Errorf("reserved address %s (%s) on the load balancer: %w", a.ID, a.IP, err)
	}
	rec := t.record
	if rec.Applied == nil || filesHash(rec.Files) != rec.Applied.HCLHash {
		return nil, fmt.Errorf("%s (%s)'s latest rendering is not applied yet: export once the controller has applied it (examplectl status %s)",
			ref.Describe(), a.IP, ref.Arg())
	}
	return withModuleOf(ex.main, []byte(rec.Files[renderer.MainFile]), renderer.AddressModuleName,
		fmt.Sprintf("Reserved address %s (%s), as its own workspace (%s) applied it.", a.ID, a.IP, ref.Describe()))
}

// emptyDir checks that dir is new or empty: export overwrites nothing.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty: export writes a new root module and overwrites nothing", dir)
	}
	return nil
}

func writeExport(dir string, main, imports []byte) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, renderer.MainFile), main, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "imports.tf"), imports, 0o600); err != nil {
		return err
	}
	_, err := modules.WriteTo(filepath.Join(dir, "modules"))
	return err
}

// takeOver runs terraform in dir: init, the plan of the imports (checked:
// it only takes the objects over), its apply, and a last plan that must
// be empty. Progress goes to progress.
func takeOver(ctx context.Context, dir, terraform string, targets []importTarget, progress io.Writer) error {
	if terraform == "" {
		var err error
		if terraform, err = exec.LookPath("terraform"); err != nil {
			return fmt.Errorf("no terraform on PATH (or give --terraform): %w", err)
		}
	}
	tf, err := tfexec.NewTerraform(dir, terraform)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "terraform init in %s\n", dir)
	if err := tf.Init(ctx); err != nil {
		return fmt.Errorf("terraform init: %w", err)
	}
	const planFile = "import.tfplan"
	defer os.Remove(filepath.Join(dir, planFile))
	fmt.Fprintf(progress, "terraform plan: importing %d object(s)\n", len(targets))
	if _, err := tf.Plan(ctx, tfexec.Out(planFile)); err != nil {
		return fmt.Errorf("terraform plan: %w", err)
	}
	p, err := tf.ShowPlanFile(ctx, planFile)
	if err != nil {
		return fmt.Errorf("terraform show: %w", err)
	}
	if err := checkImportPlan(p, targets); err != nil {
		return err
	}
	fmt.Fprintf(progress, "terraform apply: the imports only\n")
	if err := tf.Apply(ctx, tfexec.DirOrPlan(planFile)); err != nil {
		return fmt.Errorf("terraform apply: %w", err)
	}
	changes, err := tf.Plan(ctx)
	if err != nil {
		return fmt.Errorf("terraform plan after the imports: %w", err)
	}
	if changes {
		return errors.New("terraform plan after the imports still shows changes")
	}
	return nil
}
