// Package freeport finds loopback TCP ports for the servers that tests and
// the demo start.
//
// A port is picked here and bound later by another process (etcd, the
// API server, PostgreSQL, the controller), so it can be taken in between.
// Ports of the kernel's ephemeral range are the source ports of every
// outgoing connection on the machine, and the tests open thousands: one of
// those took a controller's port in CI. So the ports come from below that
// range, where only another listener can take them.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the lowest port handed out: above the registered services
// a machine may run (PostgreSQL's 5432 and the like).
const lowest = 10000

// tries bounds the random picks before falling back to the kernel's.
const tries = 200

// Loopback returns n ports of 127.0.0.1 that were free a moment ago (all
// held open together, so they differ), below the ephemeral range.
func Loopback(n int) ([]int, error) {
	hi := ephemeralStart()
	var ports []int
	for range n {
		l, err := listenBelow(hi)
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// One is Loopback(1)'s port.
func One() (int, error) {
	ports, err := Loopback(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// listenBelow listens on a random free port in [lowest, hi), or, if none
// is found, on one the kernel picks.
func listenBelow(hi int) (net.Listener, error) {
	for range tries {
		if hi <= lowest {
			break
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lowest+rand.IntN(hi-lowest))))
		if err == nil {
			return l, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("freeport: no free loopback port: %w", err)
	}
	return l, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range
// (Linux's default where it cannot be read).
func ephemeralStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil {
				return lo
			}
		}
	}
	return 32768
}
