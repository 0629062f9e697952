// Package engine is the operations layer between the cloud provider and
// Terraform: it turns a Service (or the cluster's route set) into a
// rendered root module, finds its state backend, and runs it with the
// runner. The CCM's LoadBalancer and Routes implementations are thin
// adapters over it; examplectl uses the same rendering.
package engine

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// Engine plans and applies objects. It is safe for concurrent use: the
// runner serialises work per object.
type Engine struct {
	render  renderer.Config
	states  *state.Backends
	runner  *runner.Runner
	memo    memo
	pending pendingPlans
	known   knownObjects
	// planText renders every applied plan for people (plan records).
	planText bool
}

// RecordPlanText makes every plan carry its human-readable text
// (runner.Plan.Text), for plan records; it costs a terraform show per
// change, run in parallel with the apply.
func (e *Engine) RecordPlanText(on bool) { e.planText = on }

// New returns an Engine. render is the base rendering config (cluster,
// region, endpoint, modules, network); its Backend is filled per object
// from states.
func New(render renderer.Config, states *state.Backends, r *runner.Runner) *Engine {
	if render.ModulesDigest == "" {
		render.ModulesDigest = modules.Digest()
	}
	return &Engine{render: render, states: states, runner: r}
}

// UseKubernetes gives the state backends a Kubernetes client (to delete
// the kubernetes backend's Secrets and Leases).
func (e *Engine) UseKubernetes(client kubernetes.Interface) { e.states.SetKubernetesClient(client) }

// Runner is the engine's terraform runner.
func (e *Engine) Runner() *runner.Runner { return e.runner }

// target is one object's rendering config and state location.
func (e *Engine) target(kind, namespace, name string) (*state.Target, renderer.Config, error) {
	tg, err := e.states.Target(state.Object{Cluster: e.render.ClusterID, Kind: kind, Namespace: namespace, Name: name})
	if err != nil {
		return nil, renderer.Config{}, err
	}
	cfg := e.render
	cfg.Backend = BackendBlock(tg.Block)
	return tg, cfg, nil
}

// job wraps a rendered module for the runner.
func job(tg *state.Target, m *renderer.Module) runner.Job {
	return runner.Job{
		Key:         tg.Key,
		Files:       m.Files,
		Hash:        m.Hash,
		Env:         tg.Env,
		Workspace:   tg.Workspace,
		DeleteState: tg.Delete,
		Prepare:     writeModules,
	}
}

// writeModules materialises the shipped modules where the default module
// sources (./modules/...) point; unchanged files are not rewritten.
func writeModules(dir string) error {
	if _, err := modules.WriteTo(filepath.Join(dir, "modules")); err != nil {
		return fmt.Errorf("write shipped modules: %w", err)
	}
	return nil
}

// BackendBlock converts a state backend block for the renderer.
func BackendBlock(b state.Block) renderer.Backend {
	out := renderer.Backend{Type: b.Type}
	for _, a := range b.Attrs {
		out.Attrs = append(out.Attrs, renderer.Attr{Name: a.Name, Value: a.Value})
	}
	return out
}
