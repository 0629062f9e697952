// Package exampleapi holds the wire types of the Example cloud API (/v1) and
// the Go client used by the Terraform provider and the CCM. The simulator
// serves exactly these types, so client and server cannot drift apart.
package exampleapi

import "time"

// APIVersionPrefix is the path prefix of every versioned endpoint.
const APIVersionPrefix = "/v1"

// Instance states.
const (
	InstanceRunning = "running"
	InstanceStopped = "stopped"
)

// Load balancer statuses: provisioning -> active, or error.
const (
	LBStatusProvisioning = "provisioning"
	LBStatusActive       = "active"
	LBStatusError        = "error"
)

// Route statuses. A route whose target instance no longer exists is a blackhole.
const (
	RouteStatusActive    = "active"
	RouteStatusBlackhole = "blackhole"
)

// Enumerations accepted by the API.
const (
	ProtocolTCP   = "tcp"
	ProtocolUDP   = "udp"
	ProtocolHTTP  = "http"
	ProtocolHTTPS = "https"
	// ProtocolTLS is TLS passthrough: the load balancer reads the SNI name
	// of the ClientHello and forwards the TCP connection unchanged.
	ProtocolTLS = "tls"

	IPFamilyIPv4      = "ipv4"
	IPFamilyDualStack = "dualstack"

	// Families of a reserved address (Address.Family).
	AddressFamilyIPv4 = "ipv4"
	AddressFamilyIPv6 = "ipv6"

	AlgorithmRoundRobin       = "round_robin"
	AlgorithmLeastConnections = "least_connections"
	AlgorithmSourceIP         = "source_ip"
)

// Load balancer types (sizes).
var LoadBalancerTypes = []string{"lb-small", "lb-medium", "lb-large"}

// Limits on the lists a request may carry. The API rejects more with a 400
// naming the field; the provider and the modules check them at plan time.
// Every list costs plan time and memory per element in Terraform, so an
// unbounded one is a way for one tenant to stall a shared controller.
const (
	// MaxListeners is per load balancer. Kubernetes Services rarely
	// expose more than a handful of ports.
	MaxListeners = 100
	// MaxTargets is per load balancer and per target pool: Kubernetes'
	// largest supported cluster (5,000 nodes) fits.
	MaxTargets = 5000
	// MaxAllowedSourceCIDRs is per load balancer.
	MaxAllowedSourceCIDRs = 1000
	// MaxTags is per object (instance, load balancer, target pool,
	// certificate or address), also the most tag filters a listing takes.
	MaxTags = 50
	// MaxListenerCertificates is per https listener: the first is the
	// default, the others are chosen by SNI.
	MaxListenerCertificates = 25
)

// Enumerations as lists, for validation in the simulator and the provider.
var (
	ListenerProtocols    = []string{ProtocolTCP, ProtocolUDP, ProtocolHTTP, ProtocolHTTPS, ProtocolTLS}
	HealthCheckProtocols = []string{ProtocolTCP, ProtocolHTTP, ProtocolHTTPS}
	IPFamilies           = []string{IPFamilyIPv4, IPFamilyDualStack}
	AddressFamilies      = []string{AddressFamilyIPv4, AddressFamilyIPv6}
	Algorithms           = []string{AlgorithmRoundRobin, AlgorithmLeastConnections, AlgorithmSourceIP}
	InstanceStates       = []string{InstanceRunning, InstanceStopped}
)

// ObjectMeta is what every named top-level object of the API has: its
// id, its name (unique in its region and kind) and region, when it was
// created and the version that its ETag carries. Every object but the
// load balancer embeds it, so its fields are the object's on the wire; a
// load balancer's name and region are part of its spec.
type ObjectMeta struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Region    string    `json:"region"`
	CreatedAt time.Time `json:"created_at"`
	// Version is the optimistic-concurrency version, also sent as the ETag.
	Version int64 `json:"version"`
}

// Meta is the object's ObjectMeta (what Object asks of every object).
func (m ObjectMeta) Meta() ObjectMeta { return m }

// Object is a named top-level object: an instance, network, load
// balancer, target pool, certificate or address.
type Object interface{ Meta() ObjectMeta }

// Region is a read-only region with its zones.
type Region struct {
	Name  string   `json:"name"`
	Zones []string `json:"zones"`
}

// Zone is a read-only availability zone.
type Zone struct {
	Name   string `json:"name"`
	Region string `json:"region"`
}

