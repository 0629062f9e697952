package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

func TestPairCertificates(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	certs := map[string]string{"a": "A2", "b": "B", "c": "C"}
	managed := []runner.Instance{
		{Address: renderer.CertificateAddress("c"), ID: "cert-c"},
		{Address: "module.load_balancer.example_load_balancer.this", ID: "lb-1"},
	}
	for _, tc := range []struct {
		name   string
		unused []UnusedCertificate
		pairs  []slotPair
		left   []string
	}{
		{name: "none"},
		{
			name:   "a recorded certificate that no load balancer uses yet is not taken",
			unused: []UnusedCertificate{{ID: "cert-c", CertificatePEM: "C", CreatedAt: t0}},
		},
		{
			name:   "the same text goes to its Secret, the rest by name and age",
			unused: []UnusedCertificate{{ID: "old-a", CertificatePEM: "A1", CreatedAt: t0}, {ID: "b1", CertificatePEM: "B", CreatedAt: t0.Add(time.Minute)}},
			pairs:  []slotPair{{secret: "b", id: "b1"}, {secret: "a", id: "old-a"}},
		},
		{
			name: "more than the state lacks: the oldest are taken, the rest left",
			unused: []UnusedCertificate{
				{ID: "x3", CertificatePEM: "X", CreatedAt: t0.Add(2 * time.Minute)},
				{ID: "x1", CertificatePEM: "X", CreatedAt: t0},
				{ID: "x2", CertificatePEM: "X", CreatedAt: t0.Add(time.Minute)},
			},
			pairs: []slotPair{{secret: "a", id: "x1"}, {secret: "b", id: "x2"}},
			left:  []string{"x3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pairs, left := pairCertificates(certs, managed, tc.unused)
			if !slices.Equal(pairs, tc.pairs) || !slices.Equal(left, tc.left) {
				t.Errorf("pairs %v left %v, want %v and %v", pairs, left, tc.pairs, tc.left)
			}
		})
	}
}
