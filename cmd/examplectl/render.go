package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/providerid"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/state"
	"github.com/example/cloud-provider-example/tenancy"
	"github.com/example/cloud-provider-example/termsafe"
)

type renderOptions struct {
	service, nodes, config, out, targetPool string
	withModules                             bool
	// tlsCertificates are NAME=FILE: the certificate of TLS Secret NAME
	// (the Secret's tls.crt). Never a key: render needs none.
	tlsCertificates []string
	// podPools are PORT/PROTOCOL=ID: the pod pools of a Service of target
	// type ip.
	podPools []string
}

func newRenderCmd() *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use:   "render --service svc.yaml [--nodes nodes.yaml] [--config cloud-config.yaml [--target-pool ID]] [--out DIR]",
		Short: "Print the Terraform root module the controller renders for a Service",
		Long: `render prints, offline, exactly the root module (main.tf) the controller
would plan and apply for a Service of type LoadBalancer, given the cluster's
nodes and the controller's cloud config (the same file the controller reads,
backend block included; no credential it points at is read). With target
pools enabled (the default), the controller forwards to the pool of the
Service's node selection: pass its id with --target-pool (target_pool_id in
the Service's current main.tf, examplectl plan NS/NAME) for the exact module.
Without --config: cluster "kubernetes", the nodes' region, no backend block.
A Service of target type ip forwards each port to its pod pool: pass each
pool's id with --pod-pool PORT/PROTOCOL=ID (placeholders without).
Warnings (skipped nodes, adjusted CIDRs) go to stderr. With --out, main.tf is
written to DIR instead; --with-modules also writes the shipped modules to
DIR/modules, so that DIR is ready for terraform init and plan. A Service
whose tls-secrets annotation names TLS Secrets needs each Secret's
certificate (its tls.crt, public) with --tls-certificate NAME=FILE; the
private keys are never rendered, so render reads none.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRender(o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.service, "service", "", "Service manifest (YAML or JSON); - reads stdin")
	f.StringVar(&o.nodes, "nodes", "", "nodes: a NodeList, a YAML list of Nodes, or Nodes separated by ---")
	f.StringVar(&o.config, "config", "", "the controller's cloud config (YAML, docs/cloud-config.md)")
	f.StringVar(&o.targetPool, "target-pool", "", "with --config: the target pool the Service forwards to (target pools enabled)")
	f.StringVar(&o.out, "out", "", "write main.tf into this directory instead of printing it")
	f.BoolVar(&o.withModules, "with-modules", false, "with --out: also write the shipped modules to DIR/modules")
	f.StringArrayVar(&o.tlsCertificates, "tls-certificate", nil, "NAME=FILE: the certificate (tls.crt) of TLS Secret NAME the Service names; repeat per Secret")
	f.StringArrayVar(&o.podPools, "pod-pool", nil, "PORT/PROTOCOL=ID: the pod pool a Service of target type ip forwards that port to (placeholders without); repeat per port")
	_ = cmd.MarkFlagRequired("service")
	return cmd
}

func runRender(o renderOptions, stdout, stderr io.Writer) error {
	svc, err := readService(o.service)
	if err != nil {
		return err
	}
	var nodes []*corev1.Node
	if o.nodes != "" {
		if nodes, err = readNodes(o.nodes); err != nil {
			return err
		}
	}
	tls, err := readTLSCertificates(o.tlsCertificates)
	if err != nil {
		return err
	}
	m, err := renderService(o, svc, nodes, tls, stderr)
	if err != nil {
		return err
	}
	for _, w := range m.Warnings {
		fmt.Fprintln(stderr, "warning:", termsafe.Text(w))
	}
	if o.out == "" {
		if o.withModules {
			return errors.New("--with-modules needs --out")
		}
		_, err := stdout.Write(m.Files[renderer.MainFile])
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil { //nolint:gosec // main.tf and modules are for people and terraform to read
		return err
	}
	for name, data := range m.Files {
		if err := os.WriteFile(filepath.Join(o.out, name), data, 0o644); err != nil { //nolint:gosec // main.tf and modules are for people and terraform to read
			return err
		}
	}
	if o.withModules {
		if _, err := modules.WriteTo(filepath.Join(o.out, "modules")); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "wrote %s (sha256 %s)\n", filepath.Join(o.out, renderer.MainFile), m.Hash)
	return nil
}

func readFile(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

func readService(path string) (*corev1.Service, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read service: %w", err)
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict(data, &svc); err != nil {
		return nil, fmt.Errorf("read service %s: %w", path, err)
	}
	if svc.Kind != "" && svc.Kind != "Service" {
		return nil, fmt.Errorf("read service %s: kind is %s, not Service", path, svc.Kind)
	}
	return &svc, nil
}

// readNodes accepts a NodeList (or v1 List), a YAML sequence of Nodes, or a
// stream of Node documents: whatever `kubectl get nodes -o yaml` or a
// hand-written file gives.
func readNodes(path string) ([]*corev1.Node, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	var out []*corev1.Node
	for i, doc := range splitDocuments(data) {
		nodes, err := parseNodes(doc)
		if err != nil {
			return nil, fmt.Errorf("read nodes %s (document %d): %w", path, i+1, err)
		}
		out = append(out, nodes...)
	}
	return out, nil
}

func parseNodes(doc []byte) ([]*corev1.Node, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	js = bytes.TrimSpace(js)
	var nodes []*corev1.Node
	switch {
	case bytes.HasPrefix(js, []byte("[")):
		err = yaml.UnmarshalStrict(doc, &nodes)
	default:
		var probe struct {
			Kind string `json:"kind"`
		}
		_ = yaml.Unmarshal(doc, &probe)
		switch probe.Kind {
		case "NodeList", "List":
			var list corev1.NodeList
			err = yaml.UnmarshalStrict(doc, &list)
			for i := range list.Items {
				nodes = append(nodes, &list.Items[i])
			}
		case "Node", "":
			var n corev1.Node
			err = yaml.UnmarshalStrict(doc, &n)
			nodes = append(nodes, &n)
		default:
			return nil, fmt.Errorf("kind is %s, want Node, NodeList or a list of Nodes", probe.Kind)
		}
	}
	return nodes, err
}

// splitDocuments splits a YAML stream at --- lines, dropping empty
// documents.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	flush := func() {
		if len(bytes.TrimSpace(cur)) > 0 && !onlyComments(cur) {
			docs = append(docs, cur)
		}
		cur = nil
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if bytes.Equal(bytes.TrimRight(line, " \t\r\n"), []byte("---")) {
			flush()
			continue
		}
		cur = append(cur, line...)
	}
	flush()
	return docs
}

func onlyComments(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// renderService renders as the controller does: with --config through the
// engine, from the cloud config; without, from a minimal config.
func renderService(o renderOptions, svc *corev1.Service, nodes []*corev1.Node, tls *engine.TLS, stderr io.Writer) (*renderer.Module, error) {
	in := annotations.Read(svc)
	if o.config == "" {
		if o.targetPool != "" {
			return nil, errors.New("--target-pool needs --config")
		}
		// Enough to review a Service offline: the cluster name Kubernetes
		// uses by default and the region the nodes are in.
		region := nodesRegion(nodes)
		if region == "" {
			return nil, errors.New("no --config, and no node with an Example providerID to take the region from: pass --config")
		}
		// As the controller does: an upgrade of the shipped modules shows.
		cfg := renderer.Config{ClusterID: "kubernetes", Region: region, ModulesDigest: modules.Digest()}
		if tls != nil {
			cfg.Certificates = tls.Certificates
		}
		if in.LB.Pods() {
			pods, err := podPoolIDs(in, o.podPools, stderr)
			if err != nil {
				return nil, err
			}
			return renderer.LoadBalancerOnPods(in, pods, cfg)
		}
		return renderer.LoadBalancer(in, nodes, cfg)
	}
	data, err := readFile(o.config)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := cloudconfig.Load(data)
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", o.config, err)
	}
	states, err := state.New(cfg.State, state.Options{Offline: true})
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", o.config, err)
	}
	if err := checkReferences(cfg, in, stderr); err != nil {
		return nil, err
	}
	e := engine.New(cfg.Render(), states, nil, engine.Options{})
	if in.LB.Pods() {
		pods, err := podPoolIDs(in, o.podPools, stderr)
		if err != nil {
			return nil, err
		}
		m, _, err := e.RenderLoadBalancerOnPods(in, pods, tls)
		return m, err
	}
	pools := !cfg.LoadBalancer.TargetPools.Disabled
	switch {
	case o.targetPool != "" && !pools:
		return nil, fmt.Errorf("--target-pool: target pools are disabled in %s (loadBalancer.targetPools.disabled)", o.config)
	case o.targetPool != "":
		m, _, err := e.RenderLoadBalancerOnPool(in, o.targetPool, tls)
		return m, err
	case pools:
		fmt.Fprintln(stderr, "warning: target pools are enabled in the config: the controller forwards to the pool of this Service's node selection, not to the nodes listed here; pass --target-pool ID (target_pool_id in the current main.tf: examplectl plan NS/NAME) for the exact module")
	}
	m, _, err := e.RenderLoadBalancer(in, nodes, tls)
	return m, err
}

// readTLSCertificates reads --tls-certificate NAME=FILE flags; an empty
// TLS (not nil) without any, so a Service naming Secrets fails to render
// saying which certificate is missing.
func readTLSCertificates(flags []string) (*engine.TLS, error) {
	tls := &engine.TLS{Certificates: map[string]string{}}
	for _, f := range flags {
		name, path, ok := strings.Cut(f, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("--tls-certificate %q: want NAME=FILE (the Secret's name and its tls.crt)", f)
		}
		data, err := readFile(path)
		if err != nil {
			return nil, fmt.Errorf("--tls-certificate %s: %w", name, err)
		}
		if bytes.Contains(data, []byte("PRIVATE KEY")) {
			return nil, fmt.Errorf("--tls-certificate %s: %s holds a private key: give the certificate (tls.crt) only", name, path)
		}
		// As the controller checks the Secret's tls.crt: what it refuses
		// (text outside the PEM blocks above all) renders nothing.
		if _, err := exampleapi.InspectCertificate(string(data)); err != nil {
			return nil, fmt.Errorf("--tls-certificate %s: %s: the controller refuses it (tls.crt: %w)", name, path, err)
		}
		tls.Certificates[name] = string(data)
	}
	return tls, nil
}

// nodesRegion is the region most nodes are in (ties: the first by name).
func nodesRegion(nodes []*corev1.Node) string {
	count := map[string]int{}
	for _, n := range nodes {
		if id, err := providerid.Parse(n.Spec.ProviderID); err == nil {
			count[id.Region]++
		}
	}
	regions := slices.Sorted(maps.Keys(count))
	best := ""
	for _, r := range regions {
		if best == "" || count[r] > count[best] {
			best = r
		}
	}
	return best
}

// checkReferences takes the controller's decisions on what svc references
// outside itself (docs/tenancy.md) where the cloud config decides them
// (adoption, TLS Secrets, shared certificates, a load balancer name of the
// controller's default form), and says what it cannot check offline (whose
// a certificate, a load balancer to adopt or a name is in the cloud, a
// ReferenceGrant in the cluster).
func checkReferences(cfg *cloudconfig.Config, in *annotations.Service, stderr io.Writer) error {
	if in.Err != nil {
		return nil // rendering reports bad annotations, with the field
	}
	svc, lb := in.Service, in.LB
	a := &tenancy.Authorizer{ClusterID: cfg.ClusterID, Shared: cfg.LoadBalancer.SharedCertificates, AdoptionAllowed: cfg.LoadBalancer.Adoption.Allows}
	from := objectref.Service(svc)
	for _, ref := range tenancy.References(svc, &lb) {
		offline := ref.Kind == tenancy.Certificate || ref.Kind == tenancy.Group && ref.Namespace != svc.Namespace ||
			ref.Kind == tenancy.Adoption && cfg.LoadBalancer.Adoption.Allows(svc.Namespace)
		err := a.Authorize(context.Background(), from, []tenancy.Reference{ref})
		switch {
		case err != nil && offline:
			fmt.Fprintf(stderr, "warning: %s: the controller decides this from %s, which render does not read\n",
				termsafe.Line(err.Error()), map[tenancy.Kind]string{
					tenancy.Certificate: "the certificate's tags in the cloud", tenancy.Group: "the ReferenceGrants in the cluster",
					tenancy.Adoption: "the load balancer's owner tags in the cloud",
				}[ref.Kind])
		case err != nil:
			return fmt.Errorf("the controller would refuse this Service: %w", err)
		case ref.Kind == tenancy.LoadBalancerName:
			// Its form decided above; whose it is in the cloud is not.
			fmt.Fprintf(stderr, "warning: annotation %s: the controller also refuses %s %q if a load balancer of another namespace or cluster has it in the region, which render does not read\n",
				ref.Annotation, ref.Kind, termsafe.Line(ref.Name))
		}
	}
	return nil
}
