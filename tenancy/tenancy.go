// Package tenancy is the tenant boundary: every reference from an object
// to something it does not own (a cloud certificate, a TLS Secret, a load
// balancer group of another namespace, an existing load balancer to adopt)
// is decided here, by one function with one rule set, before anything is
// planned. A namespace is a tenant: whoever may edit a Service, or a Secret
// it names, in one namespace must not reach another namespace's cloud
// objects.
//
// A new kind of reference adds a Kind, a line in References and a rule in
// Authorizer.decide, and a row in the tenancy suites (docs/tenancy.md).
package tenancy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// Kind is a kind of reference.
type Kind string

const (
	// Certificate is a cloud certificate named by id (certificate-ids).
	Certificate Kind = "certificate"
	// TLSSecret is a Kubernetes TLS Secret (tls-secrets).
	TLSSecret Kind = "TLS Secret"
	// Group is a load balancer group a Service joins (group).
	Group Kind = "load balancer group"
	// Adoption is an existing load balancer to import (adopt-id).
	Adoption Kind = "load balancer to adopt"
	// LoadBalancerName is the cloud name a Service gives its load
	// balancer, or its group's (name): names are unique per region, so a
	// name is a claim on something another tenant may need.
	LoadBalancerName Kind = "load balancer name"
	// RouteBackend is a Service a Gateway API route sends requests to
	// (a backendRef): from the route, not a Service.
	RouteBackend Kind = "route backend Service"
	// GatewayCertificate is a TLS Secret a Gateway's HTTPS listener
	// serves (a certificateRef): from the Gateway.
	GatewayCertificate Kind = "Gateway certificate Secret"
	// ReservedAddress is a reserved address a Service's load balancer
	// takes (address, or spec.loadBalancerIP), or a Gateway's (its
	// spec.addresses), by id or IP.
	ReservedAddress Kind = "reserved address"
	// GatewayHostname is a host name a route would serve on a Gateway
	// where another namespace holds it (Namespace: the holder): from the
	// route.
	GatewayHostname Kind = "Gateway host name"
	// PodTarget is an address a Service's EndpointSlice lists, which a
	// load balancer would send traffic to directly (pod targets, ADR 24):
	// Namespace is the Service's, Name the IP.
	PodTarget Kind = "pod target"
	// ListenerSetGateway is the Gateway a ListenerSet adds its listeners
	// to (its spec.parentRef), maybe of another namespace: from the
	// ListenerSet, consented by the Gateway's spec.allowedListeners
	// (listenersets.go).
	ListenerSetGateway Kind = "ListenerSet parent Gateway"
	// BackendTLSTarget is a Service a BackendTLSPolicy applies to (a
	// targetRef) and BackendTLSCACertificate a ConfigMap whose ca.crt it
	// verifies backends against (a caCertificateRef): from the policy,
	// of its own namespace only (the Gateway API has no namespace in
	// either reference).
	BackendTLSTarget        Kind = "BackendTLSPolicy target Service"
	BackendTLSCACertificate Kind = "BackendTLSPolicy CA certificate ConfigMap"
)

// Reference is one reference an object makes.
type Reference struct {
	Kind Kind
	// Annotation is where the tenant wrote it: the refusal names it ("" for
	// a route's reference, written in its spec).
	Annotation annotations.Name
	// Namespace is the referent's namespace (Secrets, groups; for a load
	// balancer name, the namespace of the object whose load balancer it
	// names; for a certificate, the namespace whose load balancer would
	// serve it: the Service's, or its group's); "" for other cloud objects.
	Namespace string
	// Name is the referent: a Secret's or group's name, a certificate or
	// load balancer id, a load balancer name.
	Name string
	// Group is, for a load balancer name, the group whose load balancer
	// the name would be (in Namespace); "" when it is the Service's own.
	Group string
}

