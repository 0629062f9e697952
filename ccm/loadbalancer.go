package ccm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// Retry delays handed to the service controller.
const (
	// provisioningRetry: a new load balancer is still provisioning.
	provisioningRetry = 5 * time.Second
	// approvalRetry: a plan waits for people. A PlanApproval does not
	// trigger the service controller, so this is how soon an approval is
	// acted on; a retry while nothing changed runs no terraform.
	approvalRetry = 5 * time.Second
	// renewalRetry: the Service's shard is held, its Lease renewal late
	// (a slow API server); the next renewal, a renew period away at
	// most, makes it this replica's to act on again.
	renewalRetry = time.Second
)

// errRenewalLate: the Service's shard is this replica's, but its Lease was
// not renewed recently enough to act on it now.
var errRenewalLate = errors.New("its shard's Lease renewal is late; retried once renewed")

// loadBalancers implements cloudprovider.LoadBalancer as an adapter over
// the engine: every change is a rendered Terraform plan the engine decides
// under the Service's review (apply policy, policy rules, approvals),
// which the board builds and reports.
type loadBalancers struct {
	engine *engine.Engine
	cfg    *cloudconfig.Config
	board  lbReviewer
	// client reads and patches Services (nil until Initialize has one).
	client kubernetes.Interface
	// api reads the cloud, never changes it: a load balancer named by
	// adopt-id (its owner, before anything is rendered), and reserved
	// addresses and the load balancers holding them (addresses.go).
	api *exampleapi.Client
	// groups are the load balancer groups (shared load balancers).
	groups *groups
	// refs decides the references a Service makes outside itself.
	refs *references
	// released are the Services (by uid) whose own load balancer is known
	// gone since they joined a group.
	released sync.Map
	// shards: nil unless sharded (every Service is this replica's).
	shards *shards
	// lifecycle decides which nodes the target pools forward to.
	lifecycle *nodeLifecycle
	// servicesSynced tells whether the Service informer has synced (nil
	// until SetInformers).
	servicesSynced func() bool
	// consent queues the groups whose guests a ReferenceGrant change
	// may let in or leave out (consent.go).
	consent consentQueue
	// addresses decides, on the leader, who holds each reserved address
	// (nil until SetInformers).
	addresses *addressKeeper
	// reserved are the region's reserved IPs (reservedIPs).
	reserved ttlCache[map[string]bool]
	// keptSaid is what was last said of the idle pools a prune kept for
	// load balancers still using them (reportKeptPools).
	keptMu   sync.Mutex
	keptSaid string
}

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancers(e *engine.Engine, cfg *cloudconfig.Config, board lbReviewer, api *exampleapi.Client) *loadBalancers {
	gs := newGroups(cfg)
	gs.records = board.Records
	gs.refs = newReferences(cfg, api)
	return &loadBalancers{engine: e, cfg: cfg, board: board, api: api, groups: gs, refs: gs.refs, lifecycle: newNodeLifecycle(cfg),
		consent: newConsentQueue()}
}

