package servicelb

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/cloud-provider/api"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// A refusal for want of ReferenceGrants not read (tenancy.RefusedError's
// Unread: before their first list, after a failed list or watch, or a
// grant created a moment before that the watch has not delivered yet)
// says so, and the Service is tried again in seconds, not after the
// service controller's back-off: reading them may allow it.

// unreadRetry is how soon.
const unreadRetry = 5 * time.Second

// retryUnread is err, made a RetryError when it is a refusal for grants
// not read (its text unchanged).
func retryUnread(err error) error {
	var refused *tenancy.RefusedError
	if errors.As(err, &refused) && refused.Unread {
		return api.NewRetryError(err.Error(), unreadRetry)
	}
	return err
}

// liveGrants reads a namespace's ReferenceGrants ("": every namespace's)
// from the API server now (tenancy.Sources.GrantsNow), asked only before a
// refusal for want of one, and kept a moment by the authorizer; one that
// cannot be read grants nothing.
func liveGrants(dyn dynamic.Interface) func(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error) {
	return func(ctx context.Context, namespace string) ([]gatewayv1beta1.ReferenceGrant, error) {
		l, err := dyn.Resource(referencegrants.Resource).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []gatewayv1beta1.ReferenceGrant
		for i := range l.Items {
			if _, _, g, ok := referencegrants.ToGrant(&l.Items[i]); ok {
				out = append(out, g)
			}
		}
		return out, nil
	}
}
