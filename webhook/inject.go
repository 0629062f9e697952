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
// may create it after the controller starts, and its creation (watched)
// brings the next sync.
func (s *SelfManaged) inject(ctx context.Context, bundle []byte) error {
	api := s.o.Client.AdmissionregistrationV1()
	return errors.Join(
		injectAll(ctx, "MutatingWebhookConfiguration", s.o.MutatingConfigs, bundle, api.MutatingWebhookConfigurations(),
			func(c *admissionregistrationv1.MutatingWebhookConfiguration) []admissionregistrationv1.MutatingWebhook {
				return c.Webhooks
			},
			func(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			}),
		injectAll(ctx, "ValidatingWebhookConfiguration", s.o.ValidatingConfigs, bundle, api.ValidatingWebhookConfigurations(),
			func(c *admissionregistrationv1.ValidatingWebhookConfiguration) []admissionregistrationv1.ValidatingWebhook {
				return c.Webhooks
			},
			func(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			}))
}

// configClient is what inject uses of a client of webhook configurations
// (mutating or validating).
type configClient[C any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (C, error)
	Update(ctx context.Context, c C, opts metav1.UpdateOptions) (C, error)
}

// injectAll injects bundle into each of the named configurations of one
// kind; webhooks and clientConfig find where in a configuration it goes.
func injectAll[C, W any](ctx context.Context, kind string, names []string, bundle []byte, client configClient[C],
	webhooks func(C) []W, clientConfig func(*W) *admissionregistrationv1.WebhookClientConfig) error {
	var errs []error
	for _, name := range names {
		errs = append(errs, injectInto(ctx, kind, name, bundle, client, webhooks, clientConfig))
	}
	return errors.Join(errs...)
}

// injectInto reads a configuration, sets the bundle in the client config
// of each of its webhooks and writes it back if needed, retrying on
// conflicts.
func injectInto[C, W any](ctx context.Context, kind, name string, bundle []byte, client configClient[C],
	webhooks func(C) []W, clientConfig func(*W) *admissionregistrationv1.WebhookClientConfig) error {
	changed := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed = 0
		ws := webhooks(c)
		for i := range ws {
			changed += setBundle(clientConfig(&ws[i]), bundle)
		}
		if changed == 0 {
			return nil
		}
		_, err = client.Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		klog.V(4).InfoS("Webhook configuration not found; injecting when it is created", "kind", kind, "name", name)
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
