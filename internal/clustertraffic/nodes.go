package clustertraffic

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/internal/relay"
	"github.com/example/cloud-provider-example/internal/sockets"
)

// nodeProxy binds every node's node ports, as kube-proxy does.
type nodeProxy struct {
	log      *slog.Logger
	nodes    corelisters.NodeLister
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	f        informers.SharedInformerFactory
	changed  chan struct{}

	mu      sync.Mutex
	sockets sockets.Set[nodePort]
	rr      map[string]int // round robin by node port
}

// nodePort is one socket of one node: a Service's node port, or its
// health check node port (health).
type nodePort struct {
	addr     netip.AddrPort
	protocol corev1.Protocol
	node     string
	health   bool
}

func newNodeProxy(log *slog.Logger, f informers.SharedInformerFactory) *nodeProxy {
	return &nodeProxy{log: log, f: f, changed: make(chan struct{}, 1),
		nodes: f.Core().V1().Nodes().Lister(), services: f.Core().V1().Services().Lister(),
		slices: f.Discovery().V1().EndpointSlices().Lister(),
		rr:     map[string]int{}}
}

// watch asks for a reconcile on every change of nodes and Services (what
// is bound); endpoints are read when a connection comes.
func (n *nodeProxy) watch() error {
	poke := func(any) {
		select {
		case n.changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke}
	for _, inf := range []cache.SharedIndexInformer{
		n.f.Core().V1().Nodes().Informer(), n.f.Core().V1().Services().Informer(), n.f.Discovery().V1().EndpointSlices().Informer(),
	} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	return nil
}

func (n *nodeProxy) run(ctx context.Context) {
	for {
		n.reconcile()
		select {
		case <-ctx.Done():
			return
		case <-n.changed:
		case <-time.After(time.Second): // a bind that failed is tried again
		}
	}
}

// want is every node port of every node.
func (n *nodeProxy) want() map[nodePort]bool {
	out := map[nodePort]bool{}
	nodes, _ := n.nodes.List(labels.Everything())
	svcs, _ := n.services.List(labels.Everything())
	for _, node := range nodes {
		ip, ok := internalIP(node)
		if !ok {
			continue
		}
		for _, svc := range svcs {
			if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
				continue
			}
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					out[nodePort{netip.AddrPortFrom(ip, uint16(p.NodePort)), p.Protocol, node.Name, false}] = true
				}
			}
			if local(svc) && svc.Spec.HealthCheckNodePort != 0 {
				out[nodePort{netip.AddrPortFrom(ip, uint16(svc.Spec.HealthCheckNodePort)), corev1.ProtocolTCP, node.Name, true}] = true
			}
		}
	}
	return out
}

// reconcile binds the node ports wanted and closes the others.
func (n *nodeProxy) reconcile() {
	want := n.want()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sockets.Reconcile(want, n.bind, func(k nodePort, err error) {
		n.log.Info("node proxy: cannot bind", "node", k.node, "addr", k.addr.String(), "protocol", k.protocol, "err", err)
	})
}

func (n *nodeProxy) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sockets.CloseAll()
}

// bind opens k's socket and serves it.
func (n *nodeProxy) bind(k nodePort) (func(), error) {
	switch {
	case k.health:
		ln, err := net.Listen("tcp", k.addr.String())
		if err != nil {
			return nil, err
		}
		srv := &http.Server{Handler: n.healthHandler(k), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }() // ends with Close
		return func() { _ = srv.Close() }, nil
	case k.protocol == corev1.ProtocolUDP:
		pc, err := net.ListenPacket("udp", k.addr.String())
		if err != nil {
			return nil, err
		}
		go n.serveUDP(k, pc)
		return func() { _ = pc.Close() }, nil
	default:
		ln, err := net.Listen("tcp", k.addr.String())
		if err != nil {
			return nil, err
		}
		go relay.Accept(ln, func(c net.Conn) { n.forward(k, c) })
		return func() { _ = ln.Close() }, nil
	}
}

