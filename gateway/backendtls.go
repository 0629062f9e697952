package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// BackendTLSPolicies re-encrypt from the load balancer to a Service's
// pods: a policy whose targetRefs name a Service (and maybe one of its
// ports, by sectionName) gives that Service port's backends TLS, the
// policy's hostname as the SNI name, its caCertificateRefs (ConfigMaps of
// its namespace, key ca.crt) as the CA bundle, its subjectAltNames as the
// names to verify. A policy that does not resolve fails closed: its
// backends get no requests (a rule left with none answers 500), never the
// pods in cleartext.

// CACertificate is what a policy's caCertificateRef to ConfigMap name
// (of the policy's namespace) holds in its ca.crt, or why it cannot be
// read (refused by package tenancy, not found, no ca.crt): a message that
// never quotes the ConfigMap's content.
type CACertificate func(policy objectref.Ref, name string) (bundle, unresolved string)

// BackendTLS is every policy decided: the conditions each gets, and the
// TLS of each Service port they apply to.
type BackendTLS struct {
	// Policies are each policy's Accepted and ResolvedRefs conditions
	// (reason Accepted and ResolvedRefs when they are true), by
	// namespace/name.
	Policies map[types.NamespacedName]PolicyConditions
	// winners are the policy applying to each target: a Service port by
	// its name, or a whole Service (section "").
	winners map[tlsTarget]types.NamespacedName
	// tls is each policy's setting; nil for one that fails closed.
	tls map[types.NamespacedName]*exampleapi.BackendTLS
	// targeting are every policy naming each target, conflicted or not.
	targeting map[tlsTarget][]types.NamespacedName
}

// PolicyConditions are a policy's conditions, the same under each
// ancestor (Gateway) it is reported to.
type PolicyConditions struct {
	Accepted, ResolvedRefs Reason
}

type tlsTarget struct {
	namespace, service, section string
}

// Condition reasons of a BackendTLSPolicy this controller writes beside
// the API's own constants.
const (
	policyAccepted = string(gatewayv1.PolicyReasonAccepted)
	policyResolved = string(gatewayv1.BackendTLSPolicyReasonResolvedRefs)
)

// DecideBackendTLS decides policies, reading their CA certificates
// through ca. Two policies on one target (a Service port, or a whole
// Service) are one too many: the older (then the first by
// namespace/name) applies, the other is Accepted: False, Conflicted. A
// policy for a port wins over one for the whole Service on that port,
// without a conflict.
func DecideBackendTLS(policies []*gatewayv1.BackendTLSPolicy, ca CACertificate) BackendTLS {
	out := BackendTLS{Policies: map[types.NamespacedName]PolicyConditions{}, winners: map[tlsTarget]types.NamespacedName{},
		tls: map[types.NamespacedName]*exampleapi.BackendTLS{}, targeting: map[tlsTarget][]types.NamespacedName{}}
	ordered := policiesOldestFirst(policies)
	read := CAConfigMaps(policies)
	budgeted := func(policy objectref.Ref, name string) (string, string) {
		if !read[types.NamespacedName{Namespace: policy.Namespace, Name: name}] {
			return "", fmt.Sprintf("namespace %s's BackendTLSPolicies name more than %d CA ConfigMaps, and older policies named %d others: "+
				"it is not read", policy.Namespace, MaxCAConfigMaps, MaxCAConfigMaps)
		}
		return ca(policy, name)
	}
	for _, p := range ordered {
		nn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		conds, tls := decidePolicy(p, budgeted)
		conflict := ""
		var mine []tlsTarget
		for _, ref := range p.Spec.TargetRefs {
			if ref.Group != "" || ref.Kind != "Service" {
				continue // only Services are backends here; another kind is none of this controller's
			}
			t := tlsTarget{namespace: p.Namespace, service: string(ref.Name)}
			if ref.SectionName != nil {
				t.section = string(*ref.SectionName)
			}
			if w, taken := out.winners[t]; taken && conflict == "" {
				conflict = fmt.Sprintf("BackendTLSPolicy %s already applies to Service %s%s: the older policy (then the first by namespace/name) does",
					w.Name, t.service, sectionSaid(t.section))
			}
			mine = append(mine, t)
			out.targeting[t] = append(out.targeting[t], nn)
		}
		if conflict != "" {
			conds.Accepted = Reason{Reason: string(gatewayv1.PolicyReasonConflicted), Message: conflict}
			out.Policies[nn] = conds
			continue
		}
		for _, t := range mine {
			out.winners[t] = nn
		}
		out.Policies[nn] = conds
		out.tls[nn] = tls
	}
	return out
}

// MaxCAConfigMaps bounds the CA ConfigMaps a namespace's policies have
// read: each is a watch the controller holds (one ConfigMap alone, so no
// other is read), and a tenant naming a thousand would cost it a
// thousand, shared with every team (docs/tenancy.md).
const MaxCAConfigMaps = 16

// CAConfigMaps are the ConfigMaps policies name as CA certificates that
// are read: in each namespace, the first MaxCAConfigMaps its policies
// name, oldest policy first. The others do not resolve.
func CAConfigMaps(policies []*gatewayv1.BackendTLSPolicy) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	per := map[string]int{}
	for _, p := range policiesOldestFirst(policies) {
		for _, r := range p.Spec.Validation.CACertificateRefs {
			nn := types.NamespacedName{Namespace: p.Namespace, Name: string(r.Name)}
			if r.Group != "" || r.Kind != "ConfigMap" || out[nn] || per[p.Namespace] == MaxCAConfigMaps {
				continue
			}
			out[nn] = true
			per[p.Namespace]++
		}
	}
	return out
}