// ours tells whether svc is this controller's to load-balance: the
// service controller of k8s.io/cloud-provider serves a LoadBalancer
// Service only without a loadBalancerClass. Another controller's Service
// reaches nothing shared of this one's (groups, pools).
func ours(svc *v1.Service) bool {
	return svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

// GetLoadBalancerName is the annotation's name, else a stable name of at
// most 32 characters derived from the cluster id and the Service UID.
func (l *loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *v1.Service) string {
	return l.engine.LoadBalancerName(annotations.Read(svc))
}

// GetLoadBalancer reads the recorded outputs or the state; no plan. A
// member of a group (by its annotation, or as last applied) has the
// group's.
func (l *loadBalancers) GetLoadBalancer(ctx context.Context, _ string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	if !l.shards.ownsService(svc) {
		// Sharded, another replica's: "exists", so that the service
		// controller here never drops its finalizer.
		return svc.Status.LoadBalancer.DeepCopy(), true, nil
	}
	in := annotations.Read(svc)
	for _, g := range l.groupsOf(ctx, svc) {
		members := l.groups.members(g, nil, false)
		lb, exists, err := l.engine.GetGroupLoadBalancer(ctx, l.renderGroup(g, members))
		if err != nil {
			return nil, false, err
		}
		if exists {
			return status(lb, in, members), true, nil
		}
	}
	lb, exists, err := l.engine.GetLoadBalancer(ctx, in)
	switch {
	case err != nil:
		return nil, false, err
	case !exists && leaving(svc):
		// On "does not exist" the service controller drops a leaving
		// Service's finalizer without EnsureLoadBalancerDeleted: a plan
		// awaiting approval, a record, a workspace would be kept for
		// ever. A leaving Service is always deleted through it (with
		// nothing in its state, that costs no terraform).
		return &v1.LoadBalancerStatus{}, true, nil
	case !exists:
		return nil, false, nil
	}
	return status(lb, in, nil), true, nil
}

// leaving: svc is being deleted, or is no longer this controller's to
// load-balance.
func leaving(svc *v1.Service) bool {
	return svc.DeletionTimestamp != nil || !ours(svc)
}

// policy is the stricter of the cluster's and the Service's apply policy.
func (l *loadBalancers) policy(ann annotations.LoadBalancer) annotations.ApplyPolicy {
	return annotations.Stricter(annotations.ApplyPolicy(l.cfg.Terraform.ApplyPolicy), ann.ApplyPolicy)
}

// EnsureLoadBalancer converges the Service's load balancer; while it
// provisions, while its plan awaits approval, or while its shard's Lease
// renewal is late, the controller retries.
func (l *loadBalancers) EnsureLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	st, err := l.ensure(ctx, svc, nodes)
	if errors.Is(err, errRenewalLate) {
		return nil, api.NewRetryError(err.Error(), renewalRetry)
	}
	return st, err
}

// ensure is EnsureLoadBalancer, errRenewalLate left for the caller to
// turn into a retry.
func (l *loadBalancers) ensure(ctx context.Context, svc *v1.Service, nodes []*v1.Node) (_ *v1.LoadBalancerStatus, err error) {
	if err := l.elsewhere(ctx, svc, nodes); err != nil {
		return nil, err
	}
	defer func() {
		if err == nil {
			l.shards.reconciled(svc) // off its shard's queue
		}
	}()
	// Its annotations are read here, once, and passed on.
	in := annotations.Read(svc)
	subj := l.board.ServiceSubject(ctx, in, records.KindChange)
	l.board.RetiredAnnotations(subj, svc.Annotations)
	l.groups.seen(nodes)
	// Every reference outside the Service is decided before anything is
	// rendered (docs/tenancy.md).
	if err := l.refs.authorize(ctx, in); err != nil {
		l.board.Failed(subj, err)
		return nil, retryUnread(err)
	}
	if g := in.LB.Group; g.Name != "" {
		if g.In(svc.Namespace).Namespace != svc.Namespace {
			// A guest placed before its group's namespace's grants were
			// first read (authorize waited for them) may be the group's
			// replica's now (guestshards.go).
			if err := l.elsewhere(ctx, svc, nodes); err != nil {
				return nil, err
			}
		}
		if in.LB.Address != "" || in.LB.AddressKeep {
			err := fmt.Errorf("%s: a member of load balancer group %s serves on the group's address: a reserved address (%s, %s or spec.loadBalancerIP) is for a Service's own load balancer",
				objectref.Service(svc).Describe(), g.In(svc.Namespace), annotations.LBAddress, annotations.LBAddressKeep)
			l.board.Failed(subj, err)
			return nil, err
		}
		return l.ensureMember(ctx, in, nodes, g.In(svc.Namespace))
	}
	l.released.Delete(svc.UID) // it has, or is about to have, its own
	if in.Err != nil {
		l.board.Failed(subj, in.Err)
		return nil, in.Err
	}
	if err := l.engine.CheckService(in); err != nil {
		err = fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), err)
		l.board.Failed(subj, err)
		return nil, err
	}
	l.unlock(ctx, subj, in)
	pol := l.policy(in.LB)
	poolID, err := l.targetPool(ctx, in, nodes, pol)
	if err != nil {
		return nil, err
	}
	var lb *engine.LoadBalancer
	out, err := l.board.Run(ctx, &subj, pol, func(rv engine.Review) (out *engine.Outcome, err error) {
		if poolID != "" {
			lb, out, err = l.engine.ReconcileLoadBalancerOnPool(ctx, in, poolID, rv)
		} else {
			lb, out, err = l.engine.ReconcileLoadBalancer(ctx, in, nodes, rv)
		}
		return out, err
	})
	if out != nil && out.Result != nil && out.Result.FastPath {
		fastPathSkips.Inc()
	}
	if out != nil && out.Applied != nil {
		l.shards.applied(l.shards.shardRef(svc))
	}
	if err == nil && lb != nil {
		l.asked(objectref.Service(svc), in, poolID, lb)
	}
	st, err := l.served(subj, in, nil, lb, err)
	if err == nil {
		st, err = l.addressed(ctx, subj, in, lb, st)
	}
	if err != nil {
		return nil, err
	}
	// Its own load balancer serves it: the groups it left go after.
	if err := l.leave(ctx, svc, annotations.Group{}, nodes, records.KindChange); err != nil {
		return nil, err
	}
	return st, nil
}

