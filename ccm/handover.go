package ccm

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/records"
)

// A Service with deletion policy retain hands its load balancer over to a
// team's own Terraform when it no longer needs it (docs/addresses.md): the
// reserved address the load balancer holds goes with it. Its workspace is
// forgotten first, under review like the load balancer's; the address
// keeper leaves alone an address no workspace of ours holds and no Service
// names, and meanwhile does not detach it (handingOver).

// handOverAddress forgets the workspace of the reserved address in's load
// balancer holds, when one of ours keeps it, under the Service's policy
// (ann).
func (l *loadBalancers) handOverAddress(ctx context.Context, in *annotations.Service, ann annotations.LoadBalancer) error {
	lb, exists, err := l.engine.GetLoadBalancer(ctx, in)
	if err != nil || !exists {
		return err
	}
	list, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{Region: l.cfg.Region})
	if err != nil {
		return fmt.Errorf("list the reserved addresses: %w", err)
	}
	for _, a := range list {
		if a.LoadBalancerID != lb.ID || a.Tags[exampleapi.TagClusterID] != l.cfg.ClusterID {
			continue
		}
		ns, name, ok := addressOwner(addressWant{}, &a)
		if !ok {
			continue
		}
		if _, held, err := l.engine.GetAddress(ctx, ns, name); err != nil || !held {
			return err
		}
		_, j, err := l.engine.RenderAddress(engine.AddressSpec{Namespace: ns, Name: name})
		if err != nil {
			return err
		}
		subj := l.board.AddressSubject(ctx, ns, name, j.Key, in, []*annotations.Service{in}, records.KindChange)
		if _, err := l.board.Run(ctx, &subj, l.policy(ann), func(rv engine.Review) (*engine.Outcome, error) {
			return l.engine.RetainAddress(ctx, ns, name, rv)
		}); err != nil {
			return err
		}
	}
	return nil
}

// handingOver says whether svc hands its load balancer over now: it
// retains it and no longer needs one (deleted, or of another type).
func handingOver(in *annotations.Service) bool {
	return in != nil && in.Retains() && (in.DeletionTimestamp != nil || in.Spec.Type != v1.ServiceTypeLoadBalancer)
}
