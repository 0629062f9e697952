package review

import (
	"context"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Identities in the audit log and on plans are the API server's word,
// never a name someone wrote: the author of a change only while an
// admission policy checks the annotation, the controller as the API
// server authenticates it.

// author is who last changed what the controller renders from svc, when
// the optional admission policy makes the API server check the
// annotation; "" otherwise (Kubernetes itself records no author), while
// the policy is new, and when svc was last written before the policy was
// in force: an annotation written before every API server enforced it
// was not checked, however late it is first planned.
func (b *Board) author(ctx context.Context, svc *v1.Service) string {
	who := svc.Annotations[reviewapi.AuthorAnnotation]
	if who == "" {
		return ""
	}
	since, err := b.approvals.inForce(ctx, reviewapi.AuthorAdmissionPolicy)
	if err != nil || time.Now().Before(since) || lastWrite(svc).Before(since) {
		return ""
	}
	return who
}

// lastWrite is when svc itself (not its status) was last written, from
// the API server's managedFields; zero, so before any policy, when they
// tell nothing (stripped). A write that changed nothing the controller
// renders keeps the annotation (the policy's second rule) and still
// counts here: see docs/tenancy.md for that corner.
func lastWrite(svc *v1.Service) time.Time {
	var last time.Time
	for _, m := range svc.ManagedFields {
		if m.Subresource == "" && m.Time != nil && m.Time.After(last) {
			last = m.Time.Time
		}
	}
	return last
}

// contributors are who may have made svc's change: its author where the
// API server vouched for one, else the Service itself as an input whose
// editor is unknown; and every TLS Secret it names, whose editor is never
// known (Kubernetes records none).
func (b *Board) contributors(ctx context.Context, in *annotations.Service) records.Contributors {
	svc := in.Service
	var c records.Contributors
	if who := b.author(ctx, svc); who != "" {
		c.Authors = []string{who}
	} else {
		c.Unverified = []records.Input{{Resource: records.ResourceServices, Namespace: svc.Namespace, Name: svc.Name}}
	}
	// Annotations that do not parse render nothing (the renderer says so).
	if in.Err == nil {
		for _, name := range in.LB.TLSSecrets {
			c.Unverified = append(c.Unverified, records.Input{Resource: records.ResourceSecrets, Namespace: svc.Namespace, Name: name})
		}
	}
	return c
}

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