// References lists every reference svc's annotations make: the one place
// that knows which annotations point outside the Service.
func References(svc *corev1.Service, lb *annotations.LoadBalancer) []Reference {
	var out []Reference
	// A member's listeners are its group's load balancer's.
	servedIn := cmp.Or(lb.Group.In(svc.Namespace).Namespace, svc.Namespace)
	for _, id := range lb.CertificateIDs {
		out = append(out, Reference{Kind: Certificate, Annotation: annotations.LBCertificateIDs, Namespace: servedIn, Name: id})
	}
	for _, name := range lb.TLSSecrets {
		out = append(out, Reference{Kind: TLSSecret, Annotation: annotations.LBTLSSecrets, Namespace: svc.Namespace, Name: name})
	}
	if g := lb.Group.In(svc.Namespace); g.Name != "" {
		out = append(out, Reference{Kind: Group, Annotation: annotations.LBGroup, Namespace: g.Namespace, Name: g.Name})
	}
	if lb.AdoptID != "" {
		out = append(out, Reference{Kind: Adoption, Annotation: annotations.LBAdoptID, Name: lb.AdoptID})
	}
	if lb.Address != "" {
		// Its namespace is the cloud's to tell (its owner tag).
		out = append(out, Reference{Kind: ReservedAddress, Annotation: annotations.LBAddress, Name: lb.Address})
	}
	// After adoption: adopting another's load balancer means naming it,
	// and that refusal says more.
	if lb.Name != "" {
		// A member's name is its group's (the renderer takes the
		// primary's), so the group is the owner the name is checked for.
		g := lb.Group.In(svc.Namespace)
		out = append(out, Reference{Kind: LoadBalancerName, Annotation: annotations.LBName, Namespace: cmp.Or(g.Namespace, svc.Namespace), Name: lb.Name, Group: g.Name})
	}
	return out
}

// RefusedError is a reference the boundary refuses. Its text names the
// annotation and what the tenant wrote, and says why in the tenant's own
// terms: never whose the referent is, nor whether it exists elsewhere.
type RefusedError struct {
	Ref    Reference
	Reason string
	// Unread: refused for want of ReferenceGrants the controller has not
	// read (before their first list, after a failed list or watch, or a
	// grant its watch has not delivered yet): reading them may allow it,
	// so it is tried again soon.
	Unread bool
}

// EventReason is the reason of the event on the Service.
func (e *RefusedError) EventReason() string { return "ReferenceRefused" }

func (e *RefusedError) Error() string {
	if e.Ref.Annotation == "" && e.Ref.Namespace == "" {
		// A cloud object named in a spec (a Gateway's address).
		return fmt.Sprintf("%s %q refused: %s", e.Ref.Kind, e.Ref.Name, e.Reason)
	}
	if e.Ref.Annotation == "" {
		return fmt.Sprintf("%s %s/%s refused: %s", e.Ref.Kind, e.Ref.Namespace, e.Ref.Name, e.Reason)
	}
	return fmt.Sprintf("annotation %s: %s %q refused: %s", e.Ref.Annotation, e.Ref.Kind, e.Ref.Name, e.Reason)
}

// SharedCertificate is a certificate the platform lets namespaces use
// (the cloud config's loadBalancer.sharedCertificates).
type SharedCertificate struct {
	ID string `json:"id"`
	// Namespaces may name it; "*" is every namespace.
	Namespaces []string `json:"namespaces"`
}

// Sources are what decisions read. Each is called only for the references
// that need it.
type Sources struct {
	// CertificateTags returns certificate id's tags; found is false when
	// the cloud has no such certificate.
	CertificateTags func(ctx context.Context, id string) (tags map[string]string, found bool, err error)
	// Grants lists the ReferenceGrants of namespace; ErrGrantsUnreadable
	// while they cannot be read (a refusal, not a failure to decide).
	Grants func(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error)
	// GrantsNow, if set, lists them as the API server has them now (a
	// read, not the watch Grants keeps): asked only before a refusal
	// for want of a grant, to tell a grant the watch has not delivered
	// yet (created a moment before) from none. It never allows: consent
	// counts from the watch's event on. Namespace "" is every
	// namespace's. Its answers are kept for GrantsNowTTL (grantsnow.go).
	GrantsNow func(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error)
	// LoadBalancerTags returns load balancer id's tags; found is false
	// when the cloud has no such load balancer.
	LoadBalancerTags func(ctx context.Context, id string) (tags map[string]string, found bool, err error)
	// LoadBalancerByName returns the tags of the load balancer named name
	// in the cluster's region; found is false when there is none. Nil: the
	// names in the cloud are not read (only a name's form decides).
	LoadBalancerByName func(ctx context.Context, name string) (tags map[string]string, found bool, err error)
	// Address returns the reserved address of id or IP ref: its id and
	// tags; found is false when the cloud has none in the region.
	Address func(ctx context.Context, ref string) (id string, tags map[string]string, found bool, err error)
	// PodAt returns the pod whose IP is ip (any namespace); found is
	// false when no pod has it.
	PodAt func(ctx context.Context, ip string) (pod PodAddress, found bool, err error)
	// Gateway returns the Gateway namespace/name; found is false when
	// there is none. NamespaceLabels returns a namespace's labels (nil for
	// none): what spec.allowedListeners' selector reads.
	Gateway         func(ctx context.Context, namespace, name string) (gw *gatewayv1.Gateway, found bool, err error)
	NamespaceLabels func(namespace string) map[string]string
}

