package exampleapi

import (
	"fmt"
	"net/netip"
)

// ParseIPTarget reads a target of a pool of target type ip: an IP and a
// port, "10.244.1.5:8080" or "[fd00::5]:8080", in canonical form (no
// zone, no IPv4-mapped IPv6, no leading zeros), so one target has one
// spelling and a pool cannot hold it twice under two.
func ParseIPTarget(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	switch {
	case err != nil:
		return ap, fmt.Errorf("%q is not an IP:port target (10.244.1.5:8080, [fd00::5]:8080)", s)
	case ap.Addr().Zone() != "" || ap.Addr().Is4In6():
		return ap, fmt.Errorf("%q: the IP must be a plain IPv4 or IPv6 address", s)
	case ap.Port() == 0:
		return ap, fmt.Errorf("%q: the port must be 1-65535", s)
	case ap.String() != s:
		return ap, fmt.Errorf("%q is not in canonical form (%s)", s, ap)
	case !ap.Addr().IsGlobalUnicast():
		return ap, fmt.Errorf("%q: %s is not a unicast address a pod can have", s, ap.Addr())
	}
	return ap, nil
}

// IPTarget is the target of a pool of target type ip at ip and port.
func IPTarget(ip netip.Addr, port int) string {
	return netip.AddrPortFrom(ip, uint16(port)).String() //nolint:gosec // ports are 1-65535
}
