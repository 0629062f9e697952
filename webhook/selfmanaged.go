package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// SelfManagedOptions configure NewSelfManaged.
type SelfManagedOptions struct {
	Client kubernetes.Interface
	// Namespace and SecretName name the Secret all replicas share.
	Namespace, SecretName string
	// ServiceName and ServiceNamespace (default Namespace) give the DNS
	// names <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local.
	ServiceName, ServiceNamespace string
	ExtraDNSNames                 []string
	// ExtraIPs are IP SANs, e.g. 127.0.0.1 for tests.
	ExtraIPs []net.IP
	// MutatingConfigs and ValidatingConfigs name the webhook
	// configurations whose every webhook gets the CA bundle. They are
	// never created.
	MutatingConfigs, ValidatingConfigs []string
	// CAValidity (default 1 year) and CertValidity (default 90 days) are
	// the lifetimes of new certificates.
	CAValidity, CertValidity time.Duration
	// RenewFraction is the part of a certificate's lifetime after which it
	// is renewed (default 2/3).
	RenewFraction float64
	// Resync is how often the Secret and configurations are checked
	// (default 1 minute).
	Resync time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// SelfManaged keeps the webhook CA and serving certificate in a Secret
// shared by the replicas, and serves the certificate found there.
type SelfManaged struct {
	o      SelfManagedOptions
	policy policy

	cert      atomic.Pointer[tls.Certificate]
	bundle    atomic.Pointer[[]byte]
	loaded    []byte // tls.crt then tls.key of cert; Run's goroutine only
	ready     chan struct{}
	readyOnce sync.Once
}

// NewSelfManaged checks o and fills in its defaults.
func NewSelfManaged(o SelfManagedOptions) (*SelfManaged, error) {
	if o.Client == nil || o.Namespace == "" || o.SecretName == "" {
		return nil, errors.New("self-managed webhook certificates: Client, Namespace and SecretName are required")
	}
	if o.ServiceNamespace == "" {
		o.ServiceNamespace = o.Namespace
	}
	var dns []string
	if o.ServiceName != "" {
		svc := o.ServiceName + "." + o.ServiceNamespace + ".svc"
		dns = append(dns, svc, svc+".cluster.local")
	}
	dns = append(dns, o.ExtraDNSNames...)
	if len(dns) == 0 && len(o.ExtraIPs) == 0 {
		return nil, errors.New("self-managed webhook certificates: no ServiceName, ExtraDNSNames or ExtraIPs to certify")
	}
	o.CAValidity = cmp.Or(o.CAValidity, 365*24*time.Hour)
	o.CertValidity = cmp.Or(o.CertValidity, 90*24*time.Hour)
	o.RenewFraction = cmp.Or(o.RenewFraction, 2.0/3)
	o.Resync = cmp.Or(o.Resync, time.Minute)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CAValidity < 0 || o.CertValidity < 0 || o.Resync < 0 || o.RenewFraction <= 0 || o.RenewFraction >= 1 {
		return nil, fmt.Errorf("self-managed webhook certificates: invalid validity, resync or renew fraction (%v)", o.RenewFraction)
	}
	return &SelfManaged{
		o: o,
		policy: policy{dnsNames: dns, ips: o.ExtraIPs, caValidity: o.CAValidity,
			certValidity: o.CertValidity, renewFraction: o.RenewFraction},
		ready: make(chan struct{}),
	}, nil
}

// Run keeps the Secret, the served certificate and the CA bundles of the
// webhook configurations up to date until ctx is done, then returns nil.
// It syncs every Resync and whenever a configuration changes. Errors are
// logged and retried (with backoff up to Resync).
func (s *SelfManaged) Run(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	s.watchConfigs(ctx, changed)
	backoff := time.Second
	for {
		wait := s.o.Resync
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Syncing webhook certificates", "secret", klog.KRef(s.o.Namespace, s.o.SecretName))
			wait, backoff = min(backoff, s.o.Resync), min(2*backoff, s.o.Resync)
		} else {
			backoff = time.Second
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-changed:
			t.Stop()
		case <-t.C:
		}
	}
}

// GetCertificate implements CertSource.
func (s *SelfManaged) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("webhook serving certificate not loaded yet")
}

// Ready is closed once a serving certificate is loaded.
func (s *SelfManaged) Ready() <-chan struct{} { return s.ready }

// CABundle is the PEM bundle clients must trust (nil before Ready).
func (s *SelfManaged) CABundle() []byte {
	if b := s.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

func (s *SelfManaged) sync(ctx context.Context) error {
	data, err := s.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := s.load(data); err != nil {
		return err
	}
	return s.inject(ctx, data[KeyCABundle])
}

// load serves the certificate in data if it is not served already.
func (s *SelfManaged) load(data map[string][]byte) error {
	crt, key := data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]
	bundle := data[KeyCABundle]
	s.bundle.Store(&bundle)
	pair := append(append([]byte{}, crt...), key...)
	if bytes.Equal(pair, s.loaded) {
		return nil
	}
	c, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return fmt.Errorf("loading serving certificate from Secret %s/%s: %w", s.o.Namespace, s.o.SecretName, err)
	}
	s.cert.Store(&c)
	s.loaded = pair
	klog.InfoS("Serving webhook certificate", "serial", c.Leaf.SerialNumber.Text(16),
		"issuer", c.Leaf.Issuer.CommonName, "notAfter", c.Leaf.NotAfter)
	s.readyOnce.Do(func() { close(s.ready) })
	return nil
}
