// Package records keeps the plan records of the objects the CCM manages:
// for each object (a Service, a load balancer group, the route set, the
// target pools) the rendered HCL and its last N plans, in the cluster,
// so a platform team can read, keep and approve every infrastructure
// change with kubectl alone.
//
// A record lives in the CCM's namespace (see names.go for the names):
// ConfigMaps hold everything reviewers read - record.json, the rendered
// files and each plan's human-readable text (Terraform's redaction applies)
// - so that reviewing needs no access to Secrets, which in that namespace
// also hold the cloud credentials and the Terraform states. Secrets hold
// only the saved plan files of plans awaiting approval, so that any
// controller process can apply exactly the approved bytes. Objects are
// chunked into more when they would pass the 1 MiB object limit, and
// deleted with the workspace.
package records

import (
	"slices"
	"time"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/runner"
)

// Outcome is what became of a plan.
type Outcome string

// Outcomes.
const (
	// Applied: the saved plan was applied.
	Applied Outcome = "applied"
	// AwaitingApproval: waiting for its required approvals (PlanApprovals).
	AwaitingApproval Outcome = "awaiting-approval"
	// Planned: plan-only policy; recorded, never applied.
	Planned Outcome = "planned"
	// Superseded: a newer plan replaced it before it was applied.
	Superseded Outcome = "superseded"
	// Failed: planning or applying failed; Error says why.
	Failed Outcome = "failed"
	// NoChanges: the plan had nothing to do.
	NoChanges Outcome = "no-changes"
	// Denied: a policy rule denies it; it is never applied.
	Denied Outcome = "denied"
	// Interrupted: its apply started and never reported (the controller
	// applying it stopped); the object's next plan found what it left,
	// which Error says.
	Interrupted Outcome = "interrupted"
)

// Plan kinds (Plan.Kind, plan.kind in policy rules).
const (
	KindChange  = "change"  // create or update
	KindDestroy = "destroy" // deletion of the object
	KindDrift   = "drift"   // periodic drift check
)

// Plan is one recorded plan. It holds no attribute values: the summary
// comes from Terraform's machine-readable plan stream.
type Plan struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// HCLHash identifies the rendered files the plan was made from.
	HCLHash string `json:"hclHash"`
	// InputsDigest identifies the Kubernetes inputs (Service, nodes).
	InputsDigest string             `json:"inputsDigest,omitempty"`
	Summary      runner.PlanSummary `json:"summary"`
	Policy       string             `json:"policy"`
	Outcome      Outcome            `json:"outcome"`
	Error        string             `json:"error,omitempty"`
	PlannedAt    time.Time          `json:"plannedAt"`
	// DecidedAt is when the outcome became final (applied, failed,
	// superseded, denied, interrupted).
	DecidedAt *time.Time `json:"decidedAt,omitempty"`
	// Text is Terraform's human-readable rendering of the plan. It is kept
	// beside record.json (text ConfigMaps), not in it: read it with
	// Store.PlanText.
	Text string `json:"-"`
	// Verdicts are the policy rules that flagged the plan.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Contributors are who changed the inputs the plan was made from since
	// the last apply: nobody among them may approve it.
	Contributors
	// Author is the one author records written before Contributors kept;
	// read it through AuthorSet.
	Author string `json:"author,omitempty"`
	// Approvals are the verified approvals the controller counted.
	Approvals []Approval `json:"approvals,omitempty"`
	// Saved is the saved plan file, kept (in the record's Secrets) while the
	// plan awaits approval or is planned, so that another controller
	// process can apply exactly it: read it with Store.SavedPlan.
	// SavedSHA256 is its hash, set by the store from the bytes and kept
	// after they are dropped.
	Saved       []byte `json:"-"`
	SavedSHA256 string `json:"savedSHA256,omitempty"`
}

// Contributors are who changed an object's inputs (the Service, a
// group's members, the TLS Secrets they name) since its last apply.
type Contributors struct {
	// Authors are the identities the API server vouched for (see
	// reviewapi.AuthorAnnotation).
	Authors []string `json:"authors,omitempty"`
	// Unverified are inputs whose editor cannot be known (a Secret; a
	// Service while the author policy is missing): nobody allowed to
	// edit one may approve.
	Unverified []Input `json:"unverified,omitempty"`
}

// Input is a Kubernetes object a plan is made from.
type Input struct {
	// Group is the API group: "" for the core group, GroupGatewayAPI
	// for gateways and routes.
	Group string `json:"group,omitempty"`
	// Resource is the API resource: services or secrets (core group),
	// gateways or the routes (GroupGatewayAPI); for a pod pool, what
	// makes pods (PodMakers).
	Resource  string `json:"resource"`
	Namespace string `json:"namespace"`
	// Name is the object's; empty, every object of Resource in
	// Namespace (as a SubjectAccessReview reads it).
	Name string `json:"name,omitempty"`
}

