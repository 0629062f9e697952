package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/termsafe"
)

// fieldManager names examplectl's dry-run applies.
const fieldManager = "examplectl-preview"

type previewOptions struct {
	kube kubeOptions
	file string
	// hcl renders the Terraform before and after (needs config).
	hcl    bool
	config string
	// targetPool, nodes: as for render.
	targetPool, nodes string
}

func newPreviewCmd() *cobra.Command {
	var o previewOptions
	cmd := &cobra.Command{
		Use:   "preview -f service.yaml [--hcl --config cloud-config.yaml]",
		Short: "Show what applying a Service manifest would do to the cloud, without doing it",
		Long: `preview sends the manifest to the API server as a server-side dry run of
an apply (nothing is stored) and prints what the controller's admission
webhook says the edit would do to the cloud: the resources a speculative
terraform plan adds, changes, replaces or destroys, the listeners added,
removed or changed, and the policy rule that would hold the change for
approval. With --hcl it also prints the diff of the rendered Terraform
(main.tf), rendered here from --config (as render does).

Exit status, as terraform plan -detailed-exitcode: 0 no cloud change,
2 a change, 3 a change that waits for approval, 1 an error (the
controller would refuse the Service, or no preview came back: is the
webhook installed and the controller running?).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPreview(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	o.kube.addFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "Service manifest (YAML or JSON); - reads stdin")
	f.BoolVar(&o.hcl, "hcl", false, "also print the diff of the rendered main.tf (needs --config)")
	f.StringVar(&o.config, "config", "", "with --hcl: the controller's cloud config")
	f.StringVar(&o.targetPool, "target-pool", "", "with --hcl: as render's --target-pool")
	f.StringVar(&o.nodes, "nodes", "", "with --hcl: as render's --nodes")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// exitStatus ends examplectl with a status and no error message.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func runPreview(ctx context.Context, o previewOptions, stdout io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.hcl && o.config == "" {
		return errors.New("--hcl needs --config: the controller's cloud config to render with")
	}
	svc, err := readService(o.file)
	if err != nil {
		return err
	}
	w := &preview.Collector{}
	o.kube.warnings = w
	c, err := o.kube.connect()
	if err != nil {
		return err
	}
	if svc.Namespace == "" {
		svc.Namespace = c.defaultNamespace
	}
	if svc.Name == "" {
		return fmt.Errorf("%s: the Service has no metadata.name", o.file)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	old, err := c.client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		old, err = nil, nil
	}
	if err != nil {
		return c.explain(err, "read the Service")
	}
	after, err := dryRunApply(ctx, c, svc)
	if err != nil {
		return c.explain(err, "dry-run apply")
	}
	warnings := w.Take()
	for _, line := range warnings {
		if strings.HasPrefix(line, preview.OutcomeLine) {
			continue
		}
		fmt.Fprintln(stdout, termsafe.Text(strings.TrimPrefix(line, preview.Prefix)))
	}
	if o.hcl {
		if err := printHCLDiff(o, old, after, stdout); err != nil {
			return err
		}
	}
	outcome, ok := preview.ParseOutcome(warnings)
	if !ok {
		return errors.New("no preview came back: is the controller's admission webhook installed (deploy/README.md) and the controller running?")
	}
	if outcome == preview.NoChange {
		return nil
	}
	return exitStatus(outcome)
}

// dryRunApply applies svc server-side without storing it (as kubectl
// apply --server-side --dry-run=server) and returns what would be
// stored.
func dryRunApply(ctx context.Context, c *cluster, svc *corev1.Service) (*corev1.Service, error) {
	svc = svc.DeepCopy()
	svc.APIVersion, svc.Kind = "v1", "Service"
	svc.ResourceVersion, svc.UID = "", ""
	data, err := json.Marshal(svc)
	if err != nil {
		return nil, err
	}
	return c.client.CoreV1().Services(svc.Namespace).Patch(ctx, svc.Name, types.ApplyPatchType, data,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager, Force: ptrTrue()})
}

func ptrTrue() *bool { t := true; return &t }

// printHCLDiff prints the unified diff of main.tf rendered for the stored
// Service and for what the apply would store.
func printHCLDiff(o previewOptions, old, after *corev1.Service, stdout io.Writer) error {
	ro := renderOptions{config: o.config, targetPool: o.targetPool}
	nodes, err := func() ([]*corev1.Node, error) {
		if o.nodes == "" {
			return nil, nil
		}
		return readNodes(o.nodes)
	}()
	if err != nil {
		return err
	}
	render := func(svc *corev1.Service) (string, error) {
		if svc == nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
			return "", nil
		}
		m, err := renderService(ro, svc, nodes, nil, io.Discard)
		if err != nil {
			return "", err
		}
		return string(m.Files["main.tf"]), nil
	}
	before, err := render(old)
	if err != nil {
		return fmt.Errorf("render the stored Service: %w", err)
	}
	now, err := render(after)
	if err != nil {
		return fmt.Errorf("render the applied Service: %w", err)
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(before), B: difflib.SplitLines(now), FromFile: "main.tf (now)", ToFile: "main.tf (after)", Context: 3,
	})
	if err != nil {
		return err
	}
	if diff == "" {
		diff = "main.tf: no change\n"
	}
	_, err = io.WriteString(stdout, termsafe.Text(diff))
	return err
}
