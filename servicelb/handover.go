package servicelb

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
// reserved address of its own namespace the load balancer holds goes with
// it. Its workspace is forgotten first, under review like the load
// balancer's; the address keeper leaves alone an address no workspace of
// ours holds and no Service names, and meanwhile does not detach it
// (handsOver). An address of another namespace, held through that
// namespace's ReferenceGrant, is not the Service's to hand over: its
// owner's workspace keeps it, and the keeper gives it back (detached, or
// to the Service of the owner's choice waiting for it) once the Service
// lets go of it, as it would after any Service letting go.

// handOverAddress forgets the workspace of the reserved address of in's
// namespace that in's load balancer holds, when one of ours keeps it,
// under the Service's policy (ann).
func (l *addresses) handOverAddress(ctx context.Context, in *annotations.Service, ann annotations.LoadBalancer) error {
	lb, exists, err := l.engine.GetLoadBalancer(ctx, in)
	if err != nil || !exists {
		return err
	}
	list, err := l.api.ListAddresses(ctx, exampleapi.AddressFilter{Region: l.cfg.Region})
	if err != nil {
		return fmt.Errorf("list the reserved addresses: %w", err)
	}
	for _, a := range list {
		if !goesWith(a, lb.ID, l.cfg.ClusterID, in.Namespace) {
			continue
		}
		ns, name := in.Namespace, a.Name
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

// goesWith tells whether reserved address a goes with the hand-over of
// load balancer lbID, a Service's of namespace ns: the load balancer holds
// it, and it is this cluster's address of ns. One of another namespace,
// held through that namespace's grant, stays its owner's.
func goesWith(a exampleapi.Address, lbID, clusterID, ns string) bool {
	return a.LoadBalancerID == lbID && a.Tags[exampleapi.TagClusterID] == clusterID && a.Tags[exampleapi.TagNamespace] == ns
}

// handingOver says whether svc hands its load balancer over now: it
// retains it and no longer needs one (deleted, or of another type).
func handingOver(in *annotations.Service) bool {
	return in != nil && in.Retains() && (in.DeletionTimestamp != nil || in.Spec.Type != v1.ServiceTypeLoadBalancer)
}

// handsOver says whether the reserved address of namespace ns that holder
// (nil: none known) holds goes with holder's load balancer now: holder
// hands it over, and the address is of its own namespace.
func handsOver(holder *annotations.Service, ns string) bool {
	return handingOver(holder) && holder.Namespace == ns
}
