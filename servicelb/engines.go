package servicelb

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/review"
)

// What each part of the Service load balancing needs of the engine (an
// *engine.Engine serves them all), so that each is tested with a fake
// of a few methods: a Service's own load balancer, a group's, the target
// pools, the reserved addresses, and the admission webhook's previews.
// Those that run changes also force a state lock open (review.Unlocker).

// serviceEngine is what a Service's own load balancer needs (services.go).
type serviceEngine interface {
	review.Unlocker
	LoadBalancerName(in *annotations.Service) string
	CheckService(in *annotations.Service) error
	LoadBalancerWorkspace(in *annotations.Service) (engine.Job, error)
	GetLoadBalancer(ctx context.Context, in *annotations.Service) (*engine.LoadBalancer, bool, error)
	GetGroupLoadBalancer(ctx context.Context, g lbmodel.Group) (*engine.LoadBalancer, bool, error)
	ReconcileLoadBalancer(ctx context.Context, in *annotations.Service, nodes []*corev1.Node, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error)
	ReconcileLoadBalancerOnPool(ctx context.Context, in *annotations.Service, poolID string, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error)
	ReconcileLoadBalancerOnPods(ctx context.Context, in *annotations.Service, pods map[lbmodel.ServicePort]string, rv engine.Review) (*engine.LoadBalancer, *engine.Outcome, error)
	RemoveLoadBalancer(ctx context.Context, in *annotations.Service, rv engine.Review) (*engine.Outcome, error)
	RetainLoadBalancer(ctx context.Context, in *annotations.Service, rv engine.Review) (*engine.Outcome, error)
}

// groupEngine is what a load balancer group needs (members.go): its
// members' own load balancers released, the group's rendered and
// converged.
type groupEngine interface {
	review.Unlocker
	GetLoadBalancer(ctx context.Context, in *annotations.Service) (*engine.LoadBalancer, bool, error)
	ReleaseLoadBalancer(ctx context.Context, in *annotations.Service, rv engine.Review) (*engine.Outcome, error)
	GroupPrimary(g lbmodel.Group) *corev1.Service
	RenderGroup(g lbmodel.Group, nodes []*corev1.Node, poolID string) (*engine.Module, *engine.GroupReport, engine.Job, error)
	ReconcileGroup(ctx context.Context, g lbmodel.Group, nodes []*corev1.Node, poolID string, rv engine.Review) (*engine.LoadBalancer, *engine.GroupReport, *engine.Outcome, error)
	RemoveGroup(ctx context.Context, g lbmodel.Group, rv engine.Review) (*engine.Outcome, error)
}

// poolEngine is what the target pools need (pools.go).
type poolEngine interface {
	HasTargetPool(ctx context.Context, selection string) (bool, error)
	TargetPoolID(ctx context.Context, selection string) (string, error)
	RenderTargetPools(pools []lbmodel.Pool) (*engine.Module, engine.Job, error)
	ReconcileTargetPools(ctx context.Context, selection string, members engine.PoolMembers, rv engine.Review) (string, *engine.Outcome, error)
	SyncTargetPools(ctx context.Context, members engine.PoolMembers, rv engine.Review) (*engine.Outcome, error)
	PruneTargetPools(ctx context.Context, inUse []string, members engine.PoolMembers, rv engine.Review) (engine.Prune, *engine.Outcome, error)
}

// addressEngine is what the reserved addresses need (addresses.go,
// addresskeeper.go, handover.go, releases.go).
type addressEngine interface {
	LoadBalancerName(in *annotations.Service) string
	ReservedAddressName(svc *corev1.Service) string
	GetLoadBalancer(ctx context.Context, in *annotations.Service) (*engine.LoadBalancer, bool, error)
	GetAddress(ctx context.Context, namespace, name string) (*engine.Address, bool, error)
	RenderAddress(a engine.AddressSpec) (*engine.Module, engine.Job, error)
	ReconcileAddress(ctx context.Context, a engine.AddressSpec, rv engine.Review) (*engine.Address, *engine.Outcome, error)
	RetainAddress(ctx context.Context, namespace, name string, rv engine.Review) (*engine.Outcome, error)
	ReleaseAddress(ctx context.Context, namespace, name string, rv engine.Review) (*engine.Outcome, error)
	WithdrawRelease(ctx context.Context, namespace, name string) (*engine.Outcome, error)
}

// previewEngine is what the admission webhook's preview needs
// (admission.go).
type previewEngine interface {
	CheckService(in *annotations.Service) error
	LoadBalancerShape(in *annotations.Service) (engine.Shape, error)
	TargetPoolID(ctx context.Context, selection string) (string, error)
	PreviewLoadBalancer(ctx context.Context, in *annotations.Service, nodes []*corev1.Node, poolID string, pods map[lbmodel.ServicePort]string, obj engine.PolicyObject) (*engine.Speculation, []engine.Verdict, error)
	EvaluateRendered(changes []engine.ResourceChange, obj engine.PolicyObject) []engine.Verdict
}

// Engine is every part's engine: what New takes (an *engine.Engine).
type Engine interface {
	serviceEngine
	groupEngine
	poolEngine
	addressEngine
	previewEngine
}

var _ Engine = (*engine.Engine)(nil)

// cloudReader is what the Service load balancing reads of the cloud (an
// *exampleapi.Client), never changing it: reserved addresses and the load
// balancers holding them, and the tags the tenancy rules read.
type cloudReader interface {
	GetAddress(ctx context.Context, id string) (*exampleapi.Address, error)
	ListAddresses(ctx context.Context, f exampleapi.AddressFilter) ([]exampleapi.Address, error)
	GetLoadBalancer(ctx context.Context, id string) (*exampleapi.LoadBalancer, error)
	ListLoadBalancers(ctx context.Context, f exampleapi.LoadBalancerFilter) ([]exampleapi.LoadBalancer, error)
	GetCertificate(ctx context.Context, id string) (*exampleapi.Certificate, error)
}

var _ cloudReader = (*exampleapi.Client)(nil)
