package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
)

// Static addresses (docs/addresses.md#gateways): spec.addresses names
// reserved addresses, which the Gateway's load balancer takes as a
// Service's does. Package gateway decides what is told offline (a type
// the cloud does not take is UnsupportedAddress); here the cloud is asked
// whether each is one the Gateway may take (package servicelb: the one
// tenancy check, the address's own workspace, under the Gateway's
// review).

// Addresses is what Gateways need of the reserved addresses (the Service
// front-end's, wired by the controller manager).
type Addresses interface {
	// AddressUsable says why Gateway gw cannot take reserved address
	// ref (an IP or id) now ("" when it can), in words that name nothing
	// of another namespace; refused: the tenancy check refused it.
	AddressUsable(ctx context.Context, gw objectref.Ref, ref string) (why string, refused bool, err error)
	// HoldAddresses converges the reserved addresses of a Gateway's load
	// balancer and returns its addresses as the cloud has them then.
	// subject(ns, name) is the review of reserved address ns/name's
	// plan.
	HoldAddresses(ctx context.Context, u lbmodel.AddressUse, subject func(ns, name string) review.Subject) (ipv4, ipv6 string, err error)
}

// NamedAddresses are the reserved addresses (IPs or ids) each Gateway of
// this controller's classes names in spec.addresses, one not accepted for
// them left out (it takes none): what a release of one waits for
// (servicelb.GatewayAddressNames). An error until the Gateways are read.
func (c *Controller) NamedAddresses() (map[objectref.Ref][]string, error) {
	for _, synced := range c.gatewaysRead {
		if !synced() {
			return nil, errors.New("the Gateway front-end has not read the Gateways yet (it cannot before the Gateway API CRDs are installed and it may list Gateways)")
		}
	}
	gws, err := c.gateways.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := map[objectref.Ref][]string{}
	for _, gw := range gws {
		if a := gateway.AddressesOf(gw); len(a.Refs) > 0 && a.Unsupported == "" && c.ours(gw.Spec.GatewayClassName) {
			out[objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID))] = a.Refs
		}
	}
	return out, nil
}

// addressRetry is how soon a Gateway whose addresses cannot be used looks
// again: a holder letting go of one is not watched.
const addressRetry = 15 * time.Second

// notAccepted is what a Gateway not accepted for its addresses is told:
// nothing is built, nor changed in the cloud.
func notAccepted(gw *gatewayv1.Gateway, a gateway.Addresses) programmed {
	return programmed{reason: gatewayv1.GatewayReasonInvalid, addresses: gw.Status.Addresses,
		message: "not accepted: " + a.Unsupported}
}

// addressProblem is why gw's addresses a cannot be used now (a reason
// AddressNotAssigned or AddressNotUsable and its message; none when they
// can), and those it may go on holding: each it names that the tenancy
// check allows.
func (c *Controller) addressProblem(ctx context.Context, gw *gatewayv1.Gateway, a gateway.Addresses) (reason gatewayv1.GatewayConditionReason, message string, keep []string, err error) {
	problems := slices.Clone(a.NotUsable)
	from := objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID))
	for _, ref := range a.Refs {
		if c.cloud.Addresses == nil {
			problems = append(problems, ref+": this controller takes no reserved addresses (no Example API client)")
			continue
		}
		why, refused, err := c.cloud.Addresses.AddressUsable(ctx, from, ref)
		if err != nil {
			return "", "", nil, fmt.Errorf("address %s of Gateway %s/%s: %w", ref, gw.Namespace, gw.Name, err)
		}
		if why != "" {
			problems = append(problems, why)
		}
		if !refused {
			keep = append(keep, ref)
		}
	}
	switch {
	case a.Unassigned != "":
		return gatewayv1.GatewayReasonAddressNotAssigned, strings.Join(append([]string{a.Unassigned}, problems...), "; "), keep, nil
	case len(problems) > 0:
		return gatewayv1.GatewayReasonAddressNotUsable, strings.Join(problems, "; "), keep, nil
	}
	return "", "", keep, nil
}

// holdAddresses converges the reserved addresses of gw's load balancer
// to what it names (take: the one to hold, "" for none; keep: those it
// may go on holding), lbID ("" when not built at this look: found in the
// cloud) with the addresses last applied, and returns the addresses its
// status shows. A plan waiting, an address taken meanwhile or a failure
// is said in out, and nil addresses returned.
func (c *Controller) holdAddresses(ctx context.Context, gw *gatewayv1.Gateway, lbID, ipv4, ipv6, take string, keep []string, out *programmed) []gatewayv1.GatewayStatusAddress {
	if c.cloud.Addresses == nil {
		return statusAddresses(ipv4, ipv6)
	}
	u := lbmodel.AddressUse{Gateway: objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID)), LoadBalancerID: lbID,
		IPv4: ipv4, IPv6: ipv6, Take: take, Keep: keep, Policy: c.policy(gw)}
	for _, a := range gw.Status.Addresses {
		u.Shown = append(u.Shown, a.Value)
	}
	v4, v6, err := c.cloud.Addresses.HoldAddresses(ctx, u, func(ns, name string) review.Subject {
		return c.cloud.Review.GatewayAddressSubject(gw, ns, name, records.KindChange)
	})
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case err == nil:
		return statusAddresses(v4, v6)
	case errors.Is(err, lbmodel.ErrAddressNotUsable):
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonAddressNotUsable, err.Error(), addressRetry
	case errors.As(err, &wait), errors.As(err, &denied):
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, err.Error(), approvalRetry
	default:
		out.reason, out.message, out.retry = gatewayv1.GatewayReasonPending, err.Error(), provisioningRetry
	}
	return nil
}

// statusAddresses are a load balancer's addresses as a Gateway's status
// gives them.
func statusAddresses(ips ...string) []gatewayv1.GatewayStatusAddress {
	var out []gatewayv1.GatewayStatusAddress
	ip := gatewayv1.IPAddressType
	for _, a := range ips {
		if a != "" {
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &ip, Value: a})
		}
	}
	return out
}
