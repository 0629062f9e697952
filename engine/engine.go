// Package engine is the operations layer between the cloud provider and
// Terraform: it turns an object (a Service's load balancer, a load
// balancer group, the cluster's route set or its target pools) into a
// rendered root module, finds its state location, and runs it with the
// runner under the engine.Review its caller gives: the apply policy, the
// policy rules (evaluated here, on every plan with changes) and the
// approvals (asked of the Review). It returns what it decided as an Outcome and keeps,
// per object, the plan waiting for a decision; what people read of it
// (events, plan records, the audit log) and the approvals themselves are
// package review's, which also keeps what a restarted controller needs
// (PlanStore). The CCM's LoadBalancer and Routes implementations (package
// ccm) call it; examplectl uses the same rendering (RenderLoadBalancer,
// RenderLoadBalancerOnPool). A Service comes read (*annotations.Service:
// its annotations parsed once by the caller), so nothing here parses them.
//
// Files: reconcile.go converges one object (fast path, plan, decision,
// apply of an approved plan), one reconcile of it at a time (turns.go); load.go is what a reconcile first reads
// (its state's migration, the plan store, a plan kept by an earlier
// process); waiting.go keeps a plan made again with the id of the one
// waiting the time it was first made (approvals made for it count);
// review.go is the contract with the caller (Review, Approval,
// Outcome, the errors) and the policy rules' view of a plan;
// objects.go the engine's memory of each object (and converge, which keeps
// it around a reconcile). Each kind of object has
// its file (loadbalancer.go, groups.go, gateways.go, routes.go, addresses.go,
// targetpools.go, podpools.go, rulesets.go: a route's rules on a
// Gateway's load balancer), as do
// the hand-over of a Service's load balancer (retain.go), drift checks (drift.go), state migration (migrate.go), load balancers
// an interrupted apply left (orphans.go), certificates it left
// (certificates.go) and TLS Secrets (tls.go). preview.go plans without
// applying, for the admission webhook; sizes.go counts what the engine
// keeps in memory. open.go builds the engine a controller runs from its
// cloud config (its state backends and runner), and vocabulary.go names
// what callers see of rendering and running: package ccm and package
// review import the engine, never the renderer or the runner.
package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
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
	objects objects
	// turns: one reconcile of an object at a time.
	turns turns
	// pools are the node selections that have a target pool.
	pools selections
	// rules flag plans for approval or deny them (nil: none).
	rules *policy.Rules
	// plans keeps last applies and waiting plans across restarts (nil:
	// none).
	plans PlanStore
	// planText renders every plan with changes for people (plan records).
	planText   bool
	migrated   func(ctx context.Context, legacyWorkspace, workspace string)
	findOrphan func(ctx context.Context, name string, owner map[string]string) (string, error)
	// findCertificates: Options.FindCertificates.
	findCertificates func(ctx context.Context, owner map[string]string) ([]UnusedCertificate, error)
	tls              TLSSource
	// owns: Options.Owns.
	owns func(objectref.Ref) bool
	// poolUsers: Options.PoolUsers.
	poolUsers func(ctx context.Context, pools map[string]map[string]string) (map[string][]string, error)
}

// Options are the engine's optional parts.
type Options struct {
	// Rules are the compiled policy rules.
	Rules *policy.Rules
	// Plans keeps last applies and plans awaiting approval across
	// restarts.
	Plans PlanStore
	// PlanText makes every plan with changes carry its human-readable
	// text (runner.Plan.Text), for plan records: a terraform show per
	// change, run in parallel with the apply.
	PlanText bool
	// FindOrphan, if set, looks in the cloud for the load balancer of a
	// Service whose state holds none: one an apply created and could not
	// record (killed, or its backend down). A deletion then imports it
	// first, so it is destroyed too, not left behind.
	// It gets the load balancer's cloud name and its owner tags (a
	// Service's or a group's: renderer.OwnerTags, GroupOwnerTags) and
	// returns the id of the one of that name whose tags hold every owner
	// tag, "" if none.
	FindOrphan func(ctx context.Context, name string, owner map[string]string) (id string, err error)
	// FindCertificates, if set, lists the certificates in the cloud whose
	// tags hold every owner tag (renderer.OwnerTags) and that no load
	// balancer uses. The certificates an interrupted apply uploaded and
	// could not record are among them; the engine imports those into the
	// Service's state (recoverCertificates), so none is left behind with
	// its private key.
	FindCertificates func(ctx context.Context, owner map[string]string) ([]UnusedCertificate, error)
	// Migrated, if set, hears of every state moved off its legacy key
	// (MigrateState), so what is kept beside a workspace can follow it.
	Migrated func(ctx context.Context, legacyWorkspace, workspace string)
	// TLS, if set, reads the TLS Secrets a Service names for its https
	// listeners. Without it such a Service renders as if it named none.
	TLS TLSSource
	// Owns, if set, tells whether this replica may plan and apply an
	// object now (it holds the object's shard: docs/adr/0017). It is asked
	// before every plan and again before a saved plan is applied; an
	// object it does not own is ErrNotOwner. Unset: every object is this
	// process's.
	Owns func(objectref.Ref) bool
	// PoolUsers, if set, lists the load balancers in the cloud that
	// forward to the pools tagged with each set of tags (a pool's, by its
	// node selection; renderer.PoolTags), by selection. A prune keeps a
	// pool one still uses, instead of having the cloud refuse its destroy
	// every round: a load balancer handed over to a team's own Terraform
	// keeps the pool it was applied with.
	PoolUsers func(ctx context.Context, pools map[string]map[string]string) (map[string][]string, error)
}