// The resources an Input names.
const (
	ResourceServices   = "services"
	ResourceSecrets    = "secrets"
	ResourceGateways   = "gateways"
	ResourceHTTPRoutes = "httproutes"
	ResourceGRPCRoutes = "grpcroutes"
	ResourceTLSRoutes  = "tlsroutes"
	ResourceTCPRoutes  = "tcproutes"
	ResourceUDPRoutes  = "udproutes"
	// ResourceListenerSets: a ListenerSet's listeners are its Gateway's.
	ResourceListenerSets = "listenersets"
	// ResourceBackendTLSPolicies and ResourceConfigMaps (core group):
	// how a Gateway's rules reach a backend over TLS, and the CA they
	// trust.
	ResourceBackendTLSPolicies = "backendtlspolicies"
	ResourceConfigMaps         = "configmaps"
	GroupGatewayAPI            = "gateway.networking.k8s.io"
)

// PodMakers are the inputs of a pod pool of a Service in namespace, besides
// the Service's selector: every object by which someone may decide which
// pods' addresses the Service's EndpointSlices list. Pods, the built-in
// workloads that make them, and EndpointSlices written by hand; Kubernetes
// records the editor of none. A custom controller that makes pods from
// its own kind is not among them: see docs/tenancy.md.
func PodMakers(namespace string) []Input {
	out := make([]Input, len(podMakers))
	for i, m := range podMakers {
		out[i] = Input{Group: m.group, Resource: m.resource, Namespace: namespace}
	}
	return out
}

// podMaker is a resource that makes pods, with its kind for people.
type podMaker struct{ group, resource, kind string }

// podMakers are what PodMakers names.
var podMakers = []podMaker{
	{"", "pods", "Pod"}, {"discovery.k8s.io", "endpointslices", "EndpointSlice"},
	{"apps", "deployments", "Deployment"}, {"apps", "replicasets", "ReplicaSet"},
	{"apps", "statefulsets", "StatefulSet"}, {"apps", "daemonsets", "DaemonSet"},
	{"batch", "jobs", "Job"}, {"batch", "cronjobs", "CronJob"},
}

// inputKinds name an Input's resource for people.
var inputKinds = map[string]string{
	ResourceServices: "Service", ResourceSecrets: "Secret",
	ResourceGateways: "Gateway", ResourceHTTPRoutes: "HTTPRoute", ResourceGRPCRoutes: "GRPCRoute",
	ResourceTLSRoutes: "TLSRoute", ResourceTCPRoutes: "TCPRoute", ResourceUDPRoutes: "UDPRoute",
	ResourceListenerSets: "ListenerSet", ResourceBackendTLSPolicies: "BackendTLSPolicy", ResourceConfigMaps: "ConfigMap",
}

func (in Input) String() string {
	kind, ok := inputKinds[in.Resource]
	if i := slices.IndexFunc(podMakers, func(m podMaker) bool { return m.resource == in.Resource }); !ok && i >= 0 {
		kind, ok = podMakers[i].kind, true
	}
	if !ok {
		kind = in.Resource
	}
	if in.Name == "" {
		return "any " + kind + " of namespace " + in.Namespace
	}
	return kind + " " + in.Namespace + "/" + in.Name
}

// Add is c with more's authors and inputs, each once, in order.
func (c Contributors) Add(more Contributors) Contributors {
	out := Contributors{Authors: slices.Clone(c.Authors), Unverified: slices.Clone(c.Unverified)}
	for _, a := range more.Authors {
		if a != "" && !slices.Contains(out.Authors, a) {
			out.Authors = append(out.Authors, a)
		}
	}
	for _, in := range more.Unverified {
		if !slices.Contains(out.Unverified, in) {
			out.Unverified = append(out.Unverified, in)
		}
	}
	return out
}

// Empty: nobody and nothing.
func (c Contributors) Empty() bool { return len(c.Authors) == 0 && len(c.Unverified) == 0 }

// AuthorSet is the plan's contributors, with the author of a record
// written before contributors were kept.
func (p *Plan) AuthorSet() Contributors {
	c := p.Contributors
	return c.Add(Contributors{Authors: []string{p.Author}})
}

// Verdict is what one policy rule said of a plan.
type Verdict struct {
	Rule string `json:"rule"`
	// Effect is require-approval or deny.
	Effect  string `json:"effect"`
	Message string `json:"message"`
}

// Approval is one approval of a plan, as the controller counted it.
type Approval struct {
	// By is the approver the API server authenticated.
	By string    `json:"by"`
	At time.Time `json:"at"`
	// Object is the PlanApproval's name.
	Object  string `json:"object,omitempty"`
	Comment string `json:"comment,omitempty"`
}

// LockInfo is a state lock the last run could not take.
type LockInfo struct {
	ID      string    `json:"id"`
	Holder  string    `json:"holder,omitempty"`
	Created time.Time `json:"created,omitempty"`
	SeenAt  time.Time `json:"seenAt"`
}

