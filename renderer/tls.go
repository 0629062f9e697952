package renderer

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
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