// PodAddress is what the boundary reads of the pod an address is.
type PodAddress struct {
	Namespace string
	// HostNetwork: the pod shares its node's network, so its IP is the
	// node's.
	HostNetwork bool
}

// Authorizer decides references with one rule set.
type Authorizer struct {
	ClusterID string
	Shared    []SharedCertificate
	// AdoptionAllowed tells whether a Service of namespace may adopt at
	// all (the cloud config's loadBalancer.adoption).
	AdoptionAllowed func(namespace string) bool
	Sources

	live liveGrants // GrantsNow's answers, kept (grantsnow.go)
}

// GrantGroup and GrantKind are what a ReferenceGrant's to names to let
// Services of another namespace join this namespace's load balancer
// groups (optionally one group, by name).
const (
	GrantGroup = "loadbalancer.example.com"
	GrantKind  = "ServiceGroup"
	// GrantAddressKind is what a grant's to names to let Services of
	// another namespace take this namespace's reserved addresses
	// (optionally one, by id).
	GrantAddressKind = "Address"
	// GrantHostnameGroup and GrantHostnameKind are what a grant's to
	// names to let routes of another namespace serve a host name this
	// namespace holds on a Gateway (optionally one, by the host name the
	// route serves).
	GrantHostnameGroup = "gateway.example.com"
	GrantHostnameKind  = "Hostname"
)

// ErrGrantsUnreadable is what Grants returns while the ReferenceGrants
// cannot be read (not listed yet, or the controller may not list them):
// consent that cannot be read is no consent, so the reference is refused,
// never decided from grants read before.
var ErrGrantsUnreadable = errors.New("ReferenceGrants cannot be read")

// Authorize decides every reference from from (a Service); the first
// refused is returned as a *RefusedError, a failure to read what a rule
// needs as a plain error (nothing is decided then).
func (a *Authorizer) Authorize(ctx context.Context, from objectref.Ref, refs []Reference) error {
	for _, r := range refs {
		reason, err := a.decide(ctx, from, r)
		if errors.Is(err, errNotRead) {
			return &RefusedError{Ref: r, Reason: cmp.Or(reason, notReadReason), Unread: true}
		}
		if err != nil {
			return fmt.Errorf("authorize %s %q of %s: %w", r.Kind, r.Name, from, err)
		}
		if reason != "" {
			return &RefusedError{Ref: r, Reason: reason}
		}
	}
	return nil
}

// Refusal is Authorize of the one reference r, as the reason it is
// refused ("" when allowed): for callers that tell each reference's
// refusal apart rather than stop at the first.
func (a *Authorizer) Refusal(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	err := a.Authorize(ctx, from, []Reference{r})
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused.Reason, nil
	}
	return "", err
}

// decide is the rule set: "" allows, otherwise the reason for refusing.
func (a *Authorizer) decide(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	switch r.Kind {
	case Certificate:
		return a.certificate(ctx, from, r)
	case TLSSecret:
		if r.Namespace != from.Namespace {
			return "a TLS Secret must be in the Service's own namespace", nil
		}
		return "", nil
	case Group:
		if r.Namespace == from.Namespace {
			return "", nil
		}
		return a.granted(ctx, from, r)
	case Adoption:
		return a.adoption(ctx, from, r.Name)
	case LoadBalancerName:
		if reason := a.ReservedName(from, r); reason != "" {
			return reason, nil
		}
		return a.nameInUse(ctx, r)
	case ReservedAddress:
		return a.address(ctx, from, r)
	case RouteBackend:
		if r.Namespace == from.Namespace {
			return "", nil
		}
		return a.routeGranted(ctx, from, r)
	case GatewayCertificate:
		if r.Namespace == from.Namespace {
			return "", nil
		}
		// From a Gateway, or a ListenerSet's listener (a grant to
		// Gateways lets no ListenerSet in, nor the other way).
		kind := cmp.Or(from.Kind, objectref.KindGateway)
		refusal := fmt.Sprintf("namespace %s has no ReferenceGrant from %ss of namespace %s to its Secrets", r.Namespace, kind, from.Namespace)
		return a.consented(ctx, r.Namespace, refusal, func(g gatewayv1beta1.ReferenceGrant) bool {
			return matches(g, party{gatewayv1beta1.GroupName, kind}, from.Namespace, party{"", "Secret"}, r.Name)
		})
	case GatewayHostname:
		if r.Namespace == from.Namespace {
			return "", nil
		}
		return a.hostnameGranted(ctx, from, r)
	case PodTarget:
		return a.podTarget(ctx, from, r)
	case ListenerSetGateway:
		return a.listenerSetGateway(ctx, from, r)
	case BackendTLSTarget, BackendTLSCACertificate:
		if r.Namespace != from.Namespace {
			return "a BackendTLSPolicy references objects of its own namespace only", nil
		}
		return "", nil
	}
	return "unknown kind of reference", nil
}

