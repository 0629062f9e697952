package cloudconfig

import (
	"fmt"
	"net"
	"time"
)

// WebhookConfig is the admission webhook every replica serves: the
// preview of a Service edit as kubectl warnings, and the author stamp
// (docs/preview.md). Off unless Enabled.
type WebhookConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// Address is where it listens (default ":10260").
	Address string `json:"address,omitempty"`
	// PreviewBudget is how long a preview may take before it falls back
	// to comparing the renderings (default 1s; the webhook configuration's
	// timeoutSeconds must be above it).
	PreviewBudget Duration `json:"previewBudget,omitempty"`
	// PreviewsPerMinute and PreviewBurst bound the speculative plans of
	// each namespace (a token bucket; default 30 a minute, bursts of 5):
	// past them a dry run is previewed from the renderings. A namespace
	// previewing in a loop spends its own budget, not the controller's
	// CPU.
	PreviewsPerMinute int `json:"previewsPerMinute,omitempty"`
	PreviewBurst      int `json:"previewBurst,omitempty"`
	// Refuse turns the controller's own refusals (an unknown annotation, a
	// reference without consent) into a denial at admission, instead of
	// a warning. Off by default: the webhook never blocks an edit the
	// controller would accept, and it is fail-open.
	Refuse bool `json:"refuse,omitempty"`
	// Certificates: SelfManaged (default) or Files.
	Certificates WebhookCertificates `json:"certificates,omitempty"`
}

// WebhookCertificates is where the serving certificate comes from.
type WebhookCertificates struct {
	// Mode is self-managed (the controller keeps a CA and a serving
	// certificate in a Secret, rotates them and injects the CA into the
	// webhook configurations) or files (cert-manager's Secret mounted at
	// CertFile and KeyFile; cert-manager injects the CA).
	Mode string `json:"mode,omitempty"`
	// SecretName (self-managed) in the controller's namespace; default
	// example-ccm-webhook-tls.
	SecretName string `json:"secretName,omitempty"`
	// ServiceName is the Service in front of the webhook port, for the
	// certificate's DNS names; default example-ccm-webhook.
	ServiceName string `json:"serviceName,omitempty"`
	// ExtraIPs are IP addresses the certificate also names (a webhook
	// configuration reaching the controller by URL).
	ExtraIPs []string `json:"extraIPs,omitempty"`
	// CertFile and KeyFile (files).
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// Webhook certificate modes.
const (
	CertificatesSelfManaged = "self-managed"
	CertificatesFiles       = "files"
)

// The names the shipped manifests give the webhook configurations.
const (
	MutatingWebhookName   = "example-ccm-service-author"
	ValidatingWebhookName = "example-ccm-service-preview"
)

func (w *WebhookConfig) defaults() {
	if w.Address == "" {
		w.Address = ":10260"
	}
	if w.PreviewBudget.Duration == 0 {
		w.PreviewBudget.Duration = time.Second
	}
	if w.PreviewsPerMinute == 0 {
		w.PreviewsPerMinute = 30
	}
	if w.PreviewBurst == 0 {
		w.PreviewBurst = 5
	}
	if w.Certificates.Mode == "" {
		w.Certificates.Mode = CertificatesSelfManaged
	}
	if w.Certificates.SecretName == "" {
		w.Certificates.SecretName = "example-ccm-webhook-tls"
	}
	if w.Certificates.ServiceName == "" {
		w.Certificates.ServiceName = "example-ccm-webhook"
	}
}

func (w *WebhookConfig) validate(bad func(field, format string, args ...any)) {
	if !w.Enabled {
		return
	}
	if _, _, err := net.SplitHostPort(w.Address); err != nil {
		bad("webhook.address", "%v", err)
	}
	if w.PreviewBudget.Duration < 0 || w.PreviewBudget.Duration > 10*time.Second {
		bad("webhook.previewBudget", "%s: want at most 10s (the API server waits for the webhook at most 30s)", w.PreviewBudget.Duration)
	}
	if w.PreviewsPerMinute < 0 || w.PreviewBurst < 0 {
		bad("webhook.previewsPerMinute", "%d, burst %d: want positive numbers", w.PreviewsPerMinute, w.PreviewBurst)
	}
	switch w.Certificates.Mode {
	case CertificatesSelfManaged:
	case CertificatesFiles:
		if w.Certificates.CertFile == "" || w.Certificates.KeyFile == "" {
			bad("webhook.certificates", "mode files needs certFile and keyFile")
		}
	default:
		bad("webhook.certificates.mode", "%q: want %s or %s", w.Certificates.Mode, CertificatesSelfManaged, CertificatesFiles)
	}
	for i, ip := range w.Certificates.ExtraIPs {
		if net.ParseIP(ip) == nil {
			bad(fmt.Sprintf("webhook.certificates.extraIPs[%d]", i), "%q is not an IP address", ip)
		}
	}
}
