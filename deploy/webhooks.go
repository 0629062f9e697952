package deploy

import (
	"fmt"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WebhooksAt are the base's two webhook configurations reaching the
// controller at baseURL (https://host:port, a controller outside the
// cluster: tests, the demo) instead of through the base's Service, with
// timeoutSeconds when not zero. Everything else is as shipped.
func WebhooksAt(baseURL string, timeoutSeconds int32) ([]runtime.Object, error) {
	all, err := Objects()
	if err != nil {
		return nil, err
	}
	return WebhooksIn(all, baseURL, timeoutSeconds)
}

// WebhooksIn is WebhooksAt for the webhook configurations among all (the
// chart's, rendered with other values).
func WebhooksIn(all []runtime.Object, baseURL string, timeoutSeconds int32) ([]runtime.Object, error) {
	to := func(cc *admissionv1.WebhookClientConfig, timeout **int32) error {
		if cc.Service == nil || cc.Service.Path == nil {
			return fmt.Errorf("webhook without a service path")
		}
		url := baseURL + *cc.Service.Path
		cc.URL, cc.Service = &url, nil
		if timeoutSeconds != 0 {
			*timeout = &timeoutSeconds
		}
		return nil
	}
	var out []runtime.Object
	for _, o := range all {
		switch w := o.(type) {
		case *admissionv1.MutatingWebhookConfiguration:
			for i := range w.Webhooks {
				if err := to(&w.Webhooks[i].ClientConfig, &w.Webhooks[i].TimeoutSeconds); err != nil {
					return nil, fmt.Errorf("%s: %w", w.Name, err)
				}
			}
			out = append(out, w)
		case *admissionv1.ValidatingWebhookConfiguration:
			for i := range w.Webhooks {
				if err := to(&w.Webhooks[i].ClientConfig, &w.Webhooks[i].TimeoutSeconds); err != nil {
					return nil, fmt.Errorf("%s: %w", w.Name, err)
				}
			}
			out = append(out, w)
		}
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("%d webhook configurations, want 2", len(out))
	}
	return out, nil
}