// PlanStore keeps, outside the process (the plan records), what a
// controller that starts needs of each object: the last apply (so an
// unchanged object costs no terraform process) and the plan waiting for
// approval (so it keeps waiting, with the same id).
type PlanStore interface {
	// Load returns what is kept of workspace, nil when nothing. It fails
	// with runner.ErrOwnerMismatch when the workspace was recorded for
	// another owner than owner (a Service's uid).
	Load(ctx context.Context, workspace, owner string) (*Kept, error)
}

// Kept is what a PlanStore keeps of one object.
type Kept struct {
	// Applied is the last apply: the rendering's hash and its outputs.
	Applied *LastApply
	// Pending is the plan awaiting approval (or only planned), if any.
	Pending *StoredPlan
}

// StoredPlan is a pending plan as kept outside the process.
type StoredPlan struct {
	// Plan holds ID, FileHash, Hash (the rendering), Destroy and Summary.
	Plan     runner.Plan
	Verdicts []policy.Verdict
	// Data is the saved plan file.
	Data []byte
}

// New returns an Engine. render is the base rendering config (cluster,
// region, endpoint, modules, network); its Backend is filled per object
// from states.
func New(render renderer.Config, states *state.Backends, r *runner.Runner, o Options) *Engine {
	if render.ModulesDigest == "" {
		render.ModulesDigest = modules.Digest()
	}
	return &Engine{render: render, states: states, runner: r, rules: o.Rules, plans: o.Plans, planText: o.PlanText, migrated: o.Migrated,
		findOrphan: o.FindOrphan, findCertificates: o.FindCertificates, tls: o.TLS, owns: o.Owns, poolUsers: o.PoolUsers}
}

// UseKubernetes gives the state backends a Kubernetes client (to delete
// the kubernetes backend's Secrets and Leases).
func (e *Engine) UseKubernetes(client kubernetes.Interface) { e.states.SetKubernetesClient(client) }

// Runner is the engine's terraform runner.
func (e *Engine) Runner() *runner.Runner { return e.runner }

// stateObject names an object for the state backends.
func (e *Engine) stateObject(ref objectref.Ref) state.Object {
	return state.Object{Cluster: e.render.ClusterID, Kind: ref.StateKind(), Namespace: ref.Namespace, Name: ref.Name}
}

// location is one object's rendering config and state location.
func (e *Engine) location(ref objectref.Ref) (*state.Location, renderer.Config, error) {
	tg, err := e.states.Location(e.stateObject(ref))
	if err != nil {
		return nil, renderer.Config{}, err
	}
	cfg := e.render
	cfg.Backend = BackendBlock(tg.Block)
	return tg, cfg, nil
}

// renderCluster renders a root module of the cluster's own (the route
// set, the target pools, an address, a pod pool, a rule set) at ref's
// location. No Service owns it: its job has no owner. Its operations take
// the fair share of terraform slots of namespace share ("": the
// cluster's).
func (e *Engine) renderCluster(ref objectref.Ref, share string, render func(renderer.Config) (*renderer.Module, error)) (*renderer.Module, runner.Job, error) {
	tg, cfg, err := e.location(ref)
	if err != nil {
		return nil, runner.Job{}, fmt.Errorf("%s: %w", ref.Describe(), err)
	}
	m, err := render(cfg)
	if err != nil {
		return nil, runner.Job{}, err
	}
	j := job(tg, m, "")
	j.Share = share
	return m, j, nil
}

// job wraps a rendered module for the runner.
func job(tg *state.Location, m *renderer.Module, owner string) runner.Job {
	return runner.Job{
		Key:          tg.Key,
		Owner:        owner,
		Files:        m.Files,
		Hash:         m.Hash,
		Env:          tg.Env,
		CLIWorkspace: tg.CLIWorkspace,
		DeleteState:  tg.Delete,
		Unlock:       tg.Unlock,
		Exists:       tg.Exists,
		Prepare:      writeModules,
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