// shardRetry is the delay asked for a deletion another replica holds
// (the service controller of k8s.io/cloud-provider v0.36 wraps deletion
// errors with %v, so it retries with its own backoff instead).
const shardRetry = time.Minute

// elsewhere is why svc is not this replica's to reconcile now: its
// shard's renewal is late (errRenewalLate), or another replica holds it
// (cloudprovider.ImplementedElsewhere, once this one did its part); nil
// when it is this replica's.
func (l *loadBalancers) elsewhere(ctx context.Context, svc *v1.Service, nodes []*v1.Node) error {
	switch {
	case l.shards.late(svc):
		return fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), errRenewalLate)
	case !l.shards.ownsService(svc):
		l.notOwned(ctx, svc, nodes)
		// The service controller then does nothing: no event, no status.
		return cloudprovider.ImplementedElsewhere
	}
	return nil
}

// notOwned is the part this replica takes in a Service of a shard it
// does not hold (it was queued before its shard moved, or it left a group
// of this replica's): nothing planned for it, but the groups it left that
// this replica holds go on without it, which the Service's own replica
// cannot do.
func (l *loadBalancers) notOwned(ctx context.Context, svc *v1.Service, nodes []*v1.Node) {
	klog.V(2).InfoS("Not this replica's: another holds the Service's shard", "service", klog.KObj(svc))
	if err := l.leave(ctx, svc, annotations.Group{}, nodes, records.KindChange); err != nil {
		klog.ErrorS(err, "Cannot take a Service out of the groups it left", "service", klog.KObj(svc))
	}
}

// served is the status a reconcile's outcome gives the Service: its load
// balancer's address once active; a retry while it provisions or its plan
// waits (a plan-only plan keeps serving what exists).
func (l *loadBalancers) served(subj review.Subject, in *annotations.Service, sharing []*v1.Service, lb *engine.LoadBalancer, err error) (*v1.LoadBalancerStatus, error) {
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case errors.As(err, &wait), errors.As(err, &denied):
		if lb != nil && lb.Status == "active" && wait != nil && wait.Policy == annotations.ApplyPlanOnly {
			return status(lb, in, sharing), nil // keep serving what exists
		}
		return nil, api.NewRetryError(err.Error(), approvalRetry)
	case err != nil:
		return nil, err
	case lb == nil:
		return nil, fmt.Errorf("%s: no load balancer in the applied state", objectref.Service(in.Service).Describe())
	}
	switch lb.Status {
	case "active":
		return status(lb, in, sharing), nil
	case "error":
		err := fmt.Errorf("load balancer %s of %s is in status error", lb.ID, objectref.Service(in.Service).Describe())
		l.board.Eventf(subj, v1.EventTypeWarning, "LoadBalancerFailed", "%v", err)
		return nil, err
	default:
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s is %s", lb.ID, lb.Status), provisioningRetry)
	}
}

