package servicelb

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
)

// TLSSecretsRole is the ClusterRole that lets the controller read the
// Secrets of a namespace, bound there with a RoleBinding: it reads the
// TLS Secrets Services name only where a platform team allowed it.
const TLSSecretsRole = "example-ccm:tls-secrets" //nolint:gosec // a ClusterRole name, not a credential

// CertificateSecretError is a TLS Secret a Service names that cannot
// serve: missing, unreadable, of another type, or holding a certificate or
// key the cloud would refuse. It never quotes the Secret's content.
type CertificateSecretError struct {
	Namespace, Name string
	Reason          string
}

func (e *CertificateSecretError) Error() string {
	return fmt.Sprintf("TLS Secret %s/%s (annotation %s) %s; nothing was planned: the load balancer keeps serving what it serves",
		e.Namespace, e.Name, annotations.LBTLSSecrets, e.Reason)
}

// EventReason is the reason of the reconcile's failure event (package
// review): the tenant's Secret to fix.
func (e *CertificateSecretError) EventReason() string { return "CertificateSecretInvalid" }

// CertificatesUnsupportedError is a Service naming TLS Secrets while the
// controller runs a distribution without write-only arguments.
type CertificatesUnsupportedError struct {
	Distribution string
}

func (e *CertificatesUnsupportedError) Error() string {
	return fmt.Sprintf("annotation %s is refused: certificates from TLS Secrets need Terraform 1.11 or later (write-only arguments), "+
		"and the controller runs %s (terraform.distribution); use %s with certificates already in the cloud",
		annotations.LBTLSSecrets, e.Distribution, annotations.LBCertificateIDs)
}

// EventReason is the reason of the reconcile's failure event (package
// review).
func (e *CertificatesUnsupportedError) EventReason() string { return "CertificatesUnsupported" }

// TLSSecrets reads the TLS Secrets Services name, for the engine
// (engine.Options.TLS, its Read), and those Gateways' listeners serve.
type TLSSecrets struct {
	cfg *cloudconfig.Config
	// client reads Secrets (nil until UseClients).
	client kubernetes.Interface
	// redact keeps the private key of every TLS Secret read out of events
	// and the audit log, by Secret (review.Board.RedactFrom; no values:
	// the Secret is named no more).
	redact func(source string, values ...string)
}

// NewTLSSecrets reads TLS Secrets under cfg, redacting each private key
// read through redact (review.Board.RedactFrom).
func NewTLSSecrets(cfg *cloudconfig.Config, redact func(source string, values ...string)) *TLSSecrets {
	return &TLSSecrets{cfg: cfg, redact: redact}
}

// secretSource names a TLS Secret's key among the values redacted.
func secretSource(namespace, name string) string { return "TLS Secret " + namespace + "/" + name }

// forgetKeys stops redacting the keys of the TLS Secrets svc names that
// no other Service of this controller names (svc is deleted): what is
// redacted stays bounded by the Secrets in use.
func (l *services) forgetKeys(svc *v1.Service) {
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil || len(ann.TLSSecrets) == 0 {
		return
	}
	named := map[string]bool{}
	for _, other := range l.tlsServices() {
		if other.UID == svc.UID {
			continue
		}
		if a, err := annotations.Parse(other.Annotations); err == nil {
			for _, n := range a.TLSSecrets {
				named[other.Namespace+"/"+n] = true
			}
		}
	}
	for _, n := range ann.TLSSecrets {
		if !named[svc.Namespace+"/"+n] {
			l.board.RedactFrom(secretSource(svc.Namespace, n))
		}
	}
}

// Read is the engine's TLSSource: nil for a Service that names no TLS
// Secret (or whose annotations do not parse: rendering reports that).
func (t *TLSSecrets) Read(ctx context.Context, svc *v1.Service) (*engine.TLS, error) {
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil || len(ann.TLSSecrets) == 0 {
		return nil, nil //nolint:nilerr // the renderer reports bad annotations, with the field
	}
	if d := t.cfg.Terraform.Distribution; engine.Distribution(d) == engine.DistributionTofu {
		return nil, &CertificatesUnsupportedError{Distribution: d}
	}
	if t.client == nil {
		return nil, fmt.Errorf("annotation %s: no Kubernetes client to read TLS Secrets", annotations.LBTLSSecrets)
	}
	tls := &engine.TLS{Certificates: map[string]string{}, Keys: map[string]string{}}
	for _, name := range ann.TLSSecrets {
		crt, key, err := t.secret(ctx, svc.Namespace, name)
		if err != nil {
			return nil, err
		}
		tls.Certificates[name], tls.Keys[name] = crt, key
	}
	return tls, nil
}