// certificate: a namespace may name certificates the controller uploaded
// for it (owner tags: this cluster, this namespace) and those the platform
// shares with it. A missing certificate and another tenant's are refused
// in the same words, so a refusal tells nothing of other tenants. Either
// must also be one the load balancer serving it may serve (Servable): a
// group's load balancer is its namespace's, so a guest's own certificate
// is refused here, before the group's plan, which the provider would fail.
func (a *Authorizer) certificate(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	const notYours = "it is not a certificate of this namespace (uploaded by this cluster for a Service of the namespace), nor one the platform shares with it (loadBalancer.sharedCertificates)"
	shared := slices.ContainsFunc(a.Shared, func(s SharedCertificate) bool {
		return s.ID == r.Name && (slices.Contains(s.Namespaces, from.Namespace) || slices.Contains(s.Namespaces, "*"))
	})
	if a.CertificateTags == nil {
		if shared {
			return "", nil // offline (examplectl render): the cloud decides the rest
		}
		return notYours, nil
	}
	tags, found, err := a.CertificateTags(ctx, r.Name)
	if err != nil {
		return "", err
	}
	servedIn := cmp.Or(r.Namespace, from.Namespace)
	switch {
	case !found && shared:
		return "the platform shares it, but the cloud has no such certificate", nil
	case !found || !shared && !OwnedBy(tags, a.ClusterID, from.Namespace):
		return notYours, nil
	case !Servable(tags, a.ClusterID, servedIn) && servedIn == from.Namespace:
		return "the load balancer serves only certificates of this namespace or certificates without tenant tags, and this one's tags name another owner", nil
	case !Servable(tags, a.ClusterID, servedIn):
		return "the listeners are served by a load balancer of namespace " + servedIn + " (the group's), which serves only certificates of " +
			servedIn + " or certificates without tenant tags: this one's tags name another owner", nil
	}
	return "", nil
}

// Servable tells whether a load balancer of namespace (this cluster's)
// may serve a certificate with tags: the provider's rule, which refuses a
// certificate whose tenant tags (exampleapi.TenantTags) differ from the
// load balancer's and lets through one that carries none.
func Servable(tags map[string]string, clusterID, namespace string) bool {
	lb := map[string]string{exampleapi.TagClusterID: clusterID, exampleapi.TagNamespace: namespace}
	return len(exampleapi.OwnerConflicts(lb, tags, exampleapi.TenantTags)) == 0
}

// adoption: a namespace the cloud config allows may adopt a load balancer
// whose owner tags name no other owner (no other cluster, no other
// object). A missing load balancer and another owner's are refused in the
// same words. The provider checks the same tags again when it imports
// (a hand-written plan cannot bypass this).
func (a *Authorizer) adoption(ctx context.Context, from objectref.Ref, id string) (string, error) {
	if a.AdoptionAllowed == nil || !a.AdoptionAllowed(from.Namespace) {
		return "the cloud config does not allow adoption in namespace " + from.Namespace, nil
	}
	const notYours = "it is not a load balancer this Service may adopt: it does not exist, or its owner tags name another cluster or object"
	want := map[string]string{lbmodel.TagClusterID: a.ClusterID, lbmodel.TagServiceUID: from.OwnerTag()}
	return byTags(ctx, a.LoadBalancerTags, id, notYours, func(tags map[string]string) bool {
		return len(exampleapi.OwnerConflicts(want, tags, renderer.OwnerTagKeys)) == 0
	})
}