// UpdateLoadBalancer follows node changes; it is the same convergence.
// A late renewal is an error here, so the service controller tries the
// node set again rather than taking it as applied.
func (l *loadBalancers) UpdateLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) error {
	_, err := l.ensure(ctx, svc, nodes)
	var retry *api.RetryError
	if errors.As(err, &retry) {
		return nil // provisioning or awaiting approval is not a failure
	}
	return err
}

// EnsureLoadBalancerDeleted destroys the load balancer (or, under the
// deletion policy retain, hands it over: the state forgets it) and
// deletes its state and workspace. The destroy plan is decided like any other
// (the default policy rules hold it for approval); the Service's finalizer
// holds the Service meanwhile.
func (l *loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *v1.Service) error {
	if l.shards.late(svc) {
		return fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), errRenewalLate)
	}
	if !l.shards.ownsService(svc) {
		// Sharded, another replica's: it deletes the load balancer and
		// drops the finalizer. Gone from the API server, it did.
		if cur := l.shards.service(svc.Namespace, svc.Name); cur == nil || cur.UID != svc.UID {
			return nil
		}
		return api.NewRetryError(fmt.Sprintf("%s: another replica holds its shard", objectref.Service(svc).Describe()), shardRetry)
	}
	// The groups it was in go on without it (the last member's destroys
	// the group's load balancer).
	if err := l.leave(ctx, svc, annotations.Group{}, nil, records.KindDestroy); err != nil {
		return err
	}
	in := annotations.Read(svc)
	subj := l.board.ServiceSubject(ctx, in, records.KindDestroy)
	ann := in.LB
	if in.Err != nil {
		// A Service must stay deletable: fall back to the cluster policy.
		ann = annotations.LoadBalancer{ApplyPolicy: annotations.ApplyAuto}
	}
	l.unlock(ctx, subj, in)
	var err error
	if in.Retains() {
		err = l.handOverAddress(ctx, in, ann)
	}
	var out *engine.Outcome
	if err == nil {
		out, err = l.board.Run(ctx, &subj, l.policy(ann), func(rv engine.Review) (*engine.Outcome, error) {
			if in.Retains() {
				return l.engine.RetainLoadBalancer(ctx, in, rv)
			}
			return l.engine.RemoveLoadBalancer(ctx, in, rv)
		})
	}
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	if errors.As(err, &wait) || errors.As(err, &denied) {
		return api.NewRetryError(err.Error(), approvalRetry)
	}
	if err == nil {
		l.board.Removed(ctx, out)
		l.lifecycle.asks.forget(objectref.Service(svc))
		l.released.Delete(svc.UID)
		l.forgetKeys(svc)
	}
	return err
}

// asked records what ref's load balancer, just applied (or found
// applied) for svc (its primary, for a group), asks of the pool poolID;
// forwarding to its nodes itself (no pool), it asks nothing.
func (l *loadBalancers) asked(ref objectref.Ref, in *annotations.Service, poolID string, lb *engine.LoadBalancer) {
	sel, ok, err := engine.Selection(in)
	if poolID == "" || err != nil || !ok {
		l.lifecycle.asks.forget(ref)
		return
	}
	l.lifecycle.asks.applied(ref, sel, lb.Delay)
}

// unlock executes the Service's unlock requests.
func (l *loadBalancers) unlock(ctx context.Context, subj review.Subject, in *annotations.Service) {
	l.board.Unlock(ctx, l.engine, subj, func() (engine.Job, error) {
		return l.engine.LoadBalancerWorkspace(in)
	})
}

// status is the Service's ingress from the load balancer's outputs, with
// its ipMode (sharing: the other Services of its group's address).
func status(lb *engine.LoadBalancer, in *annotations.Service, sharing []*v1.Service) *v1.LoadBalancerStatus {
	mode := ipMode(in, sharing)
	st := &v1.LoadBalancerStatus{}
	for _, ip := range []string{lb.IPv4, lb.IPv6} {
		if ip != "" {
			st.Ingress = append(st.Ingress, v1.LoadBalancerIngress{IP: ip, IPMode: mode})
		}
	}
	if len(st.Ingress) == 0 && lb.Hostname != "" {
		st.Ingress = append(st.Ingress, v1.LoadBalancerIngress{Hostname: lb.Hostname})
	}
	return st
}

