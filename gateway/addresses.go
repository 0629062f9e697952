package gateway

import (
	"fmt"
	"net/netip"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
)

// Static addresses (docs/addresses.md#gateways): a Gateway's
// spec.addresses names reserved addresses of the Example cloud, which its
// load balancer takes as a Service's does with the address annotation.
// What can be told without the cloud is decided here; whether the cloud
// has the address, whose it is and who holds it, by the controller.

// Addresses is what a Gateway's spec.addresses asks for.
type Addresses struct {
	// Refs are the reserved addresses named, each an IP (type IPAddress,
	// the default) or an address id (NamedAddress, addr-…), in the
	// spec's order: those the cloud is asked about.
	Refs []string `json:"refs,omitempty"`
	// Unsupported says why the Gateway is not Accepted (reason
	// UnsupportedAddress): a type the Example cloud does not take.
	// Nothing is built then.
	Unsupported string `json:"unsupported,omitempty"`
	// Unassigned says why it is not Programmed (AddressNotAssigned): a
	// value left empty, which the cloud does not fill in.
	Unassigned string `json:"unassigned,omitempty"`
	// NotUsable say why it is not Programmed (AddressNotUsable), each
	// naming the address: what makes an address unusable before the
	// cloud is asked.
	NotUsable []string `json:"notUsable,omitempty"`
}

// AddressesOf decides gw's spec.addresses offline. A Gateway's load
// balancer is IPv4 only (renderer.RenderGateway), and the cloud attaches
// at most one reserved address per family to a load balancer: so a
// Gateway takes one IPv4 address.
func AddressesOf(gw *gatewayv1.Gateway) Addresses {
	var out Addresses
	var unsupported, unassigned, v4 []string
	for i, a := range gw.Spec.Addresses {
		typ := gatewayv1.IPAddressType
		if a.Type != nil && *a.Type != "" {
			typ = *a.Type
		}
		at := fmt.Sprintf("spec.addresses[%d]", i)
		switch {
		case typ != gatewayv1.IPAddressType && typ != gatewayv1.NamedAddressType:
			unsupported = append(unsupported, fmt.Sprintf("%s is of type %q", at, typ))
		case a.Value == "":
			unassigned = append(unassigned, at)
		case typ == gatewayv1.NamedAddressType && !annotations.IsAddressID(a.Value):
			out.NotUsable = append(out.NotUsable, fmt.Sprintf("%s %q: a NamedAddress is a reserved address's id (addr-…)", at, a.Value))
		case typ == gatewayv1.NamedAddressType:
			out.Refs, v4 = append(out.Refs, a.Value), append(v4, a.Value) // its family is the cloud's to say: an IPv6 one is refused there
		default:
			ip, err := netip.ParseAddr(a.Value)
			switch {
			case err != nil:
				out.NotUsable = append(out.NotUsable, fmt.Sprintf("%s %q is not an IP address", at, a.Value))
			case ip.Unmap().Is6():
				out.NotUsable = append(out.NotUsable, fmt.Sprintf("%s %s is an IPv6 address, and a Gateway's load balancer is IPv4 only", at, a.Value))
			default:
				out.Refs, v4 = append(out.Refs, a.Value), append(v4, a.Value)
			}
		}
	}
	if len(unsupported) > 0 {
		out.Unsupported = strings.Join(unsupported, "; ") + ": the Example cloud takes only reserved addresses, by IP (IPAddress, the default) or by id (NamedAddress)"
	}
	if len(unassigned) > 0 {
		out.Unassigned = strings.Join(unassigned, ", ") + " names no address: the Example cloud assigns none to an empty value; name a reserved address, or leave spec.addresses out for the load balancer's own"
	}
	if len(v4) > 1 {
		out.NotUsable = append(out.NotUsable, fmt.Sprintf("spec.addresses names %d IPv4 addresses (%s): the cloud attaches one reserved address per family to a load balancer; name one",
			len(v4), strings.Join(v4, ", ")))
	}
	return out
}
