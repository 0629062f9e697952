package webhook

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Secret keys besides tls.crt and tls.key: ca.crt is the bundle clients
// trust (current CA first, then older CAs until they expire), ca.key the
// current CA's key.
const (
	KeyCABundle = "ca.crt"
	KeyCAKey    = "ca.key"
)

// policy is what the certificates in the Secret must satisfy.
type policy struct {
	dnsNames      []string
	ips           []net.IP
	caValidity    time.Duration
	certValidity  time.Duration
	renewFraction float64
}

// due reports whether the renewal point of c (renewFraction of its
// lifetime) has passed.
func (p *policy) due(c *x509.Certificate, now time.Time) bool {
	life := c.NotAfter.Sub(c.NotBefore)
	return !now.Before(c.NotBefore.Add(time.Duration(float64(life) * p.renewFraction)))
}

// reconcile returns the Secret data that satisfies p at now, and why it
// differs from data (no reasons: data is fine as it is). It is pure apart
// from key generation, so every renewal decision is unit-tested.
//
// A new CA is put into the bundle one sync before anything is signed with
// it: a serving certificate merely due is not renewed in the step that
// renews the CA, so the webhook configurations trust the new CA first.
func (p *policy) reconcile(data map[string][]byte, now time.Time) (map[string][]byte, []string, error) {
	var reasons []string
	cas := liveCAs(data[KeyCABundle], now)
	var caKey crypto.Signer
	if len(cas) > 0 {
		if k, err := parseSigner(data[KeyCAKey]); err == nil && keyMatches(k, cas[0]) {
			caKey = k
		}
	}
	caRenewed := false
	if caKey == nil || p.due(cas[0], now) {
		if caKey == nil {
			reasons = append(reasons, "no usable CA")
		} else {
			reasons = append(reasons, "CA renewal due")
		}
		ca, key, err := newCA(now, p.caValidity)
		if err != nil {
			return nil, nil, err
		}
		cas, caKey, caRenewed = append([]*x509.Certificate{ca}, cas...), key, true
	}
	out := make(map[string][]byte, len(data)+4)
	for k, v := range data {
		out[k] = v
	}
	if bundle := encodeCerts(cas...); !bytes.Equal(bundle, data[KeyCABundle]) {
		if !caRenewed {
			reasons = append(reasons, "expired CA dropped from the bundle")
		}
		out[KeyCABundle] = bundle
	}
	if caRenewed {
		keyPEM, err := marshalKey(caKey)
		if err != nil {
			return nil, nil, err
		}
		out[KeyCAKey] = keyPEM
	}

	leaf, problem := p.checkServing(data, cas, now)
	if problem == "" && p.due(leaf, now) && !caRenewed {
		problem = "serving certificate renewal due"
	}
	if problem != "" {
		reasons = append(reasons, problem)
		crt, key, err := newServingCert(cas[0], caKey, p.dnsNames, p.ips, now, p.certValidity)
		if err != nil {
			return nil, nil, err
		}
		out[corev1.TLSCertKey], out[corev1.TLSPrivateKeyKey] = crt, key
	}
	if len(reasons) == 0 {
		return data, nil, nil
	}
	return out, reasons, nil
}

// checkServing parses the serving certificate in data and says why it
// cannot be kept ("" if it can).
func (p *policy) checkServing(data map[string][]byte, cas []*x509.Certificate, now time.Time) (*x509.Certificate, string) {
	pair, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, "no usable serving certificate"
	}
	leaf := pair.Leaf
	switch {
	case !now.Before(leaf.NotAfter):
		return leaf, "serving certificate expired"
	case now.Before(leaf.NotBefore):
		return leaf, "serving certificate not valid yet"
	case !sameStrings(leaf.DNSNames, p.dnsNames) || !sameIPs(leaf.IPAddresses, p.ips):
		return leaf, "serving certificate names changed"
	case !slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return leaf.CheckSignatureFrom(ca) == nil }):
		return leaf, "serving certificate issuer not in the CA bundle"
	}
	return leaf, ""
}

// liveCAs parses a CA bundle, dropping expired and unparsable entries.
func liveCAs(bundle []byte, now time.Time) []*x509.Certificate {
	certs, err := cert.ParseCertsPEM(bundle)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(certs, func(c *x509.Certificate) bool {
		return !c.IsCA || !now.Before(c.NotAfter)
	})
}

func keyMatches(k crypto.Signer, c *x509.Certificate) bool {
	pub, ok := k.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(c.PublicKey)
}

func marshalKey(k crypto.Signer) ([]byte, error) {
	b, err := keyutil.MarshalPrivateKeyToPEM(k)
	if err != nil {
		return nil, fmt.Errorf("encoding CA key: %w", err)
	}
	return b, nil
}

func sameStrings(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func sameIPs(a, b []net.IP) bool {
	key := func(ips []net.IP) []string {
		s := make([]string, len(ips))
		for i, ip := range ips {
			s[i] = ip.String()
		}
		return slices.Sorted(slices.Values(s))
	}
	return slices.Equal(key(a), key(b))
}
