package annotations

import (
	"fmt"
	"strconv"
	"time"
)

// Annotation names. Each is described by its entry in Definitions.
const (
	LBType                          Name = Prefix + "type"
	LBInternal                      Name = Prefix + "internal"
	LBAlgorithm                     Name = Prefix + "algorithm"
	LBProxyProtocol                 Name = Prefix + "proxy-protocol"
	LBName                          Name = Prefix + "name"
	LBAdoptID                       Name = Prefix + "adopt-id"
	LBAddress                       Name = Prefix + "address"
	LBAddressKeep                   Name = Prefix + "address-keep"
	LBDeletionPolicy                Name = Prefix + "deletion-policy"
	LBNodeSelector                  Name = Prefix + "node-selector"
	LBApplyPolicy                   Name = Prefix + "apply-policy"
	LBGroup                         Name = Prefix + "group"
	LBHealthCheckProtocol           Name = Prefix + "health-check-protocol"
	LBHealthCheckPort               Name = Prefix + "health-check-port"
	LBHealthCheckPath               Name = Prefix + "health-check-path"
	LBHealthCheckInterval           Name = Prefix + "health-check-interval"
	LBHealthCheckTimeout            Name = Prefix + "health-check-timeout"
	LBHealthCheckHealthyThreshold   Name = Prefix + "health-check-healthy-threshold"
	LBHealthCheckUnhealthyThreshold Name = Prefix + "health-check-unhealthy-threshold"
	LBHTTPPorts                     Name = Prefix + "http-ports"
	LBHTTPSPorts                    Name = Prefix + "https-ports"
	LBTLSSecrets                    Name = Prefix + "tls-secrets"
	LBCertificateIDs                Name = Prefix + "certificate-ids"
	LBRedirectHTTPToHTTPS           Name = Prefix + "redirect-http-to-https"
	LBStickySessions                Name = Prefix + "sticky-sessions"
	LBStickySessionsCookieName      Name = Prefix + "sticky-sessions-cookie-name"
	LBStickySessionsCookieTTL       Name = Prefix + "sticky-sessions-cookie-ttl"
	LBDeregistrationDelay           Name = Prefix + "deregistration-delay"
	LBTargetType                    Name = Prefix + "target-type"

	// Retired annotations: read only to tell people what replaced them.
	LBApprovePlan Name = Prefix + "approve-plan"
	LBForceUnlock Name = Prefix + "force-unlock"

	// LegacySourceRanges is Kubernetes' own annotation, read for
	// compatibility when spec.loadBalancerSourceRanges is empty.
	LegacySourceRanges Name = "service.beta.kubernetes.io/load-balancer-source-ranges"
)

// Defaults the renderer applies to unset annotations.
const (
	DefaultType                = "lb-small"
	DefaultAlgorithm           = "round_robin"
	DefaultHealthCheckPath     = "/healthz"
	DefaultHealthCheckInterval = 10 * time.Second
	DefaultHealthCheckTimeout  = 5 * time.Second
	DefaultHealthyThreshold    = 3
	DefaultUnhealthyThreshold  = 3
	DefaultStickyCookieName    = "EXAMPLE_LB"
	DefaultStickyCookieTTL     = time.Hour
)

// Accepted values of the enumerations, as the API spells them.
var (
	Types                = []string{"lb-small", "lb-medium", "lb-large"}
	Algorithms           = []string{"round_robin", "least_connections", "source_ip"}
	HealthCheckProtocols = []string{"tcp", "http", "https"}
	ApplyPolicies        = []string{string(ApplyAuto), string(ApplyManual), string(ApplyPlanOnly)}
	DeletionPolicies     = []string{DeletionDelete, DeletionRetain}
	TargetTypes          = []string{TargetTypeNode, TargetTypeIP}
)

// Target types (LBTargetType): what the load balancer forwards to.
const (
	// TargetTypeNode forwards to the nodes' node ports (kube-proxy picks
	// the pod).
	TargetTypeNode = "node"
	// TargetTypeIP forwards to the pods directly, each Service port through
	// a pod pool of its own (docs/adr/0024-pod-targets.md).
	TargetTypeIP = "ip"
)

// Definition documents one annotation and knows how to parse it.
type Definition struct {
	Name Name
	Kind Kind
	// Accepted lists an enum's values; for other kinds it holds one phrase
	// describing the accepted form.
	Accepted    []string
	Default     string
	Description string
	Example     string
	parse       func(v string, lb *LoadBalancer) error
}

