// Package objectref is the one identity of an object the controller plans:
// a Service, a load balancer group, a Gateway, the cluster's route set or
// its target pools. Every other spelling of an object derives from a Ref: the
// engine's key, the state object's kind, the examplectl argument, the
// owner tag a group's load balancer carries in the cloud, and the words
// people read. A new kind of object is taught here, once.
package objectref

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Kinds of object (Ref.Kind), as approvals, records and policy rules name
// them.
const (
	KindService = "Service"
	// KindServiceGroup is a load balancer group: the Services sharing
	// one load balancer.
	KindServiceGroup = "ServiceGroup"
	// KindGateway is a Gateway API Gateway: one load balancer, its
	// routes' rules.
	KindGateway = "Gateway"
	// KindAddress is a reserved address of a namespace, in a workspace
	// of its own (docs/addresses.md); its name is its cloud name.
	KindAddress     = "Address"
	KindRouteSet    = "RouteSet"
	KindTargetPools = "TargetPools"
	// KindPodPool is the pod targets of one Service port, a target pool
	// of type ip in a workspace of its own (ADR 24); its name is
	// PodPoolName's.
	KindPodPool = "PodPool"
	// KindRuleSet is one route's rules on a Gateway's load balancer, a
	// rule set of the cloud in a workspace of its own (ADR 28); its
	// namespace is the Gateway's, its name RuleSetName's. Not the route
	// set, which is the cluster's network routes.
	KindRuleSet = "RuleSet"
	// KindWorkspace is a state workspace known only by its name: what
	// the runner acts on by itself (a stale lock forced open).
	KindWorkspace = "Workspace"
	// KindHTTPRoute is a Gateway API HTTPRoute: not planned itself (its
	// Gateway is), but what makes references (tenancy); so are GRPCRoutes,
	// TLSRoutes, TCPRoutes and UDPRoutes.
	KindHTTPRoute = "HTTPRoute"
	KindGRPCRoute = "GRPCRoute"
	KindTLSRoute  = "TLSRoute"
	KindTCPRoute  = "TCPRoute"
	KindUDPRoute  = "UDPRoute"
	// KindListenerSet is a Gateway API ListenerSet: listeners a team adds
	// to a Gateway.
	KindListenerSet = "ListenerSet"
	// KindBackendTLSPolicy is a Gateway API BackendTLSPolicy: not planned
	// itself; what its references are decided from.
	KindBackendTLSPolicy = "BackendTLSPolicy"
)

// ClusterName is the name of the cluster's one route set and of its one
// set of target pools.
const ClusterName = "cluster"

// Ref names an object. It is also the object of a PlanApproval or a
// StateUnlock (reviewapi), so its JSON form is part of that API.
type Ref struct {
	// Kind is one of the Kind constants.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// UID is the Service's or Gateway's uid: an approval of an earlier
	// one of the same name approves nothing. Empty for the other kinds.
	UID string `json:"uid,omitempty"`
}

