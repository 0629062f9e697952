package netns

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
)

// gateway is what a joined namespace routes everything through: a
// link-local address the host side of every pair holds.
var gateway = netip.MustParseAddr("169.254.1.1")

// Join connects the network namespace of process pid (started with
// syscall.CLONE_NEWNET) to this one at IPv4 address ip, as a ptp CNI
// plugin does: a veth pair,
// its end there named eth0 holding ip/32 with a default route, its end
// here routing ip to it. The pair goes when the process's namespace
// does. name distinguishes the pair here (a pod's uid).
func Join(pid int, ip netip.Addr, name string) error {
	sum := sha256.Sum256([]byte(name))
	host := "vp" + hex.EncodeToString(sum[:6]) // 14 bytes: under IFNAMSIZ
	ns, err := vnetns.GetFromPid(pid)
	if err != nil {
		return fmt.Errorf("netns: the namespace of %d: %w", pid, err)
	}
	defer ns.Close()
	if !Inside() {
		return errors.New("netns: Join changes routes and forwarding: run inside a namespace Run made")
	}
	// A process of the same name restarted: its old pair may outlive its
	// namespace for a moment.
	if old, err := netlink.LinkByName(host); err == nil {
		_ = netlink.LinkDel(old)
	}
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: host}, PeerName: "eth0", PeerNamespace: netlink.NsFd(ns)}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("netns: veth %s: %w", host, err)
	}
	here, err := netlink.LinkByName(host)
	if err != nil {
		return fmt.Errorf("netns: veth %s: %w", host, err)
	}
	// The host side is the gateway (every pair's holds it: what leaves
	// here for a joined namespace comes from it, unless a process binds
	// another address), and passes on what one namespace sends another.
	if err := netlink.AddrAdd(here, &netlink.Addr{IPNet: prefixNet(netip.PrefixFrom(gateway, 32)), Scope: int(netlink.SCOPE_LINK)}); err != nil {
		return fmt.Errorf("netns: the gateway on %s: %w", host, err)
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("netns: %w", err)
	}
	if err := netlink.LinkSetUp(here); err != nil {
		return fmt.Errorf("netns: veth %s up: %w", host, err)
	}
	if err := netlink.RouteReplace(&netlink.Route{LinkIndex: here.Attrs().Index, Dst: prefixNet(netip.PrefixFrom(ip, ip.BitLen())),
		Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("netns: route %s to %s: %w", ip, host, err)
	}
	return configureJoined(ns, ip)
}

// configureJoined sets the joined namespace up: lo and eth0 up, ip/32 on
// eth0, the gateway on the link and the default route through it.
func configureJoined(ns vnetns.NsHandle, ip netip.Addr) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netns: into the joined namespace: %w", err)
	}
	defer h.Close()
	for _, name := range []string{"lo", "eth0"} {
		l, err := h.LinkByName(name)
		if err != nil {
			return err
		}
		if err := h.LinkSetUp(l); err != nil {
			return err
		}
	}
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: prefixNet(netip.PrefixFrom(ip, ip.BitLen()))}); err != nil {
		return fmt.Errorf("netns: address %s: %w", ip, err)
	}
	gw := net.IP(gateway.AsSlice())
	if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: prefixNet(netip.PrefixFrom(gateway, 32)), Scope: netlink.SCOPE_LINK}); err != nil {
		return fmt.Errorf("netns: route to the gateway: %w", err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: gw}); err != nil {
		return fmt.Errorf("netns: default route: %w", err)
	}
	return nil
}