// Definitions is the one table of every annotation, in documentation order.
var Definitions = []Definition{
	{
		Name: LBType, Kind: KindEnum, Accepted: Types,
		Default:     DefaultType + " (or the cloud config's defaultLoadBalancerType)",
		Description: "Size of the load balancer. Changes in place.",
		Example:     "lb-medium",
		parse:       func(v string, lb *LoadBalancer) error { return oneOf(v, Types, &lb.Type) },
	},
	flag(LBInternal, "Give the load balancer an internal address (10.255.0.0/16) instead of a public one. "+
		"Changing it replaces the load balancer, which gets new addresses.",
		func(lb *LoadBalancer) *bool { return &lb.Internal }),
	{
		Name: LBAlgorithm, Kind: KindEnum, Accepted: Algorithms, Default: DefaultAlgorithm,
		Description: "How connections are spread over the nodes.",
		Example:     "least_connections",
		parse:       func(v string, lb *LoadBalancer) error { return oneOf(v, Algorithms, &lb.Algorithm) },
	},
	flag(LBProxyProtocol, "Send the PROXY protocol header on every TCP listener, so the pods see the client address. "+
		"The application must expect it.",
		func(lb *LoadBalancer) *bool { return &lb.ProxyProtocol }),
	{
		Name: LBName, Kind: KindString,
		Accepted: []string{"1-253 letters, digits, '.', '_' and '-', starting with a letter or digit; unique per region"},
		Default:  "k8s-<hash of cluster id and Service UID> (32 characters)",
		Description: "Name of the load balancer in the cloud (in a group, the primary's name is the group's). Changing it replaces the load balancer, which gets new addresses. " +
			"Refused (event `ReferenceRefused`, docs/tenancy.md) when it has the default form (k8s- and 28 hex digits) but is not this Service's " +
			"nor its group's default, or when a load balancer of another namespace or cluster has it in the region (first come, first served).",
		Example: "shop-frontend",
		parse:   parseName,
	},
	{
		Name: LBAdoptID, Kind: KindString, Accepted: []string{"a load balancer id, lb-<letters and digits>"},
		Default: "none: a new load balancer is created",
		Description: "Adopt an existing load balancer instead of creating one: the rendered root module imports it " +
			"(an `import` block) and the next apply makes it match the Service. Refused (event `ReferenceRefused`, docs/tenancy.md) unless the " +
			"cloud config allows adoption for the Service's namespace (`loadBalancer.adoption`), and only a load balancer " +
			"whose tags show no other owner (no other Service's uid, no other cluster id) can be adopted (else event `ReferenceRefused`, in the same words as a load balancer that does not exist): the controller " +
			"checks before rendering, the provider again on import. The plan that imports it waits for a reviewer's approval " +
			"(default policy rule `load-balancer-import`). Requires " + string(LBName) + " set to the " +
			"load balancer's current name (and matching internal and IP families), since those cannot change in place. " +
			"Once adopted, the load balancer is managed, and deleted with the Service, like any other.",
		Example: "lb-0123456789abcdef",
		parse:   parseAdoptID,
	},
	{
		Name: LBAddress, Kind: KindString, Accepted: []string{"a reserved address id, addr-<letters and digits>, or its IP"},
		Default: "none: the load balancer's own address (spec.loadBalancerIP, when set, names one by IP)",
		Description: "Take a reserved address of the namespace (docs/addresses.md): the load balancer gets its IP, and the address outlives " +
			"the Service. While another Service that names it holds it, the Service waits (event `AddressHeld`); the oldest waiting " +
			"takes it when the holder lets go, in one plan. An address of another namespace needs that namespace's ReferenceGrant " +
			"(else event `ReferenceRefused`, docs/tenancy.md). spec.loadBalancerIP set to another IP is refused. Not for internal load balancers " +
			"nor for members of a load balancer group. The Service shows the reserved IP once its load balancer holds it.",
		Example: "addr-0123456789abcdef",
		parse:   parseAddress,
	},
	flag(LBAddressKeep, "Reserve an address for the Service when it names none, and keep its address when the Service is deleted: "+
		"released to the namespace (a later Service naming it by id or IP gets the same IP), never to the region. "+
		"Reserved addresses count against the namespace's cap (cloud config loadBalancer.addresses.maxPerNamespace, default 5): past it, event "+
		"`AddressCapReached`. Not for internal load balancers nor for members of a load balancer group.",
		func(lb *LoadBalancer) *bool { return &lb.AddressKeep }),
	{
		Name: LBDeletionPolicy, Kind: KindEnum, Accepted: DeletionPolicies, Default: DeletionDelete,
		Description: "What becomes of the load balancer when the Service no longer needs it (deleted, or no longer of type LoadBalancer): " +
			"delete destroys it; retain hands it over: one plan removes it and its certificates from the controller's state " +
			"(removed blocks, destroy = false) and the cloud keeps them, serving, for a team's own Terraform (examplectl export). " +
			"A person other than the Service's editors approves that plan whatever the apply policy (policy rule load-balancer-forget). " +
			"A reserved address the load balancer holds goes with it (its workspace forgotten first, reviewed the same way). Not for members of a load balancer group.",
		Example: DeletionRetain,
		parse:   func(v string, lb *LoadBalancer) error { return oneOf(v, DeletionPolicies, &lb.DeletionPolicy) },
	},
	{
		Name: LBNodeSelector, Kind: KindSelector,
		Accepted:    []string{"a Kubernetes label selector, equality- or set-based"},
		Default:     "every node",
		Description: "Only nodes matching the selector become targets. Nodes labelled node.kubernetes.io/exclude-from-external-load-balancers never do (any value but one that reads as false, as the service controller has it since Kubernetes 1.34).",
		Example:     "node-role.kubernetes.io/ingress=true,topology.kubernetes.io/zone in (ex-west-1a, ex-west-1b)",
		parse:       parseSelector,
	},
	{
		Name: LBApplyPolicy, Kind: KindEnum, Accepted: ApplyPolicies, Default: string(ApplyAuto),
		Description: "What the controller does with a changed plan: auto applies it; manual waits for a person to approve it; " +
			"plan-only only plans (a dry run).",
		Example: "manual",
		parse: func(v string, lb *LoadBalancer) error {
			var s string
			err := oneOf(v, ApplyPolicies, &s)
			lb.ApplyPolicy = ApplyPolicy(s)
			return err
		},
	},
	{
		Name: LBGroup, Kind: KindString,
		Accepted: []string{"a group name, or namespace/name for a group of another namespace; each a DNS label (RFC 1123, at most 63 characters)"},
		Default:  "none: the Service has a load balancer of its own",
		Description: "Share one load balancer with the other Services of this group: one load balancer, workspace, plan record and review per group, " +
			"with the listeners of every member, and the shared address in every member's status. The first member (its own namespace's members " +
			"first, then by creation) sets the load balancer's settings (type, internal, algorithm, name, source ranges, health check, node selector); " +
			"a member whose own differ gets the event `GroupSettingIgnored`. A port another member had first is not served (event `ListenerConflict`). " +
			"A group of another namespace is refused (event `ReferenceRefused`) unless that namespace consents with a Gateway API ReferenceGrant (docs/tenancy.md). " +
			"The last member leaving destroys the load balancer. Joining, leaving or moving between groups: the new load balancer serves before " +
			"the old one is changed or destroyed. See docs/shared-load-balancers.md.",
		Example: "storefront",
		parse:   parseGroup,
	},
	{
		Name: LBHTTPPorts, Kind: KindPortList,
		Accepted: []string{"comma-separated Service port numbers (spec.ports[].port, 1-65535), each a TCP port of the Service, none twice"},
		Default:  "none: every port is served as tcp (or udp)",
		Description: "Serve these Service ports as http listeners: the load balancer forwards HTTP requests rather than connections, " +
			"which lets it redirect them to https (" + string(LBRedirectHTTPToHTTPS) + ") and pin clients with a cookie (" + string(LBStickySessions) + "). " +
			"Ports listed in neither this annotation nor " + string(LBHTTPSPorts) + " stay tcp (or udp). " +
			"Adding or removing a port changes the load balancer in place (same id and addresses).",
		Example: "80,8080",
		parse:   func(v string, lb *LoadBalancer) error { return parsePorts(v, &lb.HTTPPorts) },
	},
	{
		Name: LBHTTPSPorts, Kind: KindPortList,
		Accepted: []string{"comma-separated Service port numbers (spec.ports[].port, 1-65535), each a TCP port of the Service, none twice, none among " + string(LBHTTPPorts)},
		Default:  "none: every port is served as tcp (or udp)",
		Description: "Serve these Service ports as https listeners: TLS ends at the load balancer, which presents the certificates of " +
			string(LBTLSSecrets) + " and " + string(LBCertificateIDs) + " (at least one is required) and forwards the decrypted HTTP requests " +
			"to the Service's node ports. Ports listed in neither this annotation nor " + string(LBHTTPPorts) + " stay tcp (or udp). " +
			"Adding or removing a port changes the load balancer in place (same id and addresses).",
		Example: "443",
		parse:   func(v string, lb *LoadBalancer) error { return parsePorts(v, &lb.HTTPSPorts) },
	},
	{
		Name: LBTLSSecrets, Kind: KindList,
		Accepted: []string{"comma-separated names of Secrets of the Service's namespace (DNS-1123 subdomains), none twice; " +
			"at most " + strconv.Itoa(MaxCertificates) + " together with " + string(LBCertificateIDs)},
		Default: "none",
		Description: "Certificates for the https listeners (" + string(LBHTTPSPorts) + "), from Secrets of type kubernetes.io/tls in the Service's namespace: " +
			"tls.crt holds the PEM certificate chain (the leaf first, then the intermediates), tls.key its private key (RSA, at least 2048 bits). " +
			"Every https listener serves them all: the first Secret's certificate to clients whose SNI name matches none of the others (or who send none), " +
			"the others by SNI. The controller uploads each as a certificate of the cloud; when a Secret changes it re-reads it and uploads " +
			"the new certificate, and the load balancer is updated in place (same id and addresses). " +
			"The private key reaches Terraform only through an ephemeral resource (example_private_keys, reading the environment the controller gives it): it is never in main.tf, the state, saved plans, plan records, events or logs. " +
			"A Secret that is missing, not of type kubernetes.io/tls or malformed raises a Warning event `CertificateSecretInvalid` naming it, " +
			"and the load balancer keeps serving what it serves until the Secret is fixed. " +
			"The controller reads only the Secrets it is allowed to: bind the ClusterRole example-ccm:tls-secrets with a RoleBinding in each namespace " +
			"whose Secrets it may read (docs/certificates.md). " +
			"Uploading a key needs Terraform 1.11 or later (write-only arguments): on OpenTofu certificates are refused with the event `CertificatesUnsupported`.",
		Example: "shop-tls,shop-legacy-tls",
		parse:   parseTLSSecrets,
	},
	{
		Name: LBCertificateIDs, Kind: KindList,
		Accepted: []string{"comma-separated certificate ids, cert-<1-64 letters and digits>, none twice; " +
			"at most " + strconv.Itoa(MaxCertificates) + " together with " + string(LBTLSSecrets)},
		Default: "none",
		Description: "Certificates already in the cloud (of the load balancer's region) for the https listeners (" + string(LBHTTPSPorts) + "), " +
			"served after those of " + string(LBTLSSecrets) + ": without Secrets, the first id is the certificate for clients whose SNI name " +
			"matches none of the others. The controller only references them: it never uploads, rotates or deletes them. " +
			"Changing the list updates the load balancer in place (same id and addresses).",
		Example: "cert-0123456789abcdef",
		parse:   parseCertificateIDs,
	},
	flag(LBRedirectHTTPToHTTPS, "Every http listener ("+string(LBHTTPPorts)+") answers each request with 301 Moved Permanently to the same URL on https, "+
		"on port 443 if it is among "+string(LBHTTPSPorts)+", else on the lowest of them; a redirecting listener forwards nothing "+
		"(and has no sticky sessions). Needs "+string(LBHTTPPorts)+" and "+string(LBHTTPSPorts)+". Changes in place.",
		func(lb *LoadBalancer) *bool { return &lb.RedirectHTTPToHTTPS }),
	flag(LBStickySessions, "Cookie sticky sessions on every http and https listener (not on http listeners that redirect): the load balancer sets a cookie "+
		"on its first answer to a client and sends the client's later requests to the same node while that node is healthy, until the cookie expires. "+
		"It pins a node, not a pod: kube-proxy on the node still chooses the pod (among the node's own pods with externalTrafficPolicy Local). "+
		"Needs "+string(LBHTTPPorts)+" or "+string(LBHTTPSPorts)+". Changes in place.",
		func(lb *LoadBalancer) *bool { return &lb.StickySessions.Enabled }),
	{
		Name: LBStickySessionsCookieName, Kind: KindString,
		Accepted: []string{"1-64 letters, digits and !#$%&'*+-.^_`|~ (an RFC 6265 cookie name)"},
		Default:  DefaultStickyCookieName,
		Description: "Name of the sticky sessions cookie; pick one the application does not use. Only with " + string(LBStickySessions) + " true. " +
			"Changes in place (cookies set under the old name no longer count).",
		Example: "SHOP_LB",
		parse:   parseCookieName,
	},
	{
		Name: LBStickySessionsCookieTTL, Kind: KindDuration,
		Accepted:    []string{"whole seconds in 1s-168h (7 days), e.g. 30m, 24h, or a number of seconds"},
		Default:     DefaultStickyCookieTTL.String(),
		Description: "How long the sticky sessions cookie pins a client to a node. Only with " + string(LBStickySessions) + " true. Changes in place.",
		Example:     "24h",
		parse: func(v string, lb *LoadBalancer) error {
			return parseSeconds(v, time.Second, maxStickyCookieTTL, &lb.StickySessions.TTL)
		},
	},
	{
		Name: LBDeregistrationDelay, Kind: KindDuration,
		Accepted: []string{"whole seconds in 0s-1h, e.g. 2m, or a number of seconds"},
		Default:  "the cluster's loadBalancer.targetPools.deregistrationDelay (30s unless configured)",
		Description: "How long a node leaving the load balancer's target pool (drained, tainted for deletion, excluded, shut down or deleted) keeps the connections it has, " +
			"getting no new ones. A pool is shared by every Service of the same node selection, so it drains for the longest delay any of them asks: " +
			"a Service can lengthen a shared pool's drain, never shorten it. The ask is part of the Service's plan (output deregistration_delay_seconds): " +
			"the pool carries it only once that plan is applied, approved where the apply policy says so (docs/tenancy.md). " +
			"No effect on a Service that lists its nodes itself (target pools disabled, or no pool for its selection). " +
			"Of target type ip (" + string(LBTargetType) + "), it is how long a pod leaving the Service's pod pools keeps its connections " +
			"(the Service's own pools: applied with them, under the pools' apply policy), for every load balancer forwarding to them, Gateways' too.",
		Example: "2m",
		parse: func(v string, lb *LoadBalancer) error {
			var d time.Duration
			if err := parseSeconds(v, 0, time.Hour, &d); err != nil {
				return err
			}
			lb.DeregistrationDelay = &d
			return nil
		},
	},
	{
		Name: LBTargetType, Kind: KindEnum, Accepted: TargetTypes, Default: TargetTypeNode,
		Description: "What the load balancer forwards to. node: the Service's node ports on the nodes (kube-proxy picks the pod). " +
			"ip: the Service's ready pods directly, at their target port, so no node port is needed, the pods see the client's address and a rolling " +
			"update drains each pod: each Service port gets a pod pool, a target pool of target type ip in a Terraform workspace of its own, whose targets " +
			"follow the Service's EndpointSlices under the target pools' apply policy (loadBalancer.targetPools.applyPolicy), a rollout a few applies of it " +
			"and none of the load balancer (docs/adr/0024-pod-targets.md). Only pods of the Service's own namespace are targets: any other address its " +
			"EndpointSlices name is left out with the event `PodTargetRefused` (docs/tenancy.md). A pod whose spec names the readiness gate " +
			"`target-health.loadbalancer.example.com/<Service name>` is Ready only once the load balancer finds it healthy. The health check probes each pod " +
			"at its own port. Needs pod IPs inside the pod CIDRs the cluster's routes reach; not with " + string(LBNodeSelector) + " or " +
			string(LBHealthCheckPort) + " (which name nodes), nor for members of a load balancer group (" + string(LBGroup) + "). " +
			"Changing it changes the load balancer in place (same id and addresses).",
		Example: TargetTypeIP,
		parse:   func(v string, lb *LoadBalancer) error { return oneOf(v, TargetTypes, &lb.TargetType) },
	},
	{
		Name: LBHealthCheckProtocol, Kind: KindEnum, Accepted: HealthCheckProtocols,
		Default: "tcp; http when externalTrafficPolicy is Local, or when a health check path is set",
		Description: "Protocol of the health check: tcp opens a connection; http requests the path; " +
			"https requests it over TLS, without verifying the node's certificate. Without any health check annotation and with " +
			"externalTrafficPolicy Cluster, the node port of the Service's lowest TCP port is probed over tcp (a UDP-only Service gets no health check).",
		Example: "http",
		parse: func(v string, lb *LoadBalancer) error {
			return oneOf(v, HealthCheckProtocols, &lb.HealthCheck.Protocol)
		},
	},
	{
		Name: LBHealthCheckPort, Kind: KindInt, Accepted: []string{"1-65535"},
		Default:     "spec.healthCheckNodePort when externalTrafficPolicy is Local, else the node port of the lowest TCP port",
		Description: "Port probed on the nodes.",
		Example:     "32100",
		parse: func(v string, lb *LoadBalancer) error {
			return parseInt(v, 1, 65535, &lb.HealthCheck.Port)
		},
	},
	{
		Name: LBHealthCheckPath, Kind: KindString, Accepted: []string{"an HTTP path starting with /, without spaces or control characters"},
		Default:     DefaultHealthCheckPath + " (http and https only)",
		Description: "Path requested by an http or https health check. Setting it without " + string(LBHealthCheckProtocol) + " implies protocol http.",
		Example:     "/readyz",
		parse:       parsePath,
	},
	{
		Name: LBHealthCheckInterval, Kind: KindDuration, Accepted: []string{"whole seconds in 1s-300s, e.g. 15s, 1m, or a number of seconds"},
		Default:     DefaultHealthCheckInterval.String(),
		Description: "Time between two probes of a node. Must be longer than the timeout.",
		Example:     "15s",
		parse: func(v string, lb *LoadBalancer) error {
			return parseSeconds(v, time.Second, 300*time.Second, &lb.HealthCheck.Interval)
		},
	},
	{
		Name: LBHealthCheckTimeout, Kind: KindDuration, Accepted: []string{"whole seconds in 1s-60s, e.g. 3s, or a number of seconds"},
		Default:     DefaultHealthCheckTimeout.String(),
		Description: "How long one probe may take. Must be shorter than the interval.",
		Example:     "3s",
		parse: func(v string, lb *LoadBalancer) error {
			return parseSeconds(v, time.Second, 60*time.Second, &lb.HealthCheck.Timeout)
		},
	},
	{
		Name: LBHealthCheckHealthyThreshold, Kind: KindInt, Accepted: []string{"1-10"},
		Default:     strconv.Itoa(DefaultHealthyThreshold),
		Description: "Consecutive successful probes after which a node receives traffic.",
		Example:     "2",
		parse: func(v string, lb *LoadBalancer) error {
			return parseInt(v, 1, 10, &lb.HealthCheck.HealthyThreshold)
		},
	},
	{
		Name: LBHealthCheckUnhealthyThreshold, Kind: KindInt, Accepted: []string{"1-10"},
		Default:     strconv.Itoa(DefaultUnhealthyThreshold),
		Description: "Consecutive failed probes after which a node stops receiving traffic.",
		Example:     "5",
		parse: func(v string, lb *LoadBalancer) error {
			return parseInt(v, 1, 10, &lb.HealthCheck.UnhealthyThreshold)
		},
	},
	{
		Name: LegacySourceRanges, Kind: KindCIDRList,
		Accepted:    []string{"comma-separated IPv4 or IPv6 CIDRs"},
		Default:     "everyone may connect",
		Description: "Kubernetes' own annotation, honoured when spec.loadBalancerSourceRanges is empty (the field wins). Only these client ranges may connect.",
		Example:     "203.0.113.0/24,2001:db8::/32",
		parse:       parseSourceRanges,
	},
}

