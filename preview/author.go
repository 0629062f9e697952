package preview

import (
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Author is the review.example.com/author annotation a Service gets from
// the mutating webhook, by the service-author policy's own rule: on a
// create, or an update that changes what the controller renders (the
// spec, the loadbalancer.example.com/* annotations, the legacy source
// ranges), the requesting user; on any other update the old value, kept
// (restored when the edit dropped or changed it). keep is false when the
// annotation should be absent (no author yet, none set).
func Author(old, cur *corev1.Service, user string) (value string, keep bool) {
	if old == nil || ChangesRendered(old, cur) {
		return user, true
	}
	if prev, ok := old.Annotations[reviewapi.AuthorAnnotation]; ok {
		return prev, true
	}
	if v, ok := cur.Annotations[reviewapi.AuthorAnnotation]; ok && v == user {
		return user, true // the policy allows setting one's own name
	}
	return "", false
}

// ChangesRendered: the update changes what the controller renders from
// (the service-author policy's rule).
func ChangesRendered(old, cur *corev1.Service) bool {
	return !equality.Semantic.DeepEqual(old.Spec, cur.Spec) || !maps.Equal(rendered(old.Annotations), rendered(cur.Annotations))
}

// rendered are the annotations the controller renders from.
func rendered(a map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		if strings.HasPrefix(k, annotations.Prefix) || k == string(annotations.LegacySourceRanges) {
			out[k] = v
		}
	}
	return out
}

// AuthorAnnotation holds the value Author decides.
const AuthorAnnotation = reviewapi.AuthorAnnotation
