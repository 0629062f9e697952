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
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// provisioningRetry is how soon the service controller asks again while a
// new load balancer is still provisioning.
const provisioningRetry = 5 * time.Second

// loadBalancers implements cloudprovider.LoadBalancer as a thin adapter:
// every change is a rendered Terraform plan applied by the engine.
type loadBalancers struct {
	engine   *engine.Engine
	cfg      *Config
	recorder record.EventRecorder
}

var _ cloudprovider.LoadBalancer = (*loadBalancers)(nil)

func newLoadBalancers(e *engine.Engine, cfg *Config) *loadBalancers {
	return &loadBalancers{engine: e, cfg: cfg, recorder: &record.FakeRecorder{}}
}

// setClient starts recording events on Services.
func (l *loadBalancers) setClient(client kubernetes.Interface) {
	b := record.NewBroadcaster()
	b.StartStructuredLogging(4)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	l.recorder = b.NewRecorder(scheme.Scheme, v1.EventSource{Component: "example-cloud-controller-manager"})
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

// EnsureLoadBalancer renders, plans and applies the Service's load
// balancer; while it provisions the controller is asked to retry.
func (l *loadBalancers) EnsureLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	lb, res, err := l.engine.EnsureLoadBalancer(ctx, svc, nodes)
	if err != nil {
		l.failed(svc, err)
		return nil, err
	}
	l.applied(svc, res)
	switch lb.Status {
	case "active":
		return status(lb, svc), nil
	case "error":
		err := fmt.Errorf("load balancer %s of service %s/%s is in status error", lb.ID, svc.Namespace, svc.Name)
		l.recorder.Event(svc, v1.EventTypeWarning, "LoadBalancerFailed", err.Error())
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
		return nil // provisioning after an update is not a failure
	}
	return err
}

// EnsureLoadBalancerDeleted destroys the load balancer and deletes its
// state and workspace; it succeeds when there is nothing to delete.
func (l *loadBalancers) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *v1.Service) error {
	res, err := l.engine.DeleteLoadBalancer(ctx, svc)
	if err != nil {
		l.failed(svc, err)
		return err
	}
	if res.Applied {
		l.recorder.Eventf(svc, v1.EventTypeNormal, "Destroyed", "Destroyed %s (%s)", res.Plan.ID, res.Plan.Summary)
	}
	return nil
}

// applied records what a non-fast-path run did.
func (l *loadBalancers) applied(svc *v1.Service, res *runner.Result) {
	if res == nil || res.FastPath || res.Plan == nil {
		return
	}
	p := res.Plan
	if p.HasChanges {
		l.recorder.Eventf(svc, v1.EventTypeNormal, "Planned", "Planned %s (%s)", p.ID, p.Summary)
	}
	if res.Applied && p.HasChanges {
		l.recorder.Eventf(svc, v1.EventTypeNormal, "Applied", "Applied %s (%s)", p.ID, p.Summary)
	}
	for _, w := range res.Warnings {
		l.recorder.Event(svc, v1.EventTypeWarning, "TerraformWarning", w)
	}
	klog.V(2).InfoS("load balancer converged", "service", klog.KObj(svc), "plan", p.ID, "changes", p.Summary.String())
}

func (l *loadBalancers) failed(svc *v1.Service, err error) {
	reason := "ApplyFailed"
	var re *runner.Error
	if errors.As(err, &re) && re.Op == "plan" {
		reason = "PlanFailed"
	} else if !errors.As(err, &re) {
		reason = "RenderFailed"
	}
	l.recorder.Event(svc, v1.EventTypeWarning, reason, err.Error())
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
