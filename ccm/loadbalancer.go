package ccm

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
)

// Retry delays handed to the service controller.
const (
	// provisioningRetry: a new load balancer is still provisioning.
	provisioningRetry = 5 * time.Second
	// approvalRetry: a plan waits for a person; the approval annotation
	// itself triggers a sync, so this is only a safety net.
	approvalRetry = time.Minute
)

// loadBalancers implements cloudprovider.LoadBalancer as a thin adapter:
// every change is a rendered Terraform plan the engine applies under the
// Service's apply policy.
type loadBalancers struct {
	engine *engine.Engine
	cfg    *Config
	review *review
}

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancers(e *engine.Engine, cfg *Config, rv *review) *loadBalancers {
	return &loadBalancers{engine: e, cfg: cfg, review: rv}
}

// newRecorder records events on Services and the route set.
func newRecorder(client kubernetes.Interface) record.EventRecorder {
	b := record.NewBroadcaster()
	b.StartStructuredLogging(4)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, v1.EventSource{Component: "example-cloud-controller-manager"})
}

// GetLoadBalancerName is the annotation's name, else a stable name of at
// most 32 characters derived from the cluster id and the Service UID.
func (l *loadBalancers) GetLoadBalancerName(_ context.Context, _ string, svc *v1.Service) string {
	if ann, err := annotations.Parse(svc.Annotations); err == nil && ann.Name != "" {
		return ann.Name
	}
	return renderer.LoadBalancerName(svc, l.cfg.ClusterID)
}

// GetLoadBalancer reads the recorded outputs or the state; no plan.
func (l *loadBalancers) GetLoadBalancer(ctx context.Context, _ string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	lb, exists, err := l.engine.GetLoadBalancer(ctx, svc)
	if err != nil || !exists {
		return nil, exists, err
	}
	return status(lb, svc), true, nil
}

// policy is the stricter of the cluster's and the Service's apply policy.
func (l *loadBalancers) policy(ann annotations.LoadBalancer) annotations.ApplyPolicy {
	return annotations.Stricter(annotations.ApplyPolicy(l.cfg.Terraform.ApplyPolicy), ann.ApplyPolicy)
}

// EnsureLoadBalancer converges the Service's load balancer; while it
// provisions, or while its plan awaits approval, the controller retries.
func (l *loadBalancers) EnsureLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil {
		l.review.failedEvent(serviceSubject(svc, records.KindChange), err)
		return nil, err
	}
	l.forceUnlock(ctx, svc, nodes, ann)
	lb, out, err := l.engine.ReconcileLoadBalancer(ctx, svc, nodes, l.policy(ann), ann.ApprovePlan)
	l.review.report(ctx, serviceSubject(svc, records.KindChange), out, err)
	if out != nil && out.Result != nil && out.Result.FastPath {
		fastPathSkips.Inc()
	}
	var wait *engine.AwaitingApprovalError
	switch {
	case errors.As(err, &wait):
		if lb != nil && lb.Status == "active" && wait.Policy == annotations.ApplyPlanOnly {
			return status(lb, svc), nil // keep serving what exists
		}
		return nil, api.NewRetryError(err.Error(), approvalRetry)
	case err != nil:
		return nil, err
	case lb == nil:
		return nil, fmt.Errorf("service %s/%s: no load balancer in the applied state", svc.Namespace, svc.Name)
	}
	switch lb.Status {
	case "active":
		return status(lb, svc), nil
	case "error":
		err := fmt.Errorf("load balancer %s of service %s/%s is in status error", lb.ID, svc.Namespace, svc.Name)
		l.review.eventf(serviceSubject(svc, records.KindChange), v1.EventTypeWarning, "LoadBalancerFailed", "%v", err)
		return nil, err
	default:
		return nil, api.NewRetryError(fmt.Sprintf("load balancer %s is %s", lb.ID, lb.Status), provisioningRetry)
	}
}

// UpdateLoadBalancer follows node changes; it is the same convergence.
func (l *loadBalancers) UpdateLoadBalancer(ctx context.Context, clusterName string, svc *v1.Service, nodes []*v1.Node) error {
	_, err := l.EnsureLoadBalancer(ctx, clusterName, svc, nodes)
	var retry *api.RetryError
	if errors.As(err, &retry) {
		return nil // provisioning or awaiting approval is not a failure
	}
	return err
}

// EnsureLoadBalancerDeleted destroys the load balancer and deletes its
// state, workspace and record; under manual the destroy plan first waits
// for approval (the finalizer holds the Service meanwhile).
func (l *loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *v1.Service) error {
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil {
		// A Service must stay deletable: fall back to the cluster policy.
		ann = annotations.LoadBalancer{ApplyPolicy: annotations.ApplyAuto}
	}
	l.forceUnlock(ctx, svc, nil, ann)
	out, err := l.engine.RemoveLoadBalancer(ctx, svc, l.policy(ann), ann.ApprovePlan)
	l.review.report(ctx, serviceSubject(svc, records.KindDestroy), out, err)
	var wait *engine.AwaitingApprovalError
	if errors.As(err, &wait) {
		return api.NewRetryError(err.Error(), approvalRetry)
	}
	if err == nil && (out.Applied == nil || !out.Applied.HasChanges) {
		l.review.deleteRecord(ctx, out.Workspace) // nothing was left to destroy
	}
	return err
}

// forceUnlock honours the force-unlock annotation when it names the lock
// the record says is in the way.
func (l *loadBalancers) forceUnlock(ctx context.Context, svc *v1.Service, nodes []*v1.Node, ann annotations.LoadBalancer) {
	if ann.ForceUnlock == "" {
		return
	}
	if _, job, err := l.engine.RenderLoadBalancer(svc, nodes); err == nil {
		l.review.forceUnlock(ctx, l.engine.Runner(), serviceSubject(svc, records.KindChange), ann.ForceUnlock, job)
	}
}

// status is the Service's ingress from the load balancer's outputs. With
// proxy protocol the ingress is marked Proxy, so kube-proxy sends
// in-cluster traffic through the load balancer instead of short-cutting.
func status(lb *engine.LoadBalancer, svc *v1.Service) *v1.LoadBalancerStatus {
	var mode *v1.LoadBalancerIPMode
	if ann, err := annotations.Parse(svc.Annotations); err == nil && ann.ProxyProtocol {
		m := v1.LoadBalancerIPModeProxy
		mode = &m
	}
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
