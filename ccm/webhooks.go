package ccm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/internal/ccmmetrics"
	"github.com/example/cloud-provider-example/webhook"
)

// Paths of the admission webhooks (deploy's webhook configurations).
const (
	AuthorPath         = "/service-author"
	PreviewPath        = "/service-preview"
	GatewayPreviewPath = "/gateway-preview"
)

// GatewayPreview makes the preview of Gateways and HTTPRoutes (package
// gatewaycontroller, beside this one), given the namespaces' preview
// budget (shared with the Services' previews).
type GatewayPreview func(planAllowed func(namespace string) bool) webhook.AdmitFunc

// StartWebhooks serves the admission webhooks of c (the example cloud)
// when its cloud config enables them, until ctx is done. Every replica
// calls it before leader election, so every replica serves; it gives the
// cloud its Kubernetes clients for that (Initialize keeps them). gateways
// (nil: none) previews Gateway API objects; without it their webhook
// allows every edit and says nothing.
func (c *Cloud) StartWebhooks(ctx context.Context, cfg *rest.Config, gateways GatewayPreview) error {
	if !c.cfg.Webhook.Enabled {
		return nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "example-cloud-controller-manager-webhook"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("webhook: kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("webhook: dynamic client: %w", err)
	}
	c.useClients(ctx, client, dyn)
	certs, err := webhookCertificates(ctx, c.cfg, client)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	a := c.lbs.Admission(factory.Core().V1().Nodes().Lister())
	ccmmetrics.Track("webhook", func() map[string]int { return map[string]int{"webhook_preview_budgets": a.Budgets()} })
	factory.Start(ctx.Done())
	addr, done, err := webhook.Start(ctx, webhook.Options{
		Addr:         c.cfg.Webhook.Address,
		Certificates: certs,
		Handlers: map[string]http.Handler{
			AuthorPath:         webhook.Handler("service-author", a.Author),
			PreviewPath:        webhook.Handler("service-preview", a.Preview),
			GatewayPreviewPath: webhook.Handler("gateway-preview", gatewayPreview(gateways, a.PlanAllowed)),
		},
	})
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	go func() {
		if err := <-done; err != nil {
			klog.ErrorS(err, "Admission webhook server stopped")
		}
	}()
	klog.InfoS("Serving admission webhooks", "address", addr, "certificates", c.cfg.Webhook.Certificates.Mode)
	return nil
}

// gatewayPreview is the admit function of the Gateway API objects'
// preview: gateways', or one allowing everything.
func gatewayPreview(gateways GatewayPreview, planAllowed func(string) bool) webhook.AdmitFunc {
	if gateways != nil {
		if admit := gateways(planAllowed); admit != nil {
			return admit
		}
	}
	return func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
}

// webhookCertificates is the serving certificate's source: the
// controller's own (kept in a Secret, rotated, its CA injected into the
// webhook configurations) or cert-manager's files.
func webhookCertificates(ctx context.Context, cfg *cloudconfig.Config, client kubernetes.Interface) (webhook.CertSource, error) {
	wc := cfg.Webhook.Certificates
	if wc.Mode == cloudconfig.CertificatesFiles {
		return webhook.FromFiles(wc.CertFile, wc.KeyFile)
	}
	var ips []net.IP
	for _, ip := range wc.ExtraIPs {
		ips = append(ips, net.ParseIP(ip))
	}
	sm, err := webhook.NewSelfManaged(webhook.SelfManagedOptions{
		Client: client, Namespace: cfg.Review.Namespace, SecretName: wc.SecretName, ServiceName: wc.ServiceName, ExtraIPs: ips,
		MutatingConfigs: []string{cloudconfig.MutatingWebhookName}, ValidatingConfigs: []string{cloudconfig.ValidatingWebhookName},
	})
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	go func() {
		if err := sm.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			klog.ErrorS(err, "Webhook certificates")
		}
	}()
	return sm, nil
}
