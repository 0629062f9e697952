package webhook

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// watchConfigs signals changed whenever one of the named webhook
// configurations is created or changed: an install that creates them
// after the controller started, or an upgrade that writes them back
// without a caBundle. Run then injects at once instead of at the next
// resync, so the API server is not left calling a webhook it cannot
// verify. Each configuration is watched by name (a metadata.name field
// selector), which the controller's RBAC grants by resourceNames.
func (s *SelfManaged) watchConfigs(ctx context.Context, changed chan<- struct{}) {
	signal := func() {
		select {
		case changed <- struct{}{}:
		default: // a sync is already due
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
	}
	watch := func(name string, informer func(informers.SharedInformerFactory) cache.SharedIndexInformer) {
		f := informers.NewSharedInformerFactoryWithOptions(s.o.Client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
		// AddEventHandler fails only on a stopped informer; this one is new.
		_, _ = informer(f).AddEventHandler(handler)
		f.Start(ctx.Done())
	}
	for _, name := range s.o.MutatingConfigs {
		watch(name, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Admissionregistration().V1().MutatingWebhookConfigurations().Informer()
		})
	}
	for _, name := range s.o.ValidatingConfigs {
		watch(name, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer()
		})
	}
}
