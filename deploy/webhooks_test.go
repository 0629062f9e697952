package deploy

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// WebhooksAt is the base's configurations reaching the controller by URL:
// every other field as shipped.
func TestWebhooksAt(t *testing.T) {
	objs, err := WebhooksAt("https://127.0.0.1:9443", 15)
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]bool{}
	for _, o := range objs {
		switch w := o.(type) {
		case *admissionv1.MutatingWebhookConfiguration:
			for _, h := range w.Webhooks {
				if h.ClientConfig.Service != nil || h.ClientConfig.URL == nil || *h.TimeoutSeconds != 15 || *h.FailurePolicy != admissionv1.Ignore {
					t.Errorf("%s: %+v", w.Name, h)
				}
				urls[*h.ClientConfig.URL] = true
			}
		case *admissionv1.ValidatingWebhookConfiguration:
			for _, h := range w.Webhooks {
				if h.ClientConfig.Service != nil || h.ClientConfig.URL == nil || *h.TimeoutSeconds != 15 || *h.FailurePolicy != admissionv1.Ignore {
					t.Errorf("%s: %+v", w.Name, h)
				}
				urls[*h.ClientConfig.URL] = true
			}
		}
	}
	if !urls["https://127.0.0.1:9443/service-author"] || !urls["https://127.0.0.1:9443/service-preview"] || len(urls) != 2 {
		t.Errorf("urls %v", urls)
	}
	shipped, err := WebhooksAt("https://x", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range shipped {
		if w, ok := o.(*admissionv1.ValidatingWebhookConfiguration); ok && *w.Webhooks[0].TimeoutSeconds != 5 {
			t.Errorf("timeout 0 changed the shipped timeout: %d", *w.Webhooks[0].TimeoutSeconds)
		}
	}
}
