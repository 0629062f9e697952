package webhook

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		now := s.o.Now()
		sec, err := secrets.Get(ctx, s.o.SecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			data, reasons, err := s.policy.reconcile(nil, now)
			if err != nil {
				return nil, fmt.Errorf("webhook certificates for Secret %s: %w", ref, err)
			}
			created, err := secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: s.o.SecretName, Namespace: s.o.Namespace,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "example-cloud-controller-manager"}},
				Type: corev1.SecretTypeTLS,
				Data: data,
			}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				klog.V(2).InfoS("Webhook certificate Secret created by another replica; reading it", "secret", ref)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("creating webhook certificate Secret %s: %w", ref, err)
			}
			klog.InfoS("Created webhook certificate Secret", "secret", ref, "reasons", reasons)
			return created.Data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading webhook certificate Secret %s: %w", ref, err)
		}
		data, reasons, err := s.policy.reconcile(sec.Data, now)
		if err != nil {
			return nil, fmt.Errorf("webhook certificates in Secret %s: %w", ref, err)
		}
		if len(reasons) == 0 {
			return sec.Data, nil
		}
		sec = sec.DeepCopy()
		sec.Data = data
		updated, err := secrets.Update(ctx, sec, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			klog.V(2).InfoS("Webhook certificate Secret changed by another replica; reading it", "secret", ref)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("updating webhook certificate Secret %s: %w", ref, err)
		}
		klog.InfoS("Renewed webhook certificates", "secret", ref, "reasons", reasons)
		return updated.Data, nil
	}
	return nil, fmt.Errorf("webhook certificate Secret %s: still changing under us after %d attempts", ref, maxAttempts)
}
