package netns

import (
	"net"
	"net/netip"
)

// prefixNet is p as the standard library's IPNet, which netlink takes.
func prefixNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
