package engine

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/servicemodel"
)

// The engine's vocabulary: what its callers (package ccm, package review)
// name of rendering and running. They import the engine alone, so the
// renderer and the runner can change behind it; the names are aliases,
// not copies, so errors.Is and type switches see one type.

// Running terraform.
type (
	// Job is one object's workspace as the runner runs it.
	Job = runner.Job
	// Plan is a saved plan: its id, file hash, rendering hash and summary.
	Plan = runner.Plan
	// PlanSummary counts a plan's changes by action.
	PlanSummary = runner.PlanSummary
	// ResourceChange is one resource's planned change.
	ResourceChange = runner.ResourceChange
	// LastApply is an object's last successful apply (one type for the
	// runner, the plan store and the plan records).
	LastApply = runner.LastApply
	// Result is an apply's outputs.
	Result = runner.Result
	// RunError is a failed terraform process: its command and stderr.
	RunError = runner.Error
	// Speculation is a plan that was never saved (admission previews).
	Speculation = runner.Speculation
	// Encryption is OpenTofu's state and plan encryption, keys resolved.
	Encryption = runner.Encryption
	// Distribution is terraform or tofu.
	Distribution = runner.Distribution
	// Verdict is one policy rule's judgment of a plan.
	Verdict = policy.Verdict
)

// DistributionTofu is OpenTofu.
const DistributionTofu = runner.DistributionTofu

// MinPassphraseLen is the shortest pbkdf2 passphrase OpenTofu accepts.
const MinPassphraseLen = runner.MinPassphraseLen

// The errors a caller tells apart.
var (
	// ErrStateLocked: another process holds the object's state lock.
	ErrStateLocked = runner.ErrStateLocked
	// ErrInUse: the cloud refused to delete an object something uses.
	ErrInUse = runner.ErrInUse
	// ErrGone: the object was destroyed while the work was queued.
	ErrGone = runner.ErrGone
	// ErrOwnerMismatch: the workspace belongs to another object.
	ErrOwnerMismatch = runner.ErrOwnerMismatch
	// ErrNoState: a preview found no state to plan against.
	ErrNoState = runner.ErrNoState
	// ErrBusy: a preview found the object's terraform busy.
	ErrBusy = runner.ErrBusy
)

// HeldLock reports the lock an ErrStateLocked error names.
func HeldLock(err error) (id, holder string, created time.Time, ok bool) {
	return runner.HeldLock(err)
}

// The description a caller hands the engine: the load balancer model
// (package lbmodel), which checks itself.
type (
	// DesiredRoute is one route of the cluster's route set as rendered
	// (Route is one as applied).
	DesiredRoute = lbmodel.Route
)

// Rendering.
type (
	// Module is a rendered root module.
	Module = renderer.Module
	// GroupReport is what rendering a group found of its members.
	GroupReport = renderer.GroupReport
	// MemberError is a member a group rendered without.
	MemberError = renderer.MemberError
	// ListenerConflict is two members asking for one listener.
	ListenerConflict = renderer.ListenerConflict
	// IgnoredSetting is a member's setting the group's primary overrides.
	IgnoredSetting = renderer.IgnoredSetting
	// UnsupportedProtocolError is a port of a protocol the cloud lacks.
	UnsupportedProtocolError = renderer.UnsupportedProtocolError
	// TooManyListenersError is a Service over the listener limit.
	TooManyListenersError = renderer.TooManyListenersError
	// Shape is what a load balancer's replacement depends on.
	Shape = renderer.Shape
)

// DelayOutput is the root module output that records a pool's applied
// deregistration delay.
const DelayOutput = renderer.DelayOutput

// Selection is the node selection a Service's target pool annotation
// names; ok is false when it names none.
func Selection(in *annotations.Service) (sel string, ok bool, err error) {
	return renderer.Selection(in)
}

// PodPorts are the Service ports in's load balancer forwards to directly
// (target type ip): the pod pools ReconcileLoadBalancerOnPods needs.
func PodPorts(in *annotations.Service) ([]lbmodel.ServicePort, error) {
	return servicemodel.PodPorts(in)
}

// PoolKey names a selection's pool in messages and records.
func PoolKey(selection string) string { return renderer.PoolKey(selection) }

// PoolNodes picks the nodes of selection in region.
func PoolNodes(nodes []*corev1.Node, selection, region string) ([]lbmodel.NodeInstance, []string, error) {
	return renderer.PoolNodes(nodes, selection, region)
}

// Excluded reports whether a node is kept out of every load balancer.
func Excluded(node *corev1.Node) bool { return renderer.Excluded(node) }

// SortMembers orders a group's members as the group renders them.
func SortMembers(namespace string, members []*corev1.Service) []*corev1.Service {
	return renderer.SortMembers(namespace, members)
}

// OwnerTags are the tags that mark svc's cloud objects as its own.
func OwnerTags(svc *corev1.Service, clusterID string) map[string]string {
	return renderer.OwnerTags(svc, clusterID)
}

// PolicyObject is an object as policy rules see it.
type PolicyObject = policy.Object