// ipMode is the ingress's ipMode: Proxy when a listener of the address
// proxies (svc's, or another member's of its group: sharing), else VIP.
// kube-proxy routes in-cluster traffic to a VIP address straight to the
// endpoints; a proxying load balancer must see it instead, or clients in
// the cluster bypass what it does (the hairpin problem behind
// cert-manager HTTP-01 failures).
//
// It is always given because API servers from 1.30 on store VIP when it
// is left out (the LoadBalancerIPMode feature): a status without it never
// equals the stored one, and the service controller patched every Service
// at every sync (a restart with 1,000 Services sent 1,000 patches, 20 s at
// the shipped client QPS). An API server without the field drops it; a
// stored ingress with an address and no ipMode shows that, and then none
// is given, for the same reason.
func ipMode(in *annotations.Service, sharing []*v1.Service) *v1.LoadBalancerIPMode {
	for _, ing := range in.Status.LoadBalancer.Ingress {
		if ing.IP != "" && ing.IPMode == nil {
			return nil
		}
	}
	m := v1.LoadBalancerIPModeVIP
	if proxies(in) || slices.ContainsFunc(sharing, func(s *v1.Service) bool { return proxies(annotations.Read(s)) }) {
		m = v1.LoadBalancerIPModeProxy
	}
	return &m
}

// proxies: one of svc's listeners does not hand packets on as they came
// to the address. PROXY protocol rewrites the connection's start; an http
// or https listener terminates the connection (and TLS) and opens its
// own to the node. tcp and udp listeners pass packets through: VIP.
func proxies(in *annotations.Service) bool {
	ann := in.LB
	return in.Err == nil && (ann.ProxyProtocol || len(ann.HTTPPorts) > 0 || len(ann.HTTPSPorts) > 0)
}

// poolUsers is the engine's PoolUsers: the region's load balancers that
// forward to the pool tagged with each set of tags, by selection.
func poolUsers(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, map[string]map[string]string) (map[string][]string, error) {
	return func(ctx context.Context, pools map[string]map[string]string) (map[string][]string, error) {
		users, err := api.PoolUsers(ctx, cfg.Region, pools)
		if err != nil {
			return nil, fmt.Errorf("look for the load balancers using the target pools: %w", err)
		}
		return users, nil
	}
}

// orphanFinder is the engine's FindOrphan: the load balancer named name
// whose tags hold every owner tag (cluster id and the Service's uid, or
// the group's), if any.
func orphanFinder(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, string, map[string]string) (string, error) {
	return func(ctx context.Context, name string, owner map[string]string) (string, error) {
		found, err := api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name, Region: cfg.Region})
		if err != nil {
			return "", fmt.Errorf("look for a load balancer named %q that an interrupted apply left: %w", name, err)
		}
		for _, lb := range found {
			if lb.Name == name && exampleapi.HasTags(lb.Tags, owner) {
				return lb.ID, nil
			}
		}
		return "", nil
	}
}

// unusedCertificates is the engine's FindCertificates: the region's
// certificates of the owner that no load balancer serves but the owner's
// own (exampleapi.StrayCertificates). A load balancer an interrupted
// apply created and could not record is the owner's too: its certificate
// is imported and replaced (or destroyed) while the next apply adopts
// that load balancer and moves its listeners.
func unusedCertificates(api *exampleapi.Client, cfg *cloudconfig.Config) func(context.Context, map[string]string) ([]engine.UnusedCertificate, error) {
	return func(ctx context.Context, owner map[string]string) ([]engine.UnusedCertificate, error) {
		certs, err := api.StrayCertificates(ctx, cfg.Region, owner)
		if err != nil {
			return nil, fmt.Errorf("look for certificates an interrupted apply uploaded: %w", err)
		}
		var out []engine.UnusedCertificate
		for _, c := range certs {
			out = append(out, engine.UnusedCertificate{ID: c.ID, CertificatePEM: c.CertificatePEM, CreatedAt: c.CreatedAt})
		}
		return out, nil
	}
}