// address: a Service or a Gateway takes a reserved address of its own
// namespace (owner tags: this cluster, the namespace), or of a namespace
// whose ReferenceGrant lets Services (Gateways) of its namespace take its
// addresses (all, or this one by id). A missing address, another
// cluster's, one made by hand and one of a namespace without consent are
// refused in the same words: a refusal tells nothing of other tenants.
func (a *Authorizer) address(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	taker, grantFrom := services, "Service"
	if from.Kind == objectref.KindGateway {
		taker, grantFrom = gateways, "Gateway ("+gatewayv1beta1.GroupName+")"
	}
	refusal := fmt.Sprintf("it is not a reserved address of namespace %s, nor one whose namespace lets %ss of %s take it "+
		"(a ReferenceGrant there from %s in %s to group %s, kind %s)", from.Namespace, taker.kind, from.Namespace, grantFrom, from.Namespace, GrantGroup, GrantAddressKind)
	if a.Address == nil {
		return refusal, nil
	}
	id, tags, found, err := a.Address(ctx, r.Name)
	if err != nil {
		return "", err
	}
	owner := tags[exampleapi.TagNamespace]
	switch {
	case !found || tags[lbmodel.TagClusterID] != a.ClusterID || tags[lbmodel.TagManagedBy] == "" || owner == "":
		owner = "" // no namespace may grant it
	case owner == from.Namespace:
		return "", nil
	}
	// Every refusal makes the same reads, whatever the address is
	// (missing, another cluster's, another namespace's): the grants read
	// (from's own stand in for no owner's) and the live read of every
	// namespace's, so neither its words nor its latency tell whether the
	// address is another tenant's.
	reason, err := a.consentedLive(ctx, cmp.Or(owner, from.Namespace), "", refusal, func(g gatewayv1beta1.ReferenceGrant) bool {
		return owner != "" && matches(g, taker, from.Namespace, party{GrantGroup, GrantAddressKind}, id)
	})
	if reason != "" && reason != refusal {
		// The grants could not be read: said without the namespace, whose
		// name would tell whose the address is.
		reason = notReadReason
	}
	return reason, err
}

// podTarget: an EndpointSlice is written by whoever may edit its
// namespace, so an address it lists counts only if it is the IP of a pod
// of the Service's own namespace (r.Namespace), with a network of its
// own: never another namespace's pod, a node, the metadata API or any
// other address. A missing pod and another namespace's are refused in the
// same words.
func (a *Authorizer) podTarget(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	refusal := "it is not the IP of a pod of namespace " + r.Namespace
	if a.PodAt == nil {
		return refusal, nil
	}
	pod, found, err := a.PodAt(ctx, r.Name)
	switch {
	case err != nil:
		return "", err
	case !found || pod.Namespace != r.Namespace || r.Namespace != from.Namespace:
		return refusal, nil
	case pod.HostNetwork:
		return "it is the IP of a pod of the host's network, which is its node's", nil
	}
	return "", nil
}

// AllowsAddress tells whether grant lets Services of namespace take
// reserved address id of the grant's namespace.
func AllowsAddress(grant gatewayv1beta1.ReferenceGrant, namespace, id string) bool {
	return matches(grant, services, namespace, party{GrantGroup, GrantAddressKind}, id)
}

// AllowsGatewayAddress tells whether grant lets Gateways of namespace
// take reserved address id of the grant's namespace.
func AllowsGatewayAddress(grant gatewayv1beta1.ReferenceGrant, namespace, id string) bool {
	return matches(grant, gateways, namespace, party{GrantGroup, GrantAddressKind}, id)
}

// byTags allows the object id when tagsOf finds it and its tags are
// allowed; otherwise it refuses with notYours, missing or not (nothing is
// allowed without tagsOf).
func byTags(ctx context.Context, tagsOf func(ctx context.Context, id string) (map[string]string, bool, error),
	id, notYours string, allowed func(tags map[string]string) bool) (string, error) {
	if tagsOf == nil {
		return notYours, nil
	}
	tags, found, err := tagsOf(ctx, id)
	if err != nil {
		return "", err
	}
	if !found || !allowed(tags) {
		return notYours, nil
	}
	return "", nil
}

