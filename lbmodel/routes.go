package lbmodel

import (
	"fmt"
	"net/netip"
	"regexp"
)

// Route sends a node's pod CIDR to its instance: one route of the
// cluster's route set.
type Route struct {
	// Destination is an IPv4 or IPv6 CIDR in canonical form.
	Destination string
	// TargetInstanceID is the node's instance (i-...).
	TargetInstanceID string
	// NodeName is shown next to the route for the reviewer.
	NodeName string
}

var instanceIDRE = regexp.MustCompile(`^i-[A-Za-z0-9]{1,64}$`)

// Validate refuses a route the cloud would not take, naming the field
// (destination, targetInstanceID).
func (r Route) Validate() error {
	p, err := netip.ParsePrefix(r.Destination)
	switch {
	case err != nil || p.Addr().Is4In6() || p.Addr().Zone() != "":
		return &InputError{Field: "destination", Value: r.Destination, Reason: "is not a CIDR"}
	case p.Masked().String() != r.Destination:
		return &InputError{Field: "destination", Value: r.Destination,
			Reason: fmt.Sprintf("is not in canonical form (did you mean %s?)", p.Masked())}
	case !instanceIDRE.MatchString(r.TargetInstanceID):
		return &InputError{Field: "targetInstanceID", Value: r.TargetInstanceID, Reason: "is not an instance id (i-...)"}
	}
	return nil
}
