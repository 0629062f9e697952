// Package netns runs a program inside a user and network namespace of its
// own, where the Example cloud's addresses are local: a load balancer's
// 203.0.113.x, a node's, a pod's. There a process binds them (ports 80
// and 443 too) without root, nothing reaches the network beyond the
// machine, and nothing the run binds touches the host's
// (docs/adr/0023-the-data-plane.md).
//
// The program re-executes itself (Run, first thing in main or TestMain):
// the child is mapped to root in its user namespace, brings its loopback
// up and routes each prefix local to it (an AnyIP route, as `ip route add
// local <prefix> dev lo` does).
package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/vishvananda/netlink"
)

// insideEnv marks the re-executed child.
const insideEnv = "EXAMPLE_NETNS"

// Inside tells whether this process runs in a namespace Run made.
func Inside() bool { return os.Getenv(insideEnv) != "" }

// ErrRefused is a host that does not let this user make namespaces.
var ErrRefused = errors.New("this host refuses unprivileged user namespaces: " +
	"run `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (Ubuntu 24.04 and later) or " +
	"`sysctl -w user.max_user_namespaces=15000`, or run as root")

// Run re-executes the program inside a new user and network namespace
// with prefixes local, and returns its exit code: the caller exits with
// it. Inside such a namespace already, it sets the network up and
// returns inside true: the caller goes on.
func Run(prefixes ...netip.Prefix) (code int, inside bool, err error) {
	if Inside() {
		return 0, true, setUp(prefixes)
	}
	self, err := os.Executable()
	if err != nil {
		return 1, false, fmt.Errorf("netns: the program's own path: %w", err)
	}
	cmd := exec.Command(self, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), insideEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL, // the namespace ends with its parent
	}
	if os.Geteuid() == 0 {
		// Root maps every user as itself, so what the program runs as
		// another user (PostgreSQL as postgres or nobody: testpg) still
		// can; anyone else is mapped to root alone.
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		cmd.SysProcAttr.UidMappings, cmd.SysProcAttr.GidMappings = all, all
		cmd.SysProcAttr.GidMappingsEnableSetgroups = true
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.ENOSPC) {
			return 1, false, fmt.Errorf("netns: %w (%v)", ErrRefused, err)
		}
		return 1, false, fmt.Errorf("netns: start %s: %w", self, err)
	}
	// The namespace's program stops as it would have been stopped.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	waited := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-signals:
				_ = cmd.Process.Signal(sig)
			case <-waited:
				return
			}
		}
	}()
	err = cmd.Wait()
	signal.Stop(signals)
	close(waited)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), false, nil
	}
	if err != nil {
		return 1, false, fmt.Errorf("netns: %s: %w", self, err)
	}
	return 0, false, nil
}

// Main runs main inside a namespace Run makes, prefixes local, and exits
// with its code (or with Run's failure, said on stderr): what a TestMain
// calls, as netns.Main(m.Run, prefixes...).
func Main(main func() int, prefixes ...netip.Prefix) {
	code, inside, err := Run(prefixes...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if inside {
		code = main()
	}
	os.Exit(code)
}

// setUp brings the loopback up and routes prefixes local to it.
func setUp(prefixes []netip.Prefix) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("netns: the loopback: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("netns: bring the loopback up: %w", err)
	}
	for _, p := range prefixes {
		if p.Addr().Is6() {
			// IPv6 binds only addresses on an interface, not those a
			// local route makes local: let it bind any (of this
			// namespace only).
			if err := os.WriteFile("/proc/sys/net/ipv6/ip_nonlocal_bind", []byte("1"), 0o644); err != nil {
				return fmt.Errorf("netns: IPv6 binds of %s: %w", p, err)
			}
		}
		route := &netlink.Route{
			LinkIndex: lo.Attrs().Index,
			Dst:       prefixNet(p),
			Type:      syscall.RTN_LOCAL,
			Table:     syscall.RT_TABLE_LOCAL,
			Scope:     netlink.SCOPE_HOST,
		}
		if err := netlink.RouteReplace(route); err != nil {
			return fmt.Errorf("netns: route %s local: %w", p, err)
		}
	}
	return nil
}
