package renderer

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

// A Service's certificates from TLS Secrets: the root module reads their
// private keys with the provider's ephemeral resource example_private_keys
// (TLSKeysResource), which takes them from the provider's environment
// (TLSKeysEnv, a JSON object by Secret name) that the controller sets for
// every terraform process of the workspace. Ephemeral, they are in no
// file, saved plan or state; they reach the cloud only through the
// certificate's write-only private_key_wo.
const (
	TLSKeysEnv             = "EXAMPLE_PRIVATE_KEYS" // tfprovider.EnvPrivateKeys
	TLSKeysResource        = "example_private_keys"
	TLSKeysName            = "tls"
	CertificatesModuleName = "certificates"
	// CertificateType is the certificates module's resource type.
	CertificateType = "example_certificate"
)

// CertificateAddress is the address of the certificate uploaded from the
// TLS Secret secret, inside a Service's root module.
func CertificateAddress(secret string) string {
	return "module." + CertificatesModuleName + "." + CertificateType + ".this[" + strconv.Quote(secret) + "]"
}

// stickySessions are a listener's cookie sticky sessions.
type stickySessions struct {
	cookieName string
	ttlSeconds int
}

// tlsPorts turns the Service's TCP listeners named by the http-ports and
// https-ports annotations into http and https listeners, with their
// certificates, redirect and sticky sessions. A listed port that is not a
// TCP port of the Service is an error.
func tlsPorts(ls []listener, ann annotations.LoadBalancer) error {
	byPort := map[int]int{}
	for i, l := range ls {
		if l.protocol == "tcp" {
			byPort[l.port] = i
		}
	}
	for _, list := range []struct {
		name  annotations.Name
		ports []int32
		proto string
	}{{annotations.LBHTTPPorts, ann.HTTPPorts, "http"}, {annotations.LBHTTPSPorts, ann.HTTPSPorts, "https"}} {
		for _, p := range list.ports {
			i, ok := byPort[int(p)]
			if !ok {
				return &lbmodel.InputError{Field: "annotation " + string(list.name), Value: strconv.Itoa(int(p)),
					Reason: "is not a TCP port of the Service (spec.ports[*].port)"}
			}
			ls[i].protocol = list.proto
			ls[i].proxyProtocol = false
		}
	}
	redirect := int(ann.HTTPSRedirectPort())
	ttl := int(cmp.Or(ann.StickySessions.TTL, annotations.DefaultStickyCookieTTL).Seconds())
	for i := range ls {
		l := &ls[i]
		switch l.protocol {
		case "https":
			l.certificates = slices.Clone(ann.TLSSecrets)
			l.certificateIDs = slices.Clone(ann.CertificateIDs)
		case "http":
			if ann.RedirectHTTPToHTTPS {
				l.redirectPort = redirect
			}
		default:
			continue
		}
		if ann.StickySessions.Enabled && l.redirectPort == 0 {
			l.sticky = &stickySessions{cookieName: cmp.Or(ann.StickySessions.CookieName, annotations.DefaultStickyCookieName), ttlSeconds: ttl}
		}
	}
	return nil
}

// withoutTLSSecrets is ann as SkipTLSSecrets renders it: nothing that
// needs a Secret's certificate.
func withoutTLSSecrets(ann annotations.LoadBalancer) annotations.LoadBalancer {
	if len(ann.TLSSecrets) == 0 {
		return ann
	}
	ann.HTTPPorts, ann.HTTPSPorts, ann.TLSSecrets, ann.CertificateIDs = nil, nil, nil, nil
	ann.RedirectHTTPToHTTPS, ann.StickySessions = false, annotations.StickySessions{}
	return ann
}

// certificatesFor is the certificates module's certificates input: the
// certificate of every TLS Secret the Service names, from cfg.
func certificatesFor(svc *corev1.Service, secrets []string, cfg Config) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range secrets {
		pem, ok := cfg.Certificates[name]
		if !ok || pem == "" {
			return nil, &lbmodel.InputError{Field: "annotation " + string(annotations.LBTLSSecrets), Value: name,
				Reason: fmt.Sprintf("no certificate was read from Secret %s/%s", svc.Namespace, name)}
		}
		out[name] = pem
	}
	return out, nil
}

// tlsKeys reads the private keys of the Secrets named.
func (r *root) tlsKeys(names []string) {
	r.body.AppendNewline()
	r.body.AppendUnstructuredTokens(commentTokens(
		"The certificates' private keys, by Secret name: the provider reads them from its environment ("+TLSKeysEnv+"),",
		"which the controller sets from the Secrets for every plan and apply. Ephemeral: in no file, saved plan or state."))
	b := r.body.AppendNewBlock("ephemeral", []string{TLSKeysResource, TLSKeysName}).Body()
	b.SetAttributeRaw("names", valueTokens(stringList(names)))
}

// certificatesInputs are the certificates module's arguments: each
// Secret's certificate at key version 1 (a new key comes with a new
// certificate, which replaces it anyway).
func certificatesInputs(certs map[string]string, region string, tags map[string]string) []input {
	entries := map[string]cty.Value{}
	for name, pem := range certs {
		entries[name] = cty.ObjectVal(map[string]cty.Value{
			"certificate_pem":     cty.StringVal(pem),
			"private_key_version": cty.NumberIntVal(1),
		})
	}
	return []input{
		{name: "region", value: cty.StringVal(region)},
		{name: "certificates", value: cty.MapVal(entries)},
		{name: "private_keys", value: cty.NullVal(cty.DynamicPseudoType), tokens: hclwrite.TokensForTraversal(hcl.Traversal{
			hcl.TraverseRoot{Name: "ephemeral"}, hcl.TraverseAttr{Name: TLSKeysResource}, hcl.TraverseAttr{Name: TLSKeysName}, hcl.TraverseAttr{Name: "keys"},
		})},
		{name: "tags", value: stringMap(tags)},
	}
}

// certificateIDsInput is the load balancer module's certificates input:
// the certificates module's ids.
func certificateIDsInput() input {
	return input{name: "certificates", value: cty.NullVal(cty.DynamicPseudoType), tokens: hclwrite.TokensForTraversal(hcl.Traversal{
		hcl.TraverseRoot{Name: "module"}, hcl.TraverseAttr{Name: CertificatesModuleName}, hcl.TraverseAttr{Name: "ids"},
	})}
}

// portKey names the port a listener takes on the load balancer: tcp,
// http and https listeners share the TCP ports.
func (l listener) portKey() string {
	transport := "tcp"
	if l.protocol == "udp" {
		transport = "udp"
	}
	return transport + "/" + strconv.Itoa(l.port)
}