// forward passes connection c of node port k to an endpoint.
func (n *nodeProxy) forward(k nodePort, c net.Conn) {
	defer c.Close()
	to, keepClient, ok := n.endpoint(k)
	if !ok {
		return // no endpoint: kube-proxy rejects the connection
	}
	up, err := dial(c.RemoteAddr(), k.addr.Addr(), keepClient, "tcp", to)
	if err != nil {
		return
	}
	defer up.Close()
	relay.Pipe(c, up)
}

// endpoint is the next ready endpoint of node port k, and whether the
// Service keeps the client's address (Local).
func (n *nodeProxy) endpoint(k nodePort) (string, bool, bool) {
	svc, port, ok := n.serviceOf(k)
	if !ok {
		return "", false, false
	}
	eps := n.ready(svc, port, k.node)
	if len(eps) == 0 {
		return "", false, false
	}
	n.mu.Lock()
	key := k.addr.String() + "/" + string(k.protocol)
	i := n.rr[key] % len(eps)
	n.rr[key] = i + 1
	n.mu.Unlock()
	return eps[i], local(svc), true
}

// serviceOf is the Service and port node port k serves.
func (n *nodeProxy) serviceOf(k nodePort) (*corev1.Service, corev1.ServicePort, bool) {
	svcs, _ := n.services.List(labels.Everything())
	for _, svc := range svcs {
		for _, p := range svc.Spec.Ports {
			if int(p.NodePort) == int(k.addr.Port()) && p.Protocol == k.protocol {
				return svc, p, true
			}
		}
	}
	return nil, corev1.ServicePort{}, false
}

// ready are the ready endpoints (ip:port) of svc's port; only those on
// node when the Service's traffic policy is Local.
func (n *nodeProxy) ready(svc *corev1.Service, port corev1.ServicePort, node string) []string {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	slices, _ := n.slices.EndpointSlices(svc.Namespace).List(sel)
	var out []string
	for _, s := range slices {
		var num int32
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil && port.Name == "" || p.Name != nil && *p.Name == port.Name) {
				num = *p.Port
			}
		}
		if num == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready || len(e.Addresses) == 0 {
				continue
			}
			if local(svc) && (e.NodeName == nil || *e.NodeName != node) {
				continue
			}
			out = append(out, net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(num))))
		}
	}
	return out
}

// healthHandler answers a Local Service's health check node port as
// kube-proxy does: 200 while the node has a ready endpoint, else 503.
func (n *nodeProxy) healthHandler(k nodePort) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		count := 0
		svcs, _ := n.services.List(labels.Everything())
		var found *corev1.Service
		for _, svc := range svcs {
			if int(svc.Spec.HealthCheckNodePort) == int(k.addr.Port()) {
				found = svc
			}
		}
		if found != nil {
			for _, p := range found.Spec.Ports {
				count += len(n.ready(found, p, k.node))
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if count == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		body := map[string]any{"localEndpoints": count}
		if found != nil {
			body["service"] = map[string]string{"namespace": found.Namespace, "name": found.Name}
		}
		_ = json.NewEncoder(w).Encode(body)
	})
}

// serveUDP relays node port k's datagrams, a flow per client.
func (n *nodeProxy) serveUDP(k nodePort, pc net.PacketConn) {
	relay.Datagrams(pc, func(from net.Addr) (net.Conn, func()) {
		to, keep, ok := n.endpoint(k)
		if !ok {
			return nil, nil
		}
		f, err := dial(from, k.addr.Addr(), keep, "udp", to)
		if err != nil {
			return nil, nil
		}
		return f, nil
	})
}

// internalIP is node's InternalIP.
func internalIP(node *corev1.Node) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

// local tells whether svc keeps external traffic on the node it reaches.
func local(svc *corev1.Service) bool {
	return svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// dial dials an endpoint: from the client's own address where the
// Service keeps it (Local), else from the node's, as kube-proxy
// masquerades what it sends to another node's pod.
func dial(client net.Addr, node netip.Addr, keepClient bool, network, to string) (net.Conn, error) {
	if !keepClient {
		client = net.TCPAddrFromAddrPort(netip.AddrPortFrom(node, 0))
	}
	return relay.DialFrom(client, network, to, 5*time.Second)
}