// Instance is a virtual machine.
type Instance struct {
	ObjectMeta
	Type        string            `json:"type"`
	Zone        string            `json:"zone"`
	State       string            `json:"state"`
	PrivateIPv4 string            `json:"private_ipv4"`
	PublicIPv4  string            `json:"public_ipv4,omitempty"`
	IPv6        string            `json:"ipv6,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// CreateInstanceRequest creates an instance (the demo and tests use it; a
// real cluster's nodes exist before the CCM does). Addresses are allocated
// by the cloud unless given.
type CreateInstanceRequest struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Zone        string            `json:"zone"`
	State       string            `json:"state,omitempty"`
	PrivateIPv4 string            `json:"private_ipv4,omitempty"`
	PublicIPv4  string            `json:"public_ipv4,omitempty"`
	IPv6        string            `json:"ipv6,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// UpdateInstanceTagsRequest replaces an instance's tags.
type UpdateInstanceTagsRequest struct {
	Tags map[string]string `json:"tags"`
}

// SetInstanceStateRequest starts or stops an instance.
type SetInstanceStateRequest struct {
	State string `json:"state"`
}

// InstanceFilter narrows an instance listing. Empty fields do not filter.
type InstanceFilter struct {
	Name   string
	Zone   string
	Region string
	// Tag filters as key=value (or key alone for presence); all must match.
	Tags map[string]string
}

// Network is a private network with exactly one route table.
type Network struct {
	ObjectMeta
	CIDR     string `json:"cidr"`
	IPv6CIDR string `json:"ipv6_cidr,omitempty"`
}

// CreateNetworkRequest creates a network.
type CreateNetworkRequest struct {
	Name     string `json:"name"`
	Region   string `json:"region"`
	CIDR     string `json:"cidr"`
	IPv6CIDR string `json:"ipv6_cidr,omitempty"`
}

// Route sends a destination CIDR (IPv4 or IPv6) to an instance.
type Route struct {
	ID               string `json:"id"`
	NetworkID        string `json:"network_id"`
	DestinationCIDR  string `json:"destination_cidr"`
	TargetInstanceID string `json:"target_instance_id"`
	// Status is computed on read: blackhole when the target instance is gone.
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateRouteRequest adds a route to a network's route table.
type CreateRouteRequest struct {
	DestinationCIDR  string `json:"destination_cidr"`
	TargetInstanceID string `json:"target_instance_id"`
}

// Listener forwards one port of the load balancer to a port on the targets.
// tcp and udp listeners forward connections and datagrams; tls listeners
// forward TCP connections too, routed by the SNI name of their TLS
// ClientHello (TLS passes through: it ends at the targets); http and https
// listeners forward HTTP requests, https ones ending TLS at the load
// balancer with their certificates. tcp, tls, http and https listeners
// share the load balancer's TCP ports; a udp listener may have the port
// number of one of them.
type Listener struct {
	Protocol      string `json:"protocol"`
	Port          int    `json:"port"`
	TargetPort    int    `json:"target_port"`
	ProxyProtocol bool   `json:"proxy_protocol"`
	// CertificateIDs (https only, at least one) are certificates (cert-...)
	// of the load balancer's region: the first is served to clients that
	// send no matching SNI name, the others are chosen by SNI.
	CertificateIDs []string `json:"certificate_ids,omitempty"`
	// RedirectToHTTPSPort (http only) makes the listener answer every
	// request with a 301 redirect to https://<host>:<port><path> instead
	// of forwarding it; the port must be that of an https listener of the
	// same load balancer. 0: no redirect.
	RedirectToHTTPSPort int `json:"redirect_to_https_port,omitempty"`
	// StickySessions (http and https only) pins a client to one target
	// with a cookie set by the load balancer.
	StickySessions *StickySessions `json:"sticky_sessions,omitempty"`
}

// StickySessions is cookie-based session affinity of an http(s) listener.
type StickySessions struct {
	// CookieName is the cookie the load balancer sets (an RFC 6265 token,
	// 1-64 characters).
	CookieName string `json:"cookie_name"`
	// TTLSeconds is the cookie's lifetime, 1-604800 (7 days).
	TTLSeconds int `json:"ttl_seconds"`
}

// HealthCheck is how the load balancer probes its targets.
type HealthCheck struct {
	Protocol           string `json:"protocol"`
	Port               int    `json:"port"`
	Path               string `json:"path,omitempty"`
	IntervalSeconds    int    `json:"interval_seconds"`
	TimeoutSeconds     int    `json:"timeout_seconds"`
	HealthyThreshold   int    `json:"healthy_threshold"`
	UnhealthyThreshold int    `json:"unhealthy_threshold"`
}

// LoadBalancerSpec is the writable part of a load balancer: Name, Region,
// Internal and IPFamily are fixed at creation; its settings can be
// updated in place.
type LoadBalancerSpec struct {
	Name     string `json:"name"`
	Region   string `json:"region"`
	Internal bool   `json:"internal"`
	IPFamily string `json:"ip_family"`
	LoadBalancerSettings
}

// LoadBalancerSettings are the fields of a load balancer that an update
// replaces.
type LoadBalancerSettings struct {
	Type               string       `json:"type"`
	Algorithm          string       `json:"algorithm"`
	Listeners          []Listener   `json:"listeners"`
	HealthCheck        *HealthCheck `json:"health_check,omitempty"`
	AllowedSourceCIDRs []string     `json:"allowed_source_cidrs,omitempty"`
	Targets            []string     `json:"targets,omitempty"`
	// TargetPoolID references a target pool (tp-...) of the same region
	// instead of listing Targets (the two are mutually exclusive): the
	// load balancer forwards to the pool's targets, whatever they are at
	// the time, and Targets stays empty.
	TargetPoolID string `json:"target_pool_id,omitempty"`
	// Rules route the listeners' requests and connections (rules.go).
	Rules []Rule            `json:"rules,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// LoadBalancer is a load balancer with its computed fields.
type LoadBalancer struct {
	LoadBalancerSpec
	ID            string    `json:"id"`
	Status        string    `json:"status"`
	StatusMessage string    `json:"status_message,omitempty"`
	IPv4          string    `json:"ipv4,omitempty"`
	IPv6          string    `json:"ipv6,omitempty"`
	Hostname      string    `json:"hostname,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	Version       int64     `json:"version"`
}

// Meta is the load balancer's ObjectMeta, gathered from its spec and its
// computed fields.
func (lb LoadBalancer) Meta() ObjectMeta {
	return ObjectMeta{ID: lb.ID, Name: lb.Name, Region: lb.Region, CreatedAt: lb.CreatedAt, Version: lb.Version}
}

// UsesPool tells whether the load balancer forwards to target pool id:
// as where it forwards, or as a rule's backend (what keeps the cloud
// from deleting the pool).
func (s LoadBalancerSettings) UsesPool(id string) bool {
	if id == "" {
		return false
	}
	if s.TargetPoolID == id {
		return true
	}
	for _, r := range s.Rules {
		for _, b := range r.Backends {
			if b.TargetPoolID == id {
				return true
			}
		}
	}
	return false
}

// UpdateLoadBalancerRequest replaces the settings of a load balancer; its
// name, region, internal and IP family stay.
type UpdateLoadBalancerRequest = LoadBalancerSettings

// LoadBalancerFilter narrows a load balancer listing.
type LoadBalancerFilter struct {
	Name   string
	Region string
}

// TargetPool is a set of targets that load balancers of its region
// forward to by reference (LoadBalancerSettings.TargetPoolID, or a rule's
// backend): changing the pool's targets changes where every referencing
// load balancer sends traffic, in one request and without updating the
// load balancers.
type TargetPool struct {
	ObjectMeta
	// TargetType is what Targets are (fixed at creation): instance ids
	// (TargetTypeInstance), or IP:port pairs (TargetTypeIP) whose IPs the
	// region's routes reach, such as pods' (docs/example-cloud-api.md).
	TargetType string            `json:"target_type"`
	Targets    []string          `json:"targets"`
	Tags       map[string]string `json:"tags,omitempty"`
	// DeregistrationDelaySeconds is how long a target removed from
	// Targets keeps the connections it has, getting no new ones
	// (Draining); 0 removes it at once.
	DeregistrationDelaySeconds int `json:"deregistration_delay_seconds"`
	// Draining are the targets removed from Targets whose delay has not
	// ended, each with its end; read-only. A target put back in Targets
	// stops draining.
	Draining []DrainingTarget `json:"draining"`
	// UpdatedAt is set by the cloud: an update (also the removal of a
	// deleted instance) moves it and Version.
	UpdatedAt time.Time `json:"updated_at"`
}

// DrainingTarget is a target of a pool that gets no new connections and
// keeps its open ones until Until.
type DrainingTarget struct {
	ID    string    `json:"id"`
	Until time.Time `json:"until"`
}

// MaxDeregistrationDelay is the longest deregistration delay, in seconds.
const MaxDeregistrationDelay = 3600

// TargetTypeOrDefault is the pool's target type as the cloud takes it:
// a pool stored (or answered by a cloud) before there were types holds
// instances.
func (tp TargetPool) TargetTypeOrDefault() string {
	if tp.TargetType == "" {
		return TargetTypeInstance
	}
	return tp.TargetType
}

// Target types of a target pool.
const (
	// TargetTypeInstance: targets are instance ids, reached at their
	// private address on the listener's target port or the backend's port.
	TargetTypeInstance = "instance"
	// TargetTypeIP: targets are IP:port pairs ("10.244.1.5:8080",
	// "[fd00::5]:8080"), reached there. The IP must be inside the
	// destination of an active route of a network of the pool's region.
	// Such a pool is only a rule's backend, of port 0.
	TargetTypeIP = "ip"
)

// TargetTypes lists the target types.
var TargetTypes = []string{TargetTypeInstance, TargetTypeIP}

// CreateTargetPoolRequest creates a target pool. Targets may be empty.
type CreateTargetPoolRequest struct {
	Name   string `json:"name"`
	Region string `json:"region"`
	// TargetType is TargetTypeInstance (the default when empty) or
	// TargetTypeIP.
	TargetType                 string            `json:"target_type,omitempty"`
	Targets                    []string          `json:"targets"`
	Tags                       map[string]string `json:"tags,omitempty"`
	DeregistrationDelaySeconds int               `json:"deregistration_delay_seconds,omitempty"`
}

// UpdateTargetPoolRequest replaces a target pool's targets, tags and
// deregistration delay. The targets it removes drain for the new delay.
type UpdateTargetPoolRequest struct {
	Targets                    []string          `json:"targets"`
	Tags                       map[string]string `json:"tags,omitempty"`
	DeregistrationDelaySeconds int               `json:"deregistration_delay_seconds,omitempty"`
}

// TargetPoolFilter narrows a target pool listing.
type TargetPoolFilter struct {
	Name   string
	Region string
}

// Address is a reserved IP address: taken from the region's public pool
// of its family when it is created, given back only when it is deleted,
// whatever happens to the load balancers it is attached to. The
// attachment is the address's (LoadBalancerID): one PUT attaches it,
// moves it from one load balancer to another (never on two, never free in
// between) or detaches it. Attached, its IP is the load balancer's IPv4
// (or IPv6), in place of the one the load balancer had.
type Address struct {
	ObjectMeta
	// Family is AddressFamilyIPv4 or AddressFamilyIPv6; an ipv6 address
	// attaches to dualstack load balancers only.
	Family string `json:"family"`
	// IP is allocated at creation and never changes.
	IP string `json:"ip"`
	// LoadBalancerID is the load balancer (lb-...) the address is
	// attached to, "" when it is attached to none.
	LoadBalancerID string            `json:"load_balancer_id"`
	Tags           map[string]string `json:"tags,omitempty"`
	// UpdatedAt is set by the cloud: an update (also the detachment by
	// the deletion of its load balancer) moves it and Version.
	UpdatedAt time.Time `json:"updated_at"`
}

// CreateAddressRequest reserves an address, attached at once to
// LoadBalancerID when it is set. Family defaults to ipv4.
type CreateAddressRequest struct {
	Name           string            `json:"name"`
	Region         string            `json:"region"`
	Family         string            `json:"family,omitempty"`
	LoadBalancerID string            `json:"load_balancer_id,omitempty"`
	Tags           map[string]string `json:"tags,omitempty"`
}

// UpdateAddressRequest replaces an address's attachment and tags: a
// LoadBalancerID other than the current one attaches or moves the
// address, "" detaches it.
type UpdateAddressRequest struct {
	LoadBalancerID string            `json:"load_balancer_id"`
	Tags           map[string]string `json:"tags,omitempty"`
}

// AddressFilter narrows an address listing. Empty fields do not filter.
type AddressFilter struct {
	Name   string
	Region string
	// IP finds the address holding this IP (in any notation of it).
	IP string
}

// Certificate is an X.509 certificate with its private key, for https
// listeners. The private key is write-only: it is given at creation and
// never returned. A certificate cannot change; rotation is a new
// certificate referenced by the listeners, then the old one deleted.
type Certificate struct {
	ObjectMeta
	// CertificatePEM is the leaf certificate followed by its intermediates,
	// as uploaded.
	CertificatePEM string `json:"certificate_pem"`
	CertificateInfo
	Tags map[string]string `json:"tags,omitempty"`
}

// CertificateInfo is what the cloud reads from a certificate's leaf; see
// InspectCertificate.
type CertificateInfo struct {
	// Fingerprint is the SHA-256 of the leaf certificate (DER), lowercase hex.
	Fingerprint string    `json:"fingerprint"`
	CommonName  string    `json:"common_name,omitempty"`
	DNSNames    []string  `json:"dns_names,omitempty"`
	NotBefore   time.Time `json:"not_before"`
	// NotAfter is when the certificate expires. An expired certificate is
	// accepted (and served): watching NotAfter is the owner's job.
	NotAfter time.Time `json:"not_after"`
}

// CreateCertificateRequest uploads a certificate and its private key.
// Names are not unique: during a rotation the old and the new certificate
// may share one. Its String and GoString never show the key.
type CreateCertificateRequest struct {
	Name           string `json:"name"`
	Region         string `json:"region"`
	CertificatePEM string `json:"certificate_pem"`
	// PrivateKeyPEM is the unencrypted key (PKCS #1, PKCS #8 or SEC 1) of
	// the leaf certificate; it never appears in an answer.
	PrivateKeyPEM string            `json:"private_key_pem"`
	Tags          map[string]string `json:"tags,omitempty"`
}

// CertificateFilter narrows a certificate listing.
type CertificateFilter struct {
	Name   string
	Region string
}

// ListResponse is the envelope of every paginated listing.
type ListResponse[T any] struct {
	Items         []T    `json:"items"`
	NextPageToken string `json:"next_page_token,omitempty"`
}

// ErrorResponse is the body of every non-2xx answer.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody describes what went wrong; Field names the offending request
// field for validation errors.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// Error codes in ErrorBody.Code.
const (
	CodeInvalid            = "invalid_argument"
	CodeNotFound           = "not_found"
	CodeConflict           = "conflict"
	CodePreconditionFailed = "precondition_failed"
	CodeUnauthorized       = "unauthorized"
	CodeForbidden          = "forbidden"
	CodeRateLimited        = "rate_limited"
	CodeInternal           = "internal"
	CodeUnavailable        = "unavailable"
)

// InstanceMetadata is what the metadata API answers about one instance.
type InstanceMetadata struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Region      string            `json:"region"`
	Zone        string            `json:"zone"`
	State       string            `json:"state"`
	PrivateIPv4 string            `json:"private_ipv4"`
	PublicIPv4  string            `json:"public_ipv4,omitempty"`
	IPv6        string            `json:"ipv6,omitempty"`
	Hostname    string            `json:"hostname"`
	Tags        map[string]string `json:"tags,omitempty"`
}

// Placement is the region and zone of an instance.
type Placement struct {
	Region string `json:"region"`
	Zone   string `json:"zone"`
}

// Faults are the simulator's realism switches, readable and writable at
// runtime on /admin/v1/faults.
type Faults struct {
	// LatencyMs is added to every API request.
	LatencyMs int `json:"latency_ms"`
	// ErrorRate is the fraction (0..1) of API requests answered 503/500
	// before they are processed.
	ErrorRate float64 `json:"error_rate"`
	// DropRate is the fraction (0..1) of API requests whose connection is
	// closed without an answer, after the request was processed.
	DropRate float64 `json:"drop_rate"`
	// RateLimit is the steady requests/second allowed per token (0 = off);
	// RateBurst the bucket size.
	RateLimit float64 `json:"rate_limit"`
	RateBurst int     `json:"rate_burst"`
	// ProvisionDelayMs is how long a new load balancer stays provisioning.
	ProvisionDelayMs int `json:"provision_delay_ms"`
}

// FaultStats counts what the realism switches did since the simulator
// started (GET /admin/v1/fault-stats), for chaos reports.
type FaultStats struct {
	// Requests is every API request that reached the switches.
	Requests int64 `json:"requests"`
	// RateLimited were answered 429 with Retry-After.
	RateLimited int64 `json:"rate_limited"`
	// Errors were answered 500 or 503 before they were processed.
	Errors int64 `json:"errors"`
	// Dropped were processed, then their connection closed unanswered.
	Dropped int64 `json:"dropped"`
}

// InstanceTypes are the instance types the cloud offers.
var InstanceTypes = []string{"standard-1", "standard-2", "standard-4", "highmem-4"}
