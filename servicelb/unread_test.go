package servicelb

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// A grant created a moment before a Service names the group, which the
// watch has not delivered yet: the refusal says the grants are not read
// yet (not that there is none) and the Service is tried again in seconds;
// once the watch has the grant, the Service is let in. Another refusal
// keeps the service controller's back-off.
func TestRefusalBeforeTheGrantIsReadRetriesSoon(t *testing.T) {
	f := newGrantsFixture(t)
	f.refs.authorizer.GrantsNow = liveGrants(f.dyn)
	grants := f.dyn.Resource(referencegrants.Resource).Namespace("team-a")
	testkit.Must(t, grants.Delete(t.Context(), "g", metav1.DeleteOptions{}))
	testkit.Must(t, f.list(t)) // read before the grant is made
	err := f.joins(t)
	if err == nil || strings.Contains(err.Error(), "not read") {
		t.Fatalf("no grant anywhere: %v, want the plain refusal", err)
	}
	if _, retry := errors.AsType[*api.RetryError](retryUnread(err)); retry {
		t.Errorf("the plain refusal retried soon: %v", retryUnread(err))
	}

	// The live read is kept for tenancy.GrantsNowTTL: a grant created
	// after it is read live once it is that old.
	time.Sleep(tenancy.GrantsNowTTL)
	_, err = grants.Create(t.Context(), grantObject(t, "team-a", "team-b", "front"), metav1.CreateOptions{})
	testkit.Must(t, err)
	err = f.joins(t)
	var refused *tenancy.RefusedError
	if !errors.As(err, &refused) || !refused.Unread || !strings.Contains(err.Error(), "has not read the newest ReferenceGrants of namespace team-a yet") {
		t.Fatalf("a grant the watch has not delivered: %v, want a refusal saying the grants are not read yet", err)
	}
	retry, ok := errors.AsType[*api.RetryError](retryUnread(err))
	if !ok || retry.RetryAfter() != unreadRetry || retry.Error() != err.Error() {
		t.Errorf("retried as %v, want in %s with the refusal's words", retryUnread(err), unreadRetry)
	}
	testkit.Must(t, f.list(t)) // the watch has it
	if err := f.joins(t); err != nil {
		t.Fatalf("the grant read: %v, want the Service let in", err)
	}
}
