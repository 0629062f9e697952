package netns

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// The whole test binary runs in a namespace of its own, as the e2e tests
// will.
func TestMain(m *testing.M) {
	if os.Getenv(joinedEnv) != "" {
		serveJoined()
		return
	}
	Main(m.Run, netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("fd00:10::/48"))
}

// A load balancer's address and port 80 are bindable without root, and
// reachable, in the namespace; the host's are not seen there.
func TestAddressesAreLocal(t *testing.T) {
	if !Inside() {
		t.Fatal("the test runs outside the namespace")
	}
	for _, addr := range []string{"203.0.113.7:80", "[fd00:10::7]:443"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("bind %s: %v", addr, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Host) })}
		go func() { _ = srv.Serve(l) }() // ends with Close
		t.Cleanup(func() { _ = srv.Close() })
		res, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("get %s: %v", addr, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(body) != addr {
			t.Fatalf("%s answered %q", addr, body)
		}
	}
	// Outside the prefixes nothing is local: a pool's neighbour is not.
	if l, err := net.Listen("tcp", "203.0.114.1:80"); err == nil {
		l.Close()
		t.Fatal("an address outside the prefixes is bindable")
	}
	// The namespace has only its loopback: no route off the machine.
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) != 1 || ifs[0].Name != "lo" {
		t.Fatalf("interfaces in the namespace: %v %v", ifs, err)
	}
}

// joinedEnv makes the test binary the process TestJoin joins: it answers
// on every address of its own namespace, port 3000, with the address it
// was reached at.
const joinedEnv = "NETNS_TEST_JOINED"

func serveJoined() {
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
	})}
	l, err := net.Listen("tcp", ":3000")
	if err != nil {
		os.Exit(3)
	}
	_ = srv.Serve(l)
}

// A process in a network namespace of its own, joined at a pod's IP by a
// veth pair, answers there, binding every address of its own namespace.
func TestJoin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for i, ip := range []string{"10.244.0.9", "10.244.1.7"} {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), joinedEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if err := Join(cmd.Process.Pid, netip.MustParseAddr(ip), fmt.Sprint("pod-", i)); err != nil {
			t.Fatal(err)
		}
		var body []byte
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := http.Get("http://" + ip + ":3000/")
			if err == nil {
				body, _ = io.ReadAll(res.Body)
				res.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", ip, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if string(body) != ip+":3000" {
			t.Fatalf("%s answered as %q", ip, body)
		}
	}
}