// Drift is what drift checks found: the last check, and the last drift.
type Drift struct {
	CheckedAt time.Time `json:"checkedAt"`
	// Detected: the last check found drift.
	Detected bool `json:"detected"`
	// LastDetectedAt, PlanID and Resources describe the last drift found
	// (kept after it was corrected).
	LastDetectedAt *time.Time `json:"lastDetectedAt,omitempty"`
	PlanID         string     `json:"planID,omitempty"`
	// Resources changed outside Terraform.
	Resources []runner.ResourceChange `json:"resources,omitempty"`
}

// Record is everything kept about one object.
type Record struct {
	Object    objectref.Ref `json:"object"`
	Workspace string        `json:"workspace"`
	// Policy is the effective apply policy.
	Policy string `json:"policy"`
	// RequiredApprovals is how many distinct approvers the controller
	// requires before it applies a plan awaiting approval (0: unset).
	RequiredApprovals int `json:"requiredApprovals,omitempty"`
	// Files are the rendered root module's files (main.tf).
	Files map[string]string `json:"-"`
	// AppliedFiles are the files of the rendering last applied, kept so
	// that reviewers read a plan's HCL as a diff against what runs now
	// (index keys AppliedPrefix + name).
	AppliedFiles map[string]string `json:"-"`
	// Plans, newest first, at most the store's keep.
	Plans []Plan    `json:"plans"`
	Lock  *LockInfo `json:"lock,omitempty"`
	// Applied is what the last apply made: enough for a controller that
	// starts (a restart, a new leader) to answer an unchanged object
	// without terraform. An apply's start clears it: from then on the
	// state may hold more than it says.
	Applied *LastApply `json:"applied,omitempty"`
	// Applying is the apply under way, written before it starts: a
	// controller that stops during the apply leaves it here, and the
	// object's next plan records what became of it (Interrupted).
	Applying *ApplyStart `json:"applying,omitempty"`
	Drift    *Drift      `json:"drift,omitempty"`
	// Unapplied are who changed the object's inputs since its last apply
	// (every plan since, superseded ones too): a change stays theirs
	// however the plan that carries it was reached.
	Unapplied *Contributors `json:"unapplied,omitempty"`
	// Members are a group's member Services as last applied (with a plan
	// waiting: also those it would apply), primary first; empty for other
	// objects.
	Members []objectref.Ref `json:"members,omitempty"`
	// Leaving are the nodes leaving the target pools (the pools' record
	// only): those the floor keeps for now, and those draining.
	Leaving []LeavingNode `json:"leaving,omitempty"`
	// UpdatedAt is when the record last changed.
	UpdatedAt time.Time `json:"updatedAt"`
}

// ApplyStart is an apply that started: its plan (as recorded, without
// the text), the replica running it and when.
type ApplyStart struct {
	Plan      Plan      `json:"plan"`
	Replica   string    `json:"replica,omitempty"`
	StartedAt time.Time `json:"startedAt"`
}

// States of a LeavingNode.
const (
	// LeavingWaiting: the floor of healthy targets keeps it in the pool.
	LeavingWaiting = "waiting"
	// LeavingDraining: out of the pool; its open connections are kept,
	// with no new ones, until Until.
	LeavingDraining = "draining"
)

// LeavingNode is a node leaving a target pool.
type LeavingNode struct {
	Node string `json:"node"`
	// Instance is the node's instance (i-...), the pool's target.
	Instance string `json:"instance"`
	Pool     string `json:"pool"`
	Reason   string `json:"reason"`
	State    string `json:"state"`
	// Since is when it was seen waiting, or left the pool.
	Since time.Time  `json:"since"`
	Until *time.Time `json:"until,omitempty"`
}

// LastApply is the last successful apply of an object: the runner's type,
// the one the engine keeps too.
type LastApply = runner.LastApply

// Required is how many distinct approvers the controller requires (one
// when unset).
func (r *Record) Required() int { return max(r.RequiredApprovals, 1) }

// Approvers are the distinct users who approved p, in order.
func (p *Plan) Approvers() []string {
	var out []string
	for _, a := range p.Approvals {
		if !slices.Contains(out, a.By) {
			out = append(out, a.By)
		}
	}
	return out
}

// Latest is the newest plan, or nil.
func (r *Record) Latest() *Plan {
	if len(r.Plans) == 0 {
		return nil
	}
	return &r.Plans[0]
}

// Awaiting is the plans awaiting approval, newest first.
func (r *Record) Awaiting() []*Plan {
	var out []*Plan
	for i := range r.Plans {
		if r.Plans[i].Outcome == AwaitingApproval {
			out = append(out, &r.Plans[i])
		}
	}
	return out
}

// AwaitingDestroy is the newest destroy plan awaiting approval (destroy
// true), or the newest other plan awaiting it (false); nil when none: a
// reserved address's release, or a move in the way of one.
func (r *Record) AwaitingDestroy(destroy bool) *Plan {
	for _, p := range r.Awaiting() {
		if (p.Kind == KindDestroy) == destroy {
			return p
		}
	}
	return nil
}

// Find returns the plan with id, or nil.
func (r *Record) Find(id string) *Plan {
	for i := range r.Plans {
		if r.Plans[i].ID == id {
			return &r.Plans[i]
		}
	}
	return nil
}
