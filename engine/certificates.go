package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// A certificate an apply uploaded and could not record (the controller
// killed, the state backend down) holds a copy of a private key that no
// state knows of. The certificates module's on_duplicate adopts it when
// the next apply uploads the same text; when the TLS Secret was renewed in
// between, or when a deletion comes first, only the controller can tell it
// from the Service's recorded certificates: it imports it into the state,
// where Terraform replaces (or destroys) it like any other.

// UnusedCertificate is a certificate in the cloud that no load balancer
// uses (Options.FindCertificates).
type UnusedCertificate struct {
	ID             string
	CertificatePEM string
	CreatedAt      time.Time
}

// recoverCertificates imports into j's state the certificates tagged with
// owner that no load balancer uses and no state holds, each at the
// address of one of tls's certificates that the state lacks: one of the
// same text first, else the oldest. The plan that follows replaces a
// stale one (its Secret was renewed) and keeps one of the same text; a
// destroy destroys them all. It returns the ids imported; those left
// (more than the state lacks) are logged.
func (e *Engine) recoverCertificates(ctx context.Context, j runner.Job, tls *TLS, owner map[string]string) ([]string, error) {
	if e.findCertificates == nil || tls == nil || len(tls.Certificates) == 0 {
		return nil, nil
	}
	unused, err := e.findCertificates(ctx, owner)
	if err != nil || len(unused) == 0 {
		return nil, err
	}
	managed, err := e.runner.Managed(ctx, j, renderer.CertificateType)
	if err != nil {
		return nil, fmt.Errorf("look for certificates an interrupted apply uploaded: %w", err)
	}
	pairs, left := pairCertificates(tls.Certificates, managed, unused)
	var imported []string
	for _, p := range pairs {
		if err := e.runner.Import(ctx, j, renderer.CertificateAddress(p.secret), p.id); err != nil {
			return imported, fmt.Errorf("import certificate %s that an interrupted apply uploaded for TLS Secret %s: %w", p.id, p.secret, err)
		}
		klog.InfoS("Imported a certificate an interrupted apply uploaded", "workspace", j.Key, "certificate", p.id, "secret", p.secret)
		imported = append(imported, p.id)
	}
	if len(left) > 0 {
		klog.InfoS("Certificates an interrupted apply uploaded stay: the state lacks no certificate to import them as", "workspace", j.Key, "certificates", left)
	}
	return imported, nil
}

// slotPair is an unrecorded certificate and the TLS Secret whose address
// it is imported at.
type slotPair struct{ secret, id string }

// pairCertificates pairs the unused certificates no state holds with the
// Secrets (of certs, by name) whose address the state lacks: same text
// first, then by name and age. left are the ids without a Secret.
func pairCertificates(certs map[string]string, managed []runner.Instance, unused []UnusedCertificate) (pairs []slotPair, left []string) {
	held, recorded := map[string]bool{}, map[string]bool{}
	for _, in := range managed {
		held[in.ID], recorded[in.Address] = true, true
	}
	var secrets []string
	for _, name := range slices.Sorted(maps.Keys(certs)) {
		if !recorded[renderer.CertificateAddress(name)] {
			secrets = append(secrets, name)
		}
	}
	strays := slices.DeleteFunc(slices.Clone(unused), func(c UnusedCertificate) bool { return held[c.ID] })
	slices.SortFunc(strays, func(a, b UnusedCertificate) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	taken := map[string]bool{}
	take := func(match func(secret string, c UnusedCertificate) bool) {
		for _, s := range secrets {
			if taken[s] {
				continue
			}
			for i, c := range strays {
				if match(s, c) {
					pairs, taken[s] = append(pairs, slotPair{secret: s, id: c.ID}), true
					strays = slices.Delete(strays, i, i+1)
					break
				}
			}
		}
	}
	take(func(s string, c UnusedCertificate) bool { return c.CertificatePEM == certs[s] })
	take(func(string, UnusedCertificate) bool { return true })
	for _, c := range strays {
		left = append(left, c.ID)
	}
	return pairs, left
}