// defaultName is the form of the names the controller computes
// (renderer.LoadBalancerName, renderer.GroupLoadBalancerName): k8s- and
// 28 lowercase hex digits.
var defaultName = regexp.MustCompile(`^k8s-[0-9a-f]{28}$`)

// ReservedName decides a load balancer name by its form alone (no cloud):
// a name of the controller's default form is a hash that hides whose it
// is, and another namespace's group has a default anyone can compute, so
// every such name is reserved but the ones computed for this Service and
// for the group it names. "" allows.
func (a *Authorizer) ReservedName(from objectref.Ref, r Reference) string {
	if !defaultName.MatchString(r.Name) {
		return ""
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: from.Namespace, Name: from.Name, UID: types.UID(from.UID)}}
	if r.Name == renderer.LoadBalancerName(svc, a.ClusterID) ||
		r.Group != "" && r.Name == renderer.GroupLoadBalancerName(a.ClusterID, r.Namespace, r.Group) {
		return ""
	}
	return "names of the form k8s- and 28 hex digits are reserved for the names the controller computes, and this one is not this Service's (nor its group's): it is reserved for another owner"
}

// nameInUse: a name a load balancer in the region already has is free to
// take only when its owner tags name nobody (one to adopt, made by hand)
// or this cluster and the namespace whose load balancer the name is (the
// Service's own, its group's, or one it is moving from within its
// namespace). Names are first come, first served: whoever created a load
// balancer of a name first keeps it, and another namespace's later claim
// is refused here, before the cloud would refuse its create.
func (a *Authorizer) nameInUse(ctx context.Context, r Reference) (string, error) {
	if a.LoadBalancerByName == nil {
		return "", nil
	}
	tags, found, err := a.LoadBalancerByName(ctx, r.Name)
	if err != nil {
		return "", err
	}
	owned := slices.ContainsFunc(renderer.OwnerTagKeys, func(k string) bool { return tags[k] != "" })
	if !found || !owned || OwnedBy(tags, a.ClusterID, r.Namespace) {
		return "", nil
	}
	return "a load balancer of another owner (another namespace or cluster) has this name in the region: it is reserved for or used by another owner", nil
}

// OwnedBy tells whether a cloud object's tags name this cluster and
// namespace as its owner.
func OwnedBy(tags map[string]string, clusterID, namespace string) bool {
	return tags[lbmodel.TagClusterID] == clusterID && tags[lbmodel.TagServiceNamespace] == namespace
}

// granted: joining another namespace's group needs that namespace's
// consent, a ReferenceGrant there from Services of from's namespace to
// its ServiceGroups (all, or this one by name).
func (a *Authorizer) granted(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	refusal := fmt.Sprintf("namespace %s has no ReferenceGrant that lets Services of namespace %s join its load balancer groups (from: Service in %s; to: group %s, kind %s)",
		r.Namespace, from.Namespace, from.Namespace, GrantGroup, GrantKind)
	return a.consented(ctx, r.Namespace, refusal, func(g gatewayv1beta1.ReferenceGrant) bool { return Allows(g, from.Namespace, r.Name) })
}

// routeGranted: a route's backend in another namespace needs that
// namespace's consent, as the Gateway API defines it: a ReferenceGrant
// there from routes of from's kind and namespace to Services (all, or
// this one by name).
func (a *Authorizer) routeGranted(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	refusal := fmt.Sprintf("namespace %s has no ReferenceGrant from %ss of namespace %s to its Services", r.Namespace, from.Kind, from.Namespace)
	return a.consented(ctx, r.Namespace, refusal, func(g gatewayv1beta1.ReferenceGrant) bool {
		return AllowsRoute(g, from.Kind, from.Namespace, r.Name)
	})
}

// hostnameGranted: serving a host name another namespace holds on a
// Gateway needs that namespace's consent, a ReferenceGrant there from
// routes of from's kind and namespace to group gateway.example.com, kind
// Hostname (this host name, or all). The refusal names neither the
// holder nor whether its grants could be read: the route's namespace
// must not learn whose the name is.
func (a *Authorizer) hostnameGranted(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	refusal := fmt.Sprintf("the namespace holding it on the Gateway has no ReferenceGrant from %ss of namespace %s to group %s, kind %s (name %s, or none)",
		from.Kind, from.Namespace, GrantHostnameGroup, GrantHostnameKind, r.Name)
	reason, err := a.consented(ctx, r.Namespace, refusal, func(g gatewayv1beta1.ReferenceGrant) bool {
		return AllowsHostname(g, from.Kind, from.Namespace, r.Name)
	})
	if reason != "" && reason != refusal {
		reason = "the controller cannot read the ReferenceGrants that decide it now, and consent it cannot read is no consent"
	}
	return reason, err
}