// Service is svc's identity.
func Service(svc *corev1.Service) Ref {
	return Ref{Kind: KindService, Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
}

// Group is the identity of load balancer group name in namespace.
func Group(namespace, name string) Ref {
	return Ref{Kind: KindServiceGroup, Namespace: namespace, Name: name}
}

// Gateway is the identity of Gateway name in namespace, of uid.
func Gateway(namespace, name, uid string) Ref {
	return Ref{Kind: KindGateway, Namespace: namespace, Name: name, UID: uid}
}

// The cluster's objects of their own kind, one each.
var (
	RouteSet    = Ref{Kind: KindRouteSet, Name: ClusterName}
	TargetPools = Ref{Kind: KindTargetPools, Name: ClusterName}
)

// Address is the identity of reserved address name (its cloud name) of
// namespace.
func Address(namespace, name string) Ref {
	return Ref{Kind: KindAddress, Namespace: namespace, Name: name}
}

// PodPool is the identity of the pod pool of port (number and protocol)
// of Service service in namespace.
func PodPool(namespace, service string, port int32, protocol corev1.Protocol) Ref {
	return Ref{Kind: KindPodPool, Namespace: namespace, Name: PodPoolName(service, port, protocol)}
}

// PodPoolName is a pod pool's name: the Service's, its port and its
// protocol ("web-80-tcp"), read from the right, so no two ports of two
// Services share one.
func PodPoolName(service string, port int32, protocol corev1.Protocol) string {
	if protocol == "" {
		protocol = corev1.ProtocolTCP
	}
	return fmt.Sprintf("%s-%d-%s", service, port, strings.ToLower(string(protocol)))
}

// ParsePodPoolName reads a PodPoolName back.
func ParsePodPoolName(name string) (service string, port int32, protocol corev1.Protocol, ok bool) {
	rest, proto, ok := cutLast(name)
	if !ok {
		return "", 0, "", false
	}
	service, num, ok := cutLast(rest)
	if !ok {
		return "", 0, "", false
	}
	n, err := strconv.ParseInt(num, 10, 32)
	if err != nil || n < 1 || n > 65535 || service == "" {
		return "", 0, "", false
	}
	switch p := corev1.Protocol(strings.ToUpper(proto)); p {
	case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		return service, int32(n), p, true
	}
	return "", 0, "", false
}

// cutLast cuts s around its last "-".
func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndex(s, "-")
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// Workspace names a state workspace by its name alone.
func Workspace(name string) Ref { return Ref{Kind: KindWorkspace, Name: name} }

// groupPrefix begins a group's key, its examplectl argument and its owner
// tag; gatewayPrefix a Gateway's key and examplectl argument.
const (
	groupPrefix   = "group:"
	gatewayPrefix = "gateway:"
	addressPrefix = "address:"
	podPoolPrefix = "pods:"
	ruleSetPrefix = "ruleset:"
)

// spelling is how a kind is written where it is not its Kind constant.
type spelling struct {
	// prefix begins the key and examplectl argument of a namespaced
	// kind other than Service.
	prefix string
	// state is StateKind: part of every state's name, never to change.
	state string
	// arg is a cluster object's examplectl argument; "" for a kind with
	// namespaced objects.
	arg string
	// words name the kind for people: before ns/name, or the whole of a
	// cluster object's name.
	words string
}

// spellings has one row a kind; a Workspace has none (it is known only
// by its name).
var spellings = map[string]spelling{
	KindService:      {state: "service", words: "Service"},
	KindServiceGroup: {prefix: groupPrefix, state: "group", words: "load balancer group"},
	KindGateway:      {prefix: gatewayPrefix, state: "gateway", words: "Gateway"},
	KindAddress:      {prefix: addressPrefix, state: "address", words: "address"},
	KindPodPool:      {prefix: podPoolPrefix, state: "podpool", words: "pod pool"},
	KindRuleSet:      {prefix: ruleSetPrefix, state: "ruleset", words: "rule set"},
	KindRouteSet:     {state: "routes", arg: "routes", words: "the route set"},
	KindTargetPools:  {state: "targetpools", arg: "pools", words: "the target pools"},
}

// Planned are the kinds the controller plans, each object in a workspace
// of its own, sorted: what a PlanApproval or a StateUnlock may name.
func Planned() []string {
	kinds := slices.Collect(maps.Keys(spellings))
	slices.Sort(kinds)
	return kinds
}

// clusterArgs are the examplectl arguments of the cluster's objects.
var clusterArgs = func() map[string]Ref {
	m := map[string]Ref{}
	for kind, s := range spellings {
		if s.arg != "" {
			m[s.arg] = Ref{Kind: kind, Name: ClusterName}
		}
	}
	return m
}()

// Key is the object's key among the engine's objects: unique per object
// in one controller, stable for its life (a Service's uid is left out,
// so a Service created again under its name takes its predecessor's key).
func (r Ref) Key() string {
	if s := spellings[r.Kind]; s.arg != "" {
		return s.state // one each
	}
	return r.Arg()
}

// groupName is a group's key, examplectl argument and owner tag.
func (r Ref) groupName() string { return groupPrefix + r.Namespace + "/" + r.Name }

// StateKind is the object's kind in its workspace name ({{.Kind}} in the
// state key template): part of every state's name, never to change.
func (r Ref) StateKind() string {
	if s, ok := spellings[r.Kind]; ok {
		return s.state
	}
	return spellings[KindService].state
}

// OwnerTag is the value of the cloud's Service uid owner tag on what the
// object creates: a Service's uid, or for a group a value no uid takes
// (so no Service can adopt a group's load balancer, and no group a
// Service's). Stored in the cloud: never to change.
func (r Ref) OwnerTag() string {
	if r.Kind == KindServiceGroup {
		return r.groupName()
	}
	return r.UID
}

// Arg is the object as examplectl's commands take it: ns/name,
// group:ns/name, gateway:ns/name, routes or pools.
func (r Ref) Arg() string {
	s := spellings[r.Kind]
	if s.arg != "" {
		return s.arg
	}
	return s.prefix + r.Namespace + "/" + r.Name
}

// Args is the usage of an object argument.
const Args = "<ns/service | service [-n ns] | group:ns/name | group:name [-n ns] | gateway:ns/name | gateway:name [-n ns] | address:ns/name | address:name [-n ns] | pods:ns/service-port-protocol | ruleset:ns/gateway:kind:ns:route | routes | pools>"

// Parse turns an examplectl argument into the object it names: ns/name or
// name (in namespace, else defaultNamespace) is a Service, group:... a
// group; routes and pools, without a namespace, the cluster's objects (a
// Service named routes: -n ns routes, or ns/routes). The uid is left
// empty.
func Parse(arg, namespace, defaultNamespace string) (Ref, error) {
	if c, ok := clusterArgs[arg]; ok && namespace == "" {
		return c, nil
	}
	kind := KindService
	for k, s := range spellings {
		if rest, ok := strings.CutPrefix(arg, s.prefix); ok && s.prefix != "" {
			kind, arg = k, rest
		}
	}
	ns, name := namespace, arg
	if before, after, ok := strings.Cut(arg, "/"); ok {
		if namespace != "" && namespace != before {
			return Ref{}, fmt.Errorf("%s names namespace %s, but -n is %s", arg, before, namespace)
		}
		ns, name = before, after
	}
	if ns == "" {
		ns = defaultNamespace
	}
	if name == "" || ns == "" || strings.Contains(name, "/") || strings.HasPrefix(arg, "/") {
		what := "a Service"
		if kind != KindService {
			what, arg = "a "+spellings[kind].words, spellings[kind].prefix+arg
		}
		return Ref{}, fmt.Errorf("%q is not %s: want %s", arg, what, Args)
	}
	return Ref{Kind: kind, Namespace: ns, Name: name}, nil
}

// Describe names the object for people: "Service shop/web", "load
// balancer group shop/front", "Gateway infra/gw", "the route set", "the
// target pools".
func (r Ref) Describe() string {
	s, ok := spellings[r.Kind]
	switch {
	case !ok:
		return r.String()
	case s.arg != "":
		return s.words
	}
	return s.words + " " + r.Namespace + "/" + r.Name
}

// String is the object in audit lines and logs: "Service shop/web",
// "RouteSet cluster".
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Matches tells whether an approval or unlock naming r names other: same
// kind, namespace, name and uid.
func (r Ref) Matches(other Ref) bool { return r == other }
