package lbmodel

import (
	"errors"
	"regexp"
	"slices"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// Address is one reserved address of a namespace, in a workspace of its
// own: a load balancer's replace or destroy never touches it, and a move
// between two load balancers is one plan of this workspace.
type Address struct {
	// Namespace owns the address (its owner tag).
	Namespace string
	// Name is its cloud name, unique per region (renderer's
	// ReservedAddressName for one the controller reserves).
	Name string
	// Family is ipv4 or ipv6; "" is ipv4.
	Family string
	// LoadBalancerID is the load balancer holding it, "" for none.
	LoadBalancerID string
	// Holder says who holds it, for the reviewer ("Service shop/blue"),
	// "" for none.
	Holder string
	// ImportID, when set, imports the existing address of that id (one of
	// this cluster and namespace whose state was lost), as adopt-id does
	// for a load balancer.
	ImportID string
}

var (
	addressNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)
	loadBalancerIDRE = regexp.MustCompile(`^lb-[A-Za-z0-9]{1,64}$`)
)

// Address families as the cloud spells them.
var addressFamilies = []string{exampleapi.AddressFamilyIPv4, exampleapi.AddressFamilyIPv6}

// FamilyOrDefault is the address's family as the cloud takes it: ipv4
// when unset.
func (a Address) FamilyOrDefault() string {
	if a.Family == "" {
		return exampleapi.AddressFamilyIPv4
	}
	return a.Family
}

// Validate refuses an address the cloud would not reserve, naming the
// field.
func (a Address) Validate() error {
	switch {
	case a.Namespace == "":
		return &InputError{Field: "namespace", Value: a.Namespace, Reason: "is required: an address belongs to a namespace"}
	case !addressNameRE.MatchString(a.Name):
		return &InputError{Field: "name", Value: a.Name, Reason: "must be 1-253 letters, digits, '.', '_' and '-', starting with a letter or digit"}
	case !slices.Contains(addressFamilies, a.FamilyOrDefault()):
		return &InputError{Field: "family", Value: a.Family, Reason: "must be ipv4 or ipv6"}
	case a.LoadBalancerID != "" && !loadBalancerIDRE.MatchString(a.LoadBalancerID):
		return &InputError{Field: "load_balancer_id", Value: a.LoadBalancerID, Reason: "is not a load balancer id (lb-...)"}
	case a.ImportID != "" && !annotations.IsAddressID(a.ImportID):
		return &InputError{Field: "import id", Value: a.ImportID, Reason: "is not an address id (addr-...)"}
	}
	return nil
}

// AddressUse is a Gateway's use of reserved addresses (its
// spec.addresses, docs/addresses.md#gateways): what the Gateway
// front-end asks for and the Service front-end's address keeper
// converges, both deciding under one lock.
type AddressUse struct {
	// Gateway is the Gateway (its uid is its load balancer's owner tag).
	Gateway objectref.Ref
	// LoadBalancerID is its load balancer; "" when it was not built now:
	// found by its name and the Gateway's uid, if it exists.
	LoadBalancerID string
	// IPv4 and IPv6 are its addresses as last applied, and Shown the
	// IPs the Gateway's status shows: a reserved address that came or
	// went makes them stale.
	IPv4, IPv6 string
	Shown      []string
	// Take is the address (IP or id) to hold, "" for none; Keep those it
	// may go on holding if it holds them (Take among them): any other
	// reserved address on the load balancer is let go of.
	Take string
	Keep []string
	// Policy reviews the plans.
	Policy annotations.ApplyPolicy
}

// ErrAddressNotUsable is the error of converging an AddressUse whose
// address to take is no longer usable (taken by another, a grant
// withdrawn) since it was asked: the message says why.
var ErrAddressNotUsable = errors.New("reserved address not usable")
