package webhook

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/klog/v2"
)

// maxAttempts bounds the re-reads after losing a race to another replica;
// losing twice in a row already means they agree on the content.
const maxAttempts = 5

// ensureSecret creates or renews the shared Secret as needed and returns
// its data. Every write is conditional (create, or update at the read
// resourceVersion): a replica that loses a race reads the winner's Secret
// and decides again, so all replicas end up with the same certificates.
func (s *SelfManaged) ensureSecret(ctx context.Context) (map[string][]byte, error) {
	secrets := s.o.Client.CoreV1().Secrets(s.o.Namespace)
	ref := klog.KRef(s.o.Namespace, s.o.SecretName)
	for range maxAttempts {
		sec, err := secrets.Get(ctx, s.o.SecretName, metav1.GetOptions{})
		exists := err == nil
		switch {
		case apierrors.IsNotFound(err):
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: s.o.SecretName, Namespace: s.o.Namespace,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "example-cloud-controller-manager"}},
				Type: corev1.SecretTypeTLS,
			}
		case err != nil:
			return nil, fmt.Errorf("reading webhook certificate Secret %s: %w", ref, err)
		}
		data, reasons, err := s.policy.reconcile(sec.Data, s.o.Now())
		if err != nil {
			return nil, fmt.Errorf("webhook certificates in Secret %s: %w", ref, err)
		}
		if exists && len(reasons) == 0 {
			return sec.Data, nil
		}
		sec = sec.DeepCopy()
		sec.Data = data
		written, err := writeSecret(ctx, secrets, sec, exists)
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			klog.V(2).InfoS("Webhook certificate Secret written by another replica; reading it again", "secret", ref)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("writing webhook certificate Secret %s: %w", ref, err)
		}
		klog.InfoS("Wrote webhook certificates", "secret", ref, "created", !exists, "reasons", reasons)
		return written.Data, nil
	}
	return nil, fmt.Errorf("webhook certificate Secret %s: still changing under us after %d attempts", ref, maxAttempts)
}

// writeSecret creates sec, or updates it at the resourceVersion it was
// read at when it exists.
func writeSecret(ctx context.Context, secrets typedcorev1.SecretInterface, sec *corev1.Secret, exists bool) (*corev1.Secret, error) {
	if exists {
		return secrets.Update(ctx, sec, metav1.UpdateOptions{})
	}
	return secrets.Create(ctx, sec, metav1.CreateOptions{})
}