// AllowsHostname tells whether grant lets routes of kind in namespace
// serve host name host where the grant's namespace holds it.
func AllowsHostname(grant gatewayv1beta1.ReferenceGrant, kind, namespace, host string) bool {
	return matches(grant, party{gatewayv1beta1.GroupName, kind}, namespace, party{GrantHostnameGroup, GrantHostnameKind}, host)
}

// errNotRead comes with a refusal for want of grants not read:
// Authorize makes it a RefusedError that is Unread.
var errNotRead = errors.New("ReferenceGrants not read")

// notReadReason is such a refusal's reason where its rule gives none.
const notReadReason = "the controller cannot read the ReferenceGrants that decide it now, and consent it cannot read is no consent"

// consented is "" when a ReferenceGrant of namespace allows, else refusal.
// While the grants are not read (unreadable, or the API server has one
// that allows and the watch has not delivered it yet) it refuses saying
// so, with errNotRead: consent that cannot be read is no consent.
func (a *Authorizer) consented(ctx context.Context, namespace, refusal string, allows func(gatewayv1beta1.ReferenceGrant) bool) (string, error) {
	return a.consentedLive(ctx, namespace, namespace, refusal, allows)
}

// consentedLive is consented with the live read of namespace live ("":
// every namespace's, of which namespace's count).
func (a *Authorizer) consentedLive(ctx context.Context, namespace, live, refusal string, allows func(gatewayv1beta1.ReferenceGrant) bool) (string, error) {
	if a.Grants == nil {
		return refusal, nil
	}
	grants, err := a.Grants(ctx, namespace)
	if errors.Is(err, ErrGrantsUnreadable) {
		return fmt.Sprintf("the controller cannot read the ReferenceGrants of namespace %s now, and consent it cannot read is no consent", namespace), errNotRead
	}
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(grants, allows) {
		return "", nil
	}
	if a.GrantsNow != nil {
		now, err := a.grantsNow(ctx, live)
		if err == nil && slices.ContainsFunc(now, func(g gatewayv1beta1.ReferenceGrant) bool {
			return (live != "" || g.Namespace == namespace) && allows(g)
		}) {
			return fmt.Sprintf("the controller has not read the newest ReferenceGrants of namespace %s yet, and consent it has not read is no consent", namespace), errNotRead
		}
	}
	return refusal, nil
}

// AllowsRoute tells whether grant lets routes of kind in namespace send
// to Service name of the grant's namespace.
func AllowsRoute(grant gatewayv1beta1.ReferenceGrant, kind, namespace, name string) bool {
	return matches(grant, party{gatewayv1beta1.GroupName, kind}, namespace, services, name)
}

// Allows tells whether grant lets Services of namespace join group name
// of the grant's namespace.
func Allows(grant gatewayv1beta1.ReferenceGrant, namespace, name string) bool {
	return matches(grant, services, namespace, party{GrantGroup, GrantKind}, name)
}

// party is one side of a ReferenceGrant: an API group ("" is core) and
// a kind.
type party struct{ group, kind string }

// services are core Services: what a grant lets refer (to a group, an
// address) or be referred to (by a route).
var services = party{"", "Service"}

// gateways are Gateway API Gateways: what a grant lets take an address.
var gateways = party{gatewayv1beta1.GroupName, "Gateway"}

// matches is the one reading of a ReferenceGrant: it lets objects of from
// in namespace refer to the object of to named name in the grant's own
// namespace (any such object when the grant names none).
func matches(grant gatewayv1beta1.ReferenceGrant, from party, namespace string, to party, name string) bool {
	f := slices.ContainsFunc(grant.Spec.From, func(f gatewayv1beta1.ReferenceGrantFrom) bool {
		return string(f.Group) == from.group && string(f.Kind) == from.kind && string(f.Namespace) == namespace
	})
	t := slices.ContainsFunc(grant.Spec.To, func(t gatewayv1beta1.ReferenceGrantTo) bool {
		return string(t.Group) == to.group && string(t.Kind) == to.kind && (t.Name == nil || string(*t.Name) == name)
	})
	return f && t
}
