package ccm

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// whoAmI asks the API server who the controller is (SelfSubjectReview):
// the actor of audit lines for what it does on its own. fallback is used
// when the API server cannot tell.
func whoAmI(ctx context.Context, client kubernetes.Interface, fallback string) string {
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || r.Status.UserInfo.Username == "" {
		klog.ErrorS(err, "cannot ask the API server who the controller is; audit lines name it by its component name", "name", fallback)
		return fallback
	}
	return r.Status.UserInfo.Username
}
