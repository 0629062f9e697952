package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// inject sets bundle as the caBundle of every webhook of the named
// configurations. A missing configuration is not an error: the deployment
// may create it after the controller starts, and the next resync injects.
func (s *SelfManaged) inject(ctx context.Context, bundle []byte) error {
	var errs []error
	mutating := s.o.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	for _, name := range s.o.MutatingConfigs {
		errs = append(errs, injectInto(ctx, "MutatingWebhookConfiguration", name,
			func() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
				return mutating.Get(ctx, name, metav1.GetOptions{})
			},
			func(c *admissionregistrationv1.MutatingWebhookConfiguration) int {
				n := 0
				for i := range c.Webhooks {
					n += setBundle(&c.Webhooks[i].ClientConfig, bundle)
				}
				return n
			},
			func(c *admissionregistrationv1.MutatingWebhookConfiguration) error {
				_, err := mutating.Update(ctx, c, metav1.UpdateOptions{})
				return err
			}))
	}
	validating := s.o.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	for _, name := range s.o.ValidatingConfigs {
		errs = append(errs, injectInto(ctx, "ValidatingWebhookConfiguration", name,
			func() (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
				return validating.Get(ctx, name, metav1.GetOptions{})
			},
			func(c *admissionregistrationv1.ValidatingWebhookConfiguration) int {
				n := 0
				for i := range c.Webhooks {
					n += setBundle(&c.Webhooks[i].ClientConfig, bundle)
				}
				return n
			},
			func(c *admissionregistrationv1.ValidatingWebhookConfiguration) error {
				_, err := validating.Update(ctx, c, metav1.UpdateOptions{})
				return err
			}))
	}
	return errors.Join(errs...)
}

// injectInto reads a configuration, sets the bundle (set returns how many
// webhooks changed) and writes it back if needed, retrying on conflicts.
func injectInto[T any](ctx context.Context, kind, name string, get func() (T, error), set func(T) int, update func(T) error) error {
	changed := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := get()
		if err != nil {
			return err
		}
		if changed = set(c); changed == 0 {
			return nil
		}
		return update(c)
	})
	switch {
	case apierrors.IsNotFound(err):
		klog.V(4).InfoS("Webhook configuration not found; injecting at a later resync", "kind", kind, "name", name)
		return nil
	case err != nil:
		return fmt.Errorf("injecting CA bundle into %s %s: %w", kind, name, err)
	case changed > 0:
		klog.InfoS("Injected CA bundle", "kind", kind, "name", name, "webhooks", changed)
	}
	return nil
}

func setBundle(cc *admissionregistrationv1.WebhookClientConfig, bundle []byte) int {
	if bytes.Equal(cc.CABundle, bundle) {
		return 0
	}
	cc.CABundle = bundle
	return 1
}