// secret reads and checks one TLS Secret, as the cloud would check its
// certificate and key.
func (t *TLSSecrets) secret(ctx context.Context, namespace, name string) (crt, key string, err error) {
	invalid := func(format string, args ...any) error {
		return &CertificateSecretError{Namespace: namespace, Name: name, Reason: fmt.Sprintf(format, args...)}
	}
	s, err := t.client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", "", invalid("does not exist")
	case apierrors.IsForbidden(err):
		return "", "", invalid("cannot be read by the controller: bind the ClusterRole %s to its ServiceAccount in namespace %s with a RoleBinding (docs/certificates.md)",
			TLSSecretsRole, namespace)
	case err != nil:
		return "", "", fmt.Errorf("read TLS Secret %s/%s: %w", namespace, name, err)
	case s.Type != v1.SecretTypeTLS:
		return "", "", invalid("is of type %q, not %s", s.Type, v1.SecretTypeTLS)
	}
	crt, key = string(s.Data[v1.TLSCertKey]), string(s.Data[v1.TLSPrivateKeyKey])
	if exampleapi.IsPrivateKey(key) {
		// Before the checks: a real key that fails them is kept out of
		// events too. Any other text is not a key, and redacted it would
		// blank that text in every namespace's events and audit lines.
		t.redact(secretSource(namespace, name), key)
	}
	if crt == "" {
		return "", "", invalid("has no %s", v1.TLSCertKey)
	}
	if key == "" {
		return "", "", invalid("has no %s", v1.TLSPrivateKeyKey)
	}
	if _, err := exampleapi.InspectCertificate(crt); err != nil {
		return "", "", invalid("%s: %v", v1.TLSCertKey, err)
	}
	if err := exampleapi.CheckPrivateKey(crt, key); err != nil {
		return "", "", invalid("%s: %v", v1.TLSPrivateKeyKey, err)
	}
	if !exampleapi.IsPrivateKey(key) {
		// Else served, and not redacted (above): only a bare key is.
		return "", "", invalid("%s: holds PEM headers or text besides its key; keep the one PEM block alone", v1.TLSPrivateKeyKey)
	}
	return crt, key, nil
}

// resyncTLS converges, every interval, each Service that names TLS
// Secrets: the service controller does not watch Secrets, so this is how a
// renewed certificate reaches the load balancer. An unchanged Secret costs
// a GET and no terraform (the engine's inputs digest covers the
// certificates). It uses the nodes the service controller last passed, and
// waits until it has passed some: with none, a load balancer listing its
// nodes would be planned without targets.
func (l *services) resyncTLS(ctx context.Context, every time.Duration) {
	utilwait.UntilWithContext(ctx, func(ctx context.Context) {
		nodes := l.groups.lastNodes()
		if len(nodes) == 0 {
			return
		}
		for _, svc := range l.tlsServices() {
			if ctx.Err() != nil {
				return
			}
			if _, err := l.ensure(ctx, svc, nodes); err != nil {
				klog.V(2).InfoS("TLS resync: the load balancer did not converge", "service", klog.KObj(svc), "err", err)
			}
		}
	}, every)
}

// tlsServices are the Services the service controller gives this
// provider (type LoadBalancer, no load balancer class, not being deleted,
// in no group) whose annotations name TLS Secrets, from its informer.
func (l *services) tlsServices() []*v1.Service {
	if l.groups.services == nil {
		return nil
	}
	var out []*v1.Service
	for _, obj := range l.groups.services.List() {
		svc, ok := obj.(*v1.Service)
		if !ok || !ours(svc) || svc.DeletionTimestamp != nil ||
			svc.Annotations[string(annotations.LBTLSSecrets)] == "" || svc.Annotations[string(annotations.LBGroup)] != "" {
			continue
		}
		out = append(out, svc)
	}
	return out
}
