package gatewaycontroller

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// caWatch watches the ConfigMaps BackendTLSPolicies name, each alone (a
// field selector on its namespace and name): the controller holds no
// other ConfigMap, and a tenant's ConfigMaps no policy names are never
// read. A ConfigMap whose watch has not synced yet is read from the API
// server, so a new policy does not fail closed for want of a cache.
type caWatch struct {
	kube    kubernetes.Interface
	changed func(types.NamespacedName)

	mu sync.Mutex
	// ctx is what the watches run under (Start's); nil before.
	ctx     context.Context
	watches map[types.NamespacedName]*configMapWatch
}

type configMapWatch struct {
	inf  cache.SharedIndexInformer
	stop context.CancelFunc
}

func newCAWatch(kube kubernetes.Interface, changed func(types.NamespacedName)) *caWatch {
	return &caWatch{kube: kube, changed: changed, watches: map[types.NamespacedName]*configMapWatch{}}
}

// start lets watches run until ctx ends, starting those asked for before.
func (w *caWatch) start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx = ctx
	for _, cw := range w.watches {
		w.run(cw)
	}
}

// keep watches exactly want.
func (w *caWatch) keep(want map[types.NamespacedName]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for nn, cw := range w.watches {
		if !want[nn] {
			if cw.stop != nil {
				cw.stop()
			}
			delete(w.watches, nn)
		}
	}
	for nn := range want {
		if w.watches[nn] == nil {
			cw := w.watch(nn)
			w.watches[nn] = cw
			if w.ctx != nil {
				w.run(cw)
			}
		}
	}
}

// watch is an informer of ConfigMap nn alone.
func (w *caWatch) watch(nn types.NamespacedName) *configMapWatch {
	f := kubeinformers.NewSharedInformerFactoryWithOptions(w.kube, resync, kubeinformers.WithNamespace(nn.Namespace),
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", nn.Name).String()
		}))
	inf := f.Core().V1().ConfigMaps().Informer()
	on := func(any) { w.changed(nn) }
	// A handler can fail only on an informer already stopped: this one
	// has not started.
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, _ any) { w.changed(nn) }, DeleteFunc: on})
	return &configMapWatch{inf: inf}
}

// run starts cw under w.ctx (w.mu held).
func (w *caWatch) run(cw *configMapWatch) {
	ctx, stop := context.WithCancel(w.ctx)
	cw.stop = stop
	go cw.inf.Run(ctx.Done())
}

// read is ConfigMap nn: from its watch once synced, else from the API
// server (bounded: a look at a Gateway waits on no slow read).
func (w *caWatch) read(ctx context.Context, nn types.NamespacedName) (*corev1.ConfigMap, error) {
	w.mu.Lock()
	cw := w.watches[nn]
	w.mu.Unlock()
	if cw != nil && cw.inf.HasSynced() {
		obj, found, err := cw.inf.GetStore().GetByKey(nn.String())
		if err == nil && found {
			if cm, ok := obj.(*corev1.ConfigMap); ok {
				return cm, nil
			}
		}
		if err == nil && !found {
			return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), nn.Name)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return w.kube.CoreV1().ConfigMaps(nn.Namespace).Get(ctx, nn.Name, metav1.GetOptions{})
}
