package referencegrants

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// Resource is the resource of Gateway API's ReferenceGrants.
var Resource = schema.GroupVersionResource{Group: gatewayv1beta1.GroupName, Version: "v1beta1", Resource: "referencegrants"}

// Source lists and watches every namespace's ReferenceGrants: a client's,
// whichever the front-end has.
type Source struct {
	List  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// Object is the type of what they return (the reflector checks it).
	Object runtime.Object
}

// FromDynamic is the grants through a dynamic client (the Services': no
// typed client of the Gateway API there).
func FromDynamic(dyn dynamic.Interface) Source {
	res := dyn.Resource(Resource)
	return Source{
		List: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, opts)
		},
		Watch:  res.Watch,
		Object: &unstructured.Unstructured{},
	}
}

// FromClientset is the grants through the Gateway API's clientset (the
// Gateways').
func FromClientset(gw gwclient.Interface) Source {
	res := gw.GatewayV1beta1().ReferenceGrants("")
	return Source{
		List: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return res.List(ctx, opts)
		},
		Watch:  res.Watch,
		Object: &gatewayv1beta1.ReferenceGrant{},
	}
}