// policiesOldestFirst is policies by age, then namespace/name.
func policiesOldestFirst(policies []*gatewayv1.BackendTLSPolicy) []*gatewayv1.BackendTLSPolicy {
	out := slices.Clone(policies)
	slices.SortFunc(out, func(a, b *gatewayv1.BackendTLSPolicy) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func sectionSaid(section string) string {
	if section == "" {
		return ""
	}
	return " port " + section
}

// decidePolicy is one policy's conditions and TLS (nil: it fails
// closed). What the cloud would refuse is refused here, in its words.
func decidePolicy(p *gatewayv1.BackendTLSPolicy, ca CACertificate) (PolicyConditions, *exampleapi.BackendTLS) {
	v := p.Spec.Validation
	conds := PolicyConditions{Accepted: Reason{Reason: policyAccepted}, ResolvedRefs: Reason{Reason: policyResolved}}
	from := objectref.Ref{Kind: objectref.KindBackendTLSPolicy, Namespace: p.Namespace, Name: p.Name}
	var bundles, unresolved []string
	invalidKind := false
	for i, ref := range v.CACertificateRefs {
		at := fmt.Sprintf("caCertificateRefs[%d] (%s)", i, ref.Name)
		if ref.Group != "" || ref.Kind != "ConfigMap" {
			invalidKind = invalidKind || len(unresolved) == 0
			unresolved = append(unresolved, fmt.Sprintf("%s: kind %s of group %q is not supported (a ConfigMap with the CA in ca.crt is)", at, ref.Kind, ref.Group))
			continue
		}
		bundle, why := ca(from, string(ref.Name))
		if why == "" && exampleapi.CheckCABundle(bundle) != nil {
			// Named, never quoted: the content is the ConfigMap's.
			why = fmt.Sprintf("its ca.crt is not a CA bundle the load balancer takes (PEM CERTIFICATE blocks only, 1-%d, at most %d KiB)",
				exampleapi.MaxCABundleCertificates, exampleapi.MaxCABundleBytes>>10)
		}
		if why != "" {
			unresolved = append(unresolved, at+": "+why)
			continue
		}
		bundles = append(bundles, strings.TrimSpace(bundle)+"\n")
	}
	if len(unresolved) > 0 {
		reason := gatewayv1.BackendTLSPolicyReasonInvalidCACertificateRef
		if invalidKind {
			reason = gatewayv1.BackendTLSPolicyReasonInvalidKind
		}
		conds.ResolvedRefs = Reason{Reason: string(reason), Message: strings.Join(unresolved, "; ")}
	}
	tls := &exampleapi.BackendTLS{CABundle: strings.Join(bundles, ""), ServerName: string(v.Hostname)}
	for _, san := range v.SubjectAltNames {
		switch san.Type {
		case gatewayv1.HostnameSubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, string(san.Hostname))
		case gatewayv1.URISubjectAltNameType:
			tls.SubjectAltNames = append(tls.SubjectAltNames, string(san.URI))
		}
	}
	invalid := func(format string, args ...any) (PolicyConditions, *exampleapi.BackendTLS) {
		conds.Accepted = Reason{Reason: string(gatewayv1.PolicyReasonInvalid), Message: fmt.Sprintf(format, args...)}
		return conds, nil
	}
	switch {
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != "":
		return invalid("wellKnownCACertificates %s is not supported: the Example load balancer verifies backends only against the CA certificates a policy names in caCertificateRefs", *v.WellKnownCACertificates)
	case len(v.CACertificateRefs) > 0 && len(bundles) == 0:
		conds.Accepted = Reason{Reason: string(gatewayv1.BackendTLSPolicyReasonNoValidCACertificate), Message: "none of its caCertificateRefs resolves"}
		return conds, nil
	case len(bundles) == 0:
		return invalid("it names no CA certificate (caCertificateRefs)")
	}
	r := exampleapi.Rule{Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-policy", Port: 1, TLS: tls}}}
	if err := exampleapi.CheckRule(r); err != nil {
		// The bundle's checks passed above, one by one: what is left is
		// the names, or the bundles together past the cloud's limits.
		if re := (*exampleapi.RuleError)(nil); errors.As(err, &re) {
			return invalid("the Example load balancer cannot take it: %s: %s", policyField(re.Field), re.Reason)
		}
		return invalid("the Example load balancer cannot take it: %v", err)
	}
	return conds, tls
}

// policyField names a field of the cloud's backend TLS by the policy's.
func policyField(f string) string {
	f = strings.TrimPrefix(f, "backends[0].tls.")
	switch {
	case f == "server_name":
		return "validation.hostname"
	case strings.HasPrefix(f, "subject_alt_names"):
		return "validation.subjectAltNames" + strings.TrimPrefix(f, "subject_alt_names")
	case f == "ca_bundle":
		return "validation.caCertificateRefs (together)"
	}
	return f
}

// For is the policy applying to a Service's port (by name) and its TLS:
// a policy naming the port, else one naming the whole Service; ok false
// when none does. A nil TLS fails closed.
func (b BackendTLS) For(namespace, service, port string) (policy types.NamespacedName, tls *exampleapi.BackendTLS, ok bool) {
	p, found := b.winners[tlsTarget{namespace, service, port}]
	if !found {
		p, found = b.winners[tlsTarget{namespace, service, ""}]
	}
	if !found {
		return types.NamespacedName{}, nil, false
	}
	return p, b.tls[p], true
}

// Targeting are the policies naming a Service's port (by name) or the
// whole Service, conflicted or not: those whose status the Gateways
// reaching it report.
func (b BackendTLS) Targeting(namespace, service, port string) []types.NamespacedName {
	out := slices.Clone(b.targeting[tlsTarget{namespace, service, ""}])
	if port != "" {
		out = append(out, b.targeting[tlsTarget{namespace, service, port}]...)
	}
	return out
}
