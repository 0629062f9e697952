package dataplane_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// Planes swap whole: requests to a listener an apply leaves alone never
// fail while other listeners, rules and load balancers come and go, on
// kept-alive connections and new ones alike.
func TestSwapUnderLoad(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	httpBackend(t, "10.0.0.2:30080", "a2")
	go echo.ServeTCP(listen(t, "tcp", "10.0.0.1:30090"), "")
	web := exampleapi.Listener{Protocol: "http", Port: 80, TargetPort: 30080}
	own := []dataplane.Target{target("i-1", "10.0.0.1"), target("i-2", "10.0.0.2")}
	plane := func(i int) *dataplane.Plane {
		lb := dataplane.LoadBalancer{LoadBalancer: newLB("lb-1", []exampleapi.Listener{web}, nil), Addrs: []netip.Addr{lbAddr}, Own: own}
		p := &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{lb}}
		if i%2 == 1 { // an apply adds a listener with rules, and another load balancer
			p.LoadBalancers[0].Listeners = append(p.LoadBalancers[0].Listeners, exampleapi.Listener{Protocol: "http", Port: 8080, TargetPort: 30080})
			p.LoadBalancers[0].Rules = []exampleapi.Rule{{ListenerPort: 8080, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/v" + itoa(i),
				Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}}}}
			p.LoadBalancers[0].Pools = map[string][]dataplane.Target{"tp-a": own[:1]}
			p.LoadBalancers = append(p.LoadBalancers, dataplane.LoadBalancer{
				LoadBalancer: newLB("lb-9", []exampleapi.Listener{{Protocol: "tcp", Port: 9000, TargetPort: 30090}}, nil),
				Addrs:        []netip.Addr{netip.MustParseAddr("203.0.113.11")}, Own: own[:1]})
		}
		return p
	}
	s := start(t, plane(0))

	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		c := &http.Client{Timeout: 5 * time.Second}
		if w%2 == 0 {
			c = noRedirects // a connection per request
		}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, err := status(c, "http://203.0.113.10/")
				if err == nil && code != http.StatusOK {
					err = errStatus(code)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				ok.Add(1)
			}
		})
	}
	for i := 1; i <= 199; i++ {
		if err := s.Swap(plane(i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 || ok.Load() < 100 {
		t.Fatalf("%d requests failed (first: %v), %d answered, across 199 swaps", failed.Load(), firstErr.Load(), ok.Load())
	}
	// The last plane's additions serve.
	if res, a := get(t, noRedirects, "http://203.0.113.10:8080/v199/x", "shop"); res.StatusCode != http.StatusOK || a.Pod != "a1" {
		t.Fatalf("the added listener: %d %q", res.StatusCode, a.Pod)
	}
	if got := s.Listening(); !slices.Equal(got, []string{"http://203.0.113.10:80", "http://203.0.113.10:8080", "tcp://203.0.113.11:9000"}) {
		t.Fatalf("listening on %v", got)
	}
}

type errStatus int

func (e errStatus) Error() string { return "status " + itoa(int(e)) }

// A draining target takes no new connection and keeps its open ones; they
// are closed when its drain ends. A target removed from a load balancer
// without a pool (no drain) has them closed at once, and a removed
// listener stops taking connections while those it relays go on.
func TestDraining(t *testing.T) {
	go echo.ServeTCP(listen(t, "tcp", "10.0.0.1:30070"), "i-1\n")
	go echo.ServeTCP(listen(t, "tcp", "10.0.0.2:30070"), "i-2\n")
	tcp := exampleapi.Listener{Protocol: "tcp", Port: 7000, TargetPort: 30070}
	plane := func(own []dataplane.Target, draining ...string) *dataplane.Plane {
		lb := dataplane.LoadBalancer{LoadBalancer: newLB("lb-1", []exampleapi.Listener{tcp}, nil), Addrs: []netip.Addr{lbAddr},
			Own: own, Draining: map[string]bool{}}
		for _, id := range draining {
			lb.Draining[id] = true
		}
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{lb}}
	}
	i1, i2 := target("i-1", "10.0.0.1"), target("i-2", "10.0.0.2")
	s := start(t, plane([]dataplane.Target{i1, i2}))

	first, r := dial(t, "203.0.113.10:7000")
	if who, _ := r.ReadString('\n'); who != "i-1\n" {
		t.Fatalf("the first connection went to %q", who)
	}
	if err := s.Swap(plane([]dataplane.Target{i2}, "i-1")); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		c, r := dial(t, "203.0.113.10:7000")
		if who, _ := r.ReadString('\n'); who != "i-2\n" {
			t.Fatalf("a new connection went to draining %q", who)
		}
		c.Close()
	}
	if got := roundTrip(first, r, "still there\n"); got != "still there\n" {
		t.Fatalf("the draining target's connection: %q", got)
	}
	// The drain ends: its connection closes.
	if err := s.Swap(plane([]dataplane.Target{i2})); err != nil {
		t.Fatal(err)
	}
	if got := roundTrip(first, r, "gone?\n"); got != "" {
		t.Fatalf("a connection outlived its target's drain: %q", got)
	}

	// A removed listener: no new connections, the open one goes on.
	open, r2 := dial(t, "203.0.113.10:7000")
	_, _ = r2.ReadString('\n')
	empty := plane(nil)
	empty.LoadBalancers[0].Listeners = nil
	empty.LoadBalancers[0].Own = []dataplane.Target{i2}
	if err := s.Swap(empty); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", "203.0.113.10:7000", time.Second); err == nil {
		t.Fatal("a removed listener took a connection")
	}
	if got := roundTrip(open, r2, "on\n"); got != "on\n" {
		t.Fatalf("a removed listener's open connection: %q", got)
	}
	// A target removed without a drain has its connections closed.
	empty = plane(nil)
	empty.LoadBalancers[0].Listeners = nil
	if err := s.Swap(empty); err != nil {
		t.Fatal(err)
	}
	if got := roundTrip(open, r2, "gone?\n"); got != "" {
		t.Fatalf("a connection outlived its target: %q", got)
	}
}

