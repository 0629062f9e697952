package review

import (
	"context"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// AddressSubject is the reconcile of reserved address ns/name (its
// workspace's record is workspace's), decided by the leader's address
// loop: taker is the Service whose load balancer is to hold it (nil: none,
// it is detached), involved every Service that names it or held it. A
// change's contributors are all of theirs: whoever edited one of them may
// have caused the move, so none of them approves it. Its events go to the
// taker, else to the record's ConfigMap.
func (b *Board) AddressSubject(ctx context.Context, ns, name, workspace string, taker *annotations.Service, involved []*annotations.Service, kind string) Subject {
	s := Subject{ref: objectref.Address(ns, name), kind: kind, event: b.recordObject(workspace)}
	if taker != nil {
		s.event, s.meta = taker.Service, taker.ObjectMeta
	}
	if kind == records.KindChange {
		for _, in := range involved {
			s.contrib = s.contrib.Add(b.contributors(ctx, in))
		}
	}
	return s
}

// GatewayAddressSubject is the reconcile of reserved address ns/name that
// Gateway gw takes or lets go of (its spec.addresses): its events go to
// the Gateway, and the Gateway is an input whose editor is unknown, as in
// the Gateway's own plan, so whoever may edit it cannot approve the move.
func (b *Board) GatewayAddressSubject(gw *gatewayv1.Gateway, ns, name, kind string) Subject {
	s := b.GatewaySubject(gw, GatewayInputs{}, kind)
	s.ref = objectref.Address(ns, name)
	return s
}