// Retired maps each annotation that no longer does anything to what
// replaced it: the controller reports it in an event, never acts on it.
var Retired = map[Name]string{
	LBApprovePlan: "it no longer approves anything: approvals are PlanApproval objects that only reviewers can create " +
		"(examplectl approve), with an identity the API server verifies; see docs/review.md",
	LBForceUnlock: "it no longer forces a state lock open: that is a StateUnlock object that only reviewers can create " +
		"(examplectl unlock); see docs/review.md",
}

// flag defines a bool annotation, false unless set to true; field is what
// it sets.
func flag(name Name, description string, field func(*LoadBalancer) *bool) Definition {
	return Definition{
		Name: name, Kind: KindBool, Accepted: []string{"true, false"}, Default: "false",
		Description: description, Example: "true",
		parse: func(v string, lb *LoadBalancer) error { return parseBool(v, field(lb)) },
	}
}

// Lookup returns the definition of an annotation.
func Lookup(n Name) (Definition, bool) {
	for _, d := range Definitions {
		if d.Name == n {
			return d, true
		}
	}
	return Definition{}, false
}

func init() {
	seen := map[Name]bool{}
	for _, d := range Definitions {
		if seen[d.Name] || d.parse == nil || d.Description == "" || d.Example == "" {
			panic(fmt.Sprintf("annotations: bad definition %s", d.Name))
		}
		seen[d.Name] = true
	}
}