// dial opens a connection, closed with the test.
func dial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// roundTrip sends line and reads the echo; "" when the connection ended.
func roundTrip(c net.Conn, r *bufio.Reader, line string) string {
	if _, err := io.WriteString(c, line); err != nil {
		return ""
	}
	got, _ := r.ReadString('\n')
	return got
}

// A listener whose address this host cannot bind is reported, named, and
// bound by a later swap once it can be.
func TestBindFailureIsReported(t *testing.T) {
	s := dataplane.New(nil)
	t.Cleanup(s.Close)
	p := &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{
		LoadBalancer: newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80}}, nil),
		Addrs:        []netip.Addr{netip.MustParseAddr("192.0.2.1")},
	}}}
	err := s.Swap(p)
	if err == nil || !strings.Contains(err.Error(), "http://192.0.2.1:80") {
		t.Fatalf("binding an address that is not local: %v", err)
	}
	if got := s.Listening(); len(got) != 0 {
		t.Fatalf("listening on %v", got)
	}
}

// Only clients inside a load balancer's allowed source CIDRs reach it,
// over TCP and UDP; a swap that widens them lets the others in.
func TestAllowedSources(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	udp, err := net.ListenPacket("udp", "10.0.0.1:30053")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = udp.Close() })
	go echo.ServeUDP(udp, "")
	plane := func(cidrs ...string) *dataplane.Plane {
		lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}, {Protocol: "udp", Port: 53, TargetPort: 30053}}, nil)
		lb.AllowedSourceCIDRs = cidrs
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
			Own: []dataplane.Target{target("i-1", "10.0.0.1")}}}}
	}
	from := func(ip string) (*http.Client, func() error) {
		local := netip.MustParseAddr(ip)
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(local, 0))}
		c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
		datagram := func() error {
			u, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)), net.UDPAddrFromAddrPort(netip.MustParseAddrPort("203.0.113.10:53")))
			if err != nil {
				return err
			}
			defer u.Close()
			if _, err := u.Write([]byte("hi")); err != nil {
				return err
			}
			_ = u.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err = u.Read(make([]byte, 10))
			return err
		}
		return c, datagram
	}
	s := start(t, plane("10.0.0.99/32"))
	inside, insideUDP := from("10.0.0.99")
	outside, outsideUDP := from("10.0.0.98")
	if code, err := status(inside, "http://203.0.113.10/"); err != nil || code != http.StatusOK {
		t.Fatalf("an allowed client: %d %v", code, err)
	}
	if _, err := status(outside, "http://203.0.113.10/"); err == nil {
		t.Fatal("a client outside the allowed CIDRs got an answer")
	}
	if err := insideUDP(); err != nil {
		t.Fatalf("an allowed client's datagram: %v", err)
	}
	if err := outsideUDP(); err == nil {
		t.Fatal("a datagram from outside the allowed CIDRs got an answer")
	}
	if err := s.Swap(plane("10.0.0.98/31")); err != nil {
		t.Fatal(err)
	}
	if code, err := status(outside, "http://203.0.113.10/"); err != nil || code != http.StatusOK {
		t.Fatalf("a client the swap let in: %d %v", code, err)
	}
}

// A listener whose protocol changes is served by a new socket on the same
// port, bound in the same swap.
func TestProtocolChange(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	plane := func(protocol string) *dataplane.Plane {
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{
			LoadBalancer: newLB("lb-1", []exampleapi.Listener{{Protocol: protocol, Port: 8000, TargetPort: 30080}}, nil),
			Addrs:        []netip.Addr{lbAddr}, Own: []dataplane.Target{target("i-1", "10.0.0.1")}}}}
	}
	s := start(t, plane("tcp"))
	for _, p := range []string{"http", "tcp", "http"} {
		if err := s.Swap(plane(p)); err != nil {
			t.Fatal(err)
		}
		if got := s.Listening(); !slices.Equal(got, []string{p + "://203.0.113.10:8000"}) {
			t.Fatalf("listening on %v", got)
		}
		if res, a := get(t, noRedirects, "http://203.0.113.10:8000/", "web"); res.StatusCode != http.StatusOK || a.Pod != "a1" {
			t.Fatalf("%s: %d %q", p, res.StatusCode, a.Pod)
		}
	}
}

// Round robins go on across swaps (every write to the cloud is one): a
// target is not sent the next request again because a swap came between.
func TestRoundRobinOutlivesSwaps(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	httpBackend(t, "10.0.0.2:30080", "a2")
	plane := func() *dataplane.Plane {
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{
			LoadBalancer: newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, nil),
			Addrs:        []netip.Addr{lbAddr}, Own: []dataplane.Target{target("i-1", "10.0.0.1"), target("i-2", "10.0.0.2")}}}}
	}
	s := start(t, plane())
	var pods []string
	for range 4 {
		_, a := get(t, noRedirects, "http://203.0.113.10/", "web")
		pods = append(pods, a.Pod)
		if err := s.Swap(plane()); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(pods, []string{"a1", "a2", "a1", "a2"}) {
		t.Fatalf("requests with a swap between each: %v", pods)
	}
}
