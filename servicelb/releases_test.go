package servicelb

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/reviewapi"
)

// releaseBoard is the board with the release requests the test gives,
// and what became of each (why each was refused, "" when it was not):
// how requests are read and verified is review's (TestAddressReleases).
type releaseBoard struct {
	Reviewer
	reqs  []*reviewapi.AddressRelease
	ended map[string]string
}

func (b *releaseBoard) AddressReleases(context.Context) ([]*reviewapi.AddressRelease, error) {
	return b.reqs, nil
}

func (b *releaseBoard) ReleaseEnded(ctx context.Context, s review.Subject, r *reviewapi.AddressRelease, why string) {
	b.Reviewer.ReleaseEnded(ctx, s, r, why)
	b.ended[r.Name] = why
	b.reqs = slices.DeleteFunc(b.reqs, func(x *reviewapi.AddressRelease) bool { return x == r })
}

// A kept address is released only detached and named by no Service that
// may take it: held, or named, the request is refused saying why and used
// up; a Service of another namespace the tenancy check refuses does not
// stall it. The release is a plan under at least manual review (the
// cluster's auto), the request kept while it waits; approved, the address
// leaves the cloud, and the request is used up. Over the fakes; end to
// end, TestReservedAddresses.
func TestAddressRelease(t *testing.T) {
	f := newFakeServices(t, "")
	f.granting(t) // the addresses' owners, and no grant
	k := f.keeper()
	rb := &releaseBoard{Reviewer: f.board, ended: map[string]string{}}
	f.services.addresses.board = rb
	blue := groupSvc("shop", "blue", 0, "", 80)
	blue.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := f.holding(t, k, blue, f.cloud.serve(f.cfg, blue, "lb-blue", "203.0.113.1"))
	f.takeEvents()
	ask := func(name string) {
		t.Helper()
		rb.reqs = append(rb.reqs, &reviewapi.AddressRelease{Meta: reviewapi.Meta{Name: name, UID: "uid-" + name},
			Spec: reviewapi.AddressReleaseSpec{Address: objectref.Address("shop", a.Name), Requester: "carol"}})
		k.releaseAll(t.Context())
	}
	refused := func(name, why string) {
		t.Helper()
		if got, ended := rb.ended[name]; !ended || !strings.Contains(got, why) {
			t.Fatalf("request %s: ended %v, refused for %q; want refused: %s", name, ended, got, why)
		}
		if evs := f.takeEvents(); !slices.ContainsFunc(evs, func(e reviewtest.Event) bool {
			return e.Reason == "ReleaseRefused" && strings.Contains(e.Message, why)
		}) {
			t.Fatalf("request %s: events %v; want ReleaseRefused saying %q", name, evs, why)
		}
		if len(f.addrs.released) != 0 {
			t.Fatalf("request %s refused, yet the release was planned", name)
		}
	}

	ask("held")
	refused("held", "load balancer lb-blue holds it")

	// blue goes, its address kept, detached; green names it.
	testkit.Must(t, f.services.groups.services.Delete(blue))
	f.cloud.address(a.Name).LoadBalancerID = ""
	green := groupSvc("shop", "green", 1, "", 81)
	green.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.put(t, green)
	ask("named")
	refused("named", "Service shop/green names it")

	// green goes; mallory of team-x names it, which she may not.
	testkit.Must(t, f.services.groups.services.Delete(green))
	mallory := groupSvc("team-x", "mallory", 2, "", 82)
	mallory.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.put(t, mallory)
	ask("release")
	if _, ended := rb.ended["release"]; ended || !slices.Equal(f.addrs.released, []annotations.ApplyPolicy{annotations.ApplyManual}) {
		t.Fatalf("release: ended %v, planned under %v; want one plan under manual, waiting, the request kept", ended, f.addrs.released)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "AwaitingApproval") {
		t.Error("the release is not said to await approval")
	}

	f.addrs.approved = true
	k.releaseAll(t.Context())
	if why, ended := rb.ended["release"]; !ended || why != "" || f.cloud.address(a.Name) != nil {
		t.Fatalf("approved: ended %v (%q), the cloud's address %+v; want it released, the request used up", ended, why, f.cloud.address(a.Name))
	}

	f.addrs.released = nil
	ask("again")
	refused("again", "the controller keeps no such reserved address")
}
