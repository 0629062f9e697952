package servicelb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// Retry delays handed to the service controller (a late renewal's is
// ccm's: ErrRenewalLate).
const (
	// provisioningRetry: a new load balancer is still provisioning.
	provisioningRetry = 5 * time.Second
	// approvalRetry: a plan waits for people. A PlanApproval does not
	// trigger the service controller, so this is how soon an approval is
	// acted on; a retry while nothing changed runs no terraform.
	approvalRetry = 5 * time.Second
)

// ErrRenewalLate: the Service's shard is this replica's, but its Lease
// was not renewed recently enough to act on it now.
var ErrRenewalLate = errors.New("its shard's Lease renewal is late; retried once renewed")

// services converges each Service's own load balancer: every change is a
// rendered Terraform plan the engine decides under the Service's review
// (apply policy, policy rules, approvals), which the board builds and
// reports. A member of a group is the group's (members.go).
type services struct {
	*shared
	engine    serviceEngine
	groupLBs  *groupLoadBalancers
	pools     *targetPools
	podPools  *podPools
	addresses *addresses
}

// ours tells whether svc is this controller's to load-balance: the
// service controller of k8s.io/cloud-provider serves a LoadBalancer
// Service only without a loadBalancerClass. Another controller's Service
// reaches nothing shared of this one's (groups, pools).
func ours(svc *v1.Service) bool {
	return svc.Spec.Type == v1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

// get reads the recorded outputs or the state; no plan. A
// member of a group (by its annotation, or as last applied) has the
// group's.
func (l *services) get(ctx context.Context, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	if !l.shards.ownsService(svc) {
		// Sharded, another replica's: "exists", so that the service
		// controller here never drops its finalizer.
		return svc.Status.LoadBalancer.DeepCopy(), true, nil
	}
	in := annotations.Read(svc)
	for _, g := range l.groupLBs.groupsOf(ctx, svc) {
		members := l.groups.members(g, nil, false)
		lb, exists, err := l.engine.GetGroupLoadBalancer(ctx, l.groupLBs.renderGroup(g, members))
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

// ensure converges the Service's load balancer; while it provisions,
// while its plan awaits approval, a RetryError; while its shard's Lease
// renewal is late, ErrRenewalLate (the caller's to turn into a retry).
func (l *services) ensure(ctx context.Context, svc *v1.Service, nodes []*v1.Node) (_ *v1.LoadBalancerStatus, err error) {
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
		return l.groupLBs.ensureMember(ctx, in, nodes, g.In(svc.Namespace))
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
	poolID, err := l.pools.targetPool(ctx, in, nodes, pol)
	if err != nil {
		return nil, err
	}
	pods, err := l.podPoolsOf(ctx, in)
	if err != nil {
		if retry := (*api.RetryError)(nil); !errors.As(err, &retry) {
			l.board.Failed(subj, err)
		}
		return nil, err
	}
	var lb *engine.LoadBalancer
	out, err := l.board.Run(ctx, &subj, pol, func(rv engine.Review) (out *engine.Outcome, err error) {
		switch {
		case pods != nil:
			lb, out, err = l.engine.ReconcileLoadBalancerOnPods(ctx, in, pods, rv)
		case poolID != "":
			lb, out, err = l.engine.ReconcileLoadBalancerOnPool(ctx, in, poolID, rv)
		default:
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
		st, err = l.addresses.addressed(ctx, subj, in, lb, st)
	}
	if err != nil {
		return nil, err
	}
	// Its own load balancer serves it: the groups it left go after.
	if err := l.groupLBs.leave(ctx, svc, annotations.Group{}, nodes, records.KindChange); err != nil {
		return nil, err
	}
	return st, nil
}

// podPoolsOf are the pod pools of in's ports when it forwards to its
// pods (target type ip), nil when it does not.
func (l *services) podPoolsOf(ctx context.Context, in *annotations.Service) (map[lbmodel.ServicePort]string, error) {
	if !in.LB.Pods() {
		return nil, nil
	}
	ports, err := engine.PodPorts(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", objectref.Service(in.Service).Describe(), err)
	}
	return l.podPools.ids(ctx, in, ports)
}

// shardRetry is the delay asked for a deletion another replica holds
// (the service controller of k8s.io/cloud-provider v0.36 wraps deletion
// errors with %v, so it retries with its own backoff instead).
const shardRetry = time.Minute

// elsewhere is why svc is not this replica's to reconcile now: its
// shard's renewal is late (ErrRenewalLate), or another replica holds it
// (cloudprovider.ImplementedElsewhere, once this one did its part); nil
// when it is this replica's.
func (l *services) elsewhere(ctx context.Context, svc *v1.Service, nodes []*v1.Node) error {
	switch {
	case l.shards.late(svc):
		return fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), ErrRenewalLate)
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
func (l *services) notOwned(ctx context.Context, svc *v1.Service, nodes []*v1.Node) {
	klog.V(2).InfoS("Not this replica's: another holds the Service's shard", "service", klog.KObj(svc))
	if err := l.groupLBs.leave(ctx, svc, annotations.Group{}, nodes, records.KindChange); err != nil {
		klog.ErrorS(err, "Cannot take a Service out of the groups it left", "service", klog.KObj(svc))
	}
}

// delete destroys the load balancer (or, under the
// deletion policy retain, hands it over: the state forgets it) and
// deletes its state and workspace. The destroy plan is decided like any other
// (the default policy rules hold it for approval); the Service's finalizer
// holds the Service meanwhile.
func (l *services) delete(ctx context.Context, svc *v1.Service) error {
	if l.shards.late(svc) {
		return fmt.Errorf("%s: %w", objectref.Service(svc).Describe(), ErrRenewalLate)
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
	if err := l.groupLBs.leave(ctx, svc, annotations.Group{}, nil, records.KindDestroy); err != nil {
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
		err = l.addresses.handOverAddress(ctx, in, ann)
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

// unlock executes the Service's unlock requests.
func (l *services) unlock(ctx context.Context, subj review.Subject, in *annotations.Service) {
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
