package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopback: the ports differ, lie below the ephemeral range (no
// outgoing connection takes them) and can be bound once handed out.
func TestLoopback(t *testing.T) {
	hi := ephemeralStart()
	if hi <= lowest {
		t.Fatalf("ephemeral range starts at %d: no room below it above %d", hi, lowest)
	}
	ports, err := Loopback(20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < lowest || p >= hi || seen[p] {
			t.Errorf("port %d: want distinct ports in [%d, %d)", p, lowest, hi)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Errorf("port %d handed out but not free: %v", p, err)
			continue
		}
		_ = l.Close()
	}
}

// TestListenBelowFallsBack: with no room below the range, the kernel
// picks.
func TestListenBelowFallsBack(t *testing.T) {
	l, err := listenBelow(lowest)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Addr().(*net.TCPAddr).Port == 0 {
		t.Fatal("no port")
	}
}
