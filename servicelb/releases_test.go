package servicelb

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
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
	reqs, stale []*reviewapi.AddressRelease
	ended       map[string]string
}

func (b *releaseBoard) AddressReleases(context.Context) (review.Requests[reviewapi.AddressRelease], error) {
	return review.Requests[reviewapi.AddressRelease]{Verified: b.reqs, Stale: b.stale, Why: "it was made before the policy"}, nil
}

// ask adds a request by requester for shop's address name.
func (b *releaseBoard) ask(name, requester, address string) {
	b.reqs = append(b.reqs, &reviewapi.AddressRelease{Meta: reviewapi.Meta{Name: name, UID: "uid-" + name},
		Spec: reviewapi.AddressReleaseSpec{Address: objectref.Address("shop", address), Requester: requester}})
}

func (b *releaseBoard) ReleaseEnded(ctx context.Context, s review.Subject, r *reviewapi.AddressRelease, why string) {
	b.Reviewer.ReleaseEnded(ctx, s, r, why)
	b.ended[r.Name] = why
	b.reqs = slices.DeleteFunc(b.reqs, func(x *reviewapi.AddressRelease) bool { return x == r })
}

func (b *releaseBoard) ReleaseStale(ctx context.Context, s review.Subject, r *reviewapi.AddressRelease, why string) {
	b.Reviewer.ReleaseStale(ctx, s, r, why)
	b.ended[r.Name] = "stale: " + why
	b.stale = slices.DeleteFunc(b.stale, func(x *reviewapi.AddressRelease) bool { return x == r })
}

// A kept address is released only detached and named by no Service or
// Gateway that may take it: held, or named, the request is refused saying
// why and used up; one of another namespace the tenancy check refuses
// does not stall it, and Gateways not read yet hold the decision, said
// once. The release is a plan under at least manual review (the cluster's
// auto), the request kept while it waits; approved, the address
// leaves the cloud, and the request is used up. Over the fakes; end to
// end, TestReservedAddresses.
func TestAddressRelease(t *testing.T) {
	f, k, rb, blue, a := keptForRelease(t)
	ask := func(name string) {
		t.Helper()
		rb.ask(name, "carol", a.Name)
		k.releases.all(t.Context())
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

	// green goes. With the Gateway front-end on, a release waits until
	// its Gateways are read; Gateway shop/web names the address.
	testkit.Must(t, f.services.groups.services.Delete(green))
	gwInfra := &GatewayInfra{addrs: f.services.addresses}
	gwInfra.GatewaysComing()
	ask("gateways-unread")
	if why, ended := rb.ended["gateways-unread"]; ended || len(f.addrs.released) != 0 {
		t.Fatalf("Gateways not read: request ended %v (%q), %d releases planned; want it kept, nothing planned", ended, why, len(f.addrs.released))
	}
	k.releases.all(t.Context()) // said once
	if evs := f.takeEvents(); len(evs) != 1 || evs[0].Reason != "ReleaseWaits" || evs[0].Type != v1.EventTypeNormal ||
		!strings.Contains(evs[0].Message, "AddressRelease gateways-unread by \"carol\"") || !strings.Contains(evs[0].Message, "Gateway front-end has not started") {
		t.Fatalf("Gateways not read: events %v; want one Normal ReleaseWaits telling carol why", evs)
	}
	gws := gatewayNames{objectref.Gateway("shop", "web", "uid-web"): {a.IP}}
	gwInfra.NamedBy(gws)
	gwInfra.GatewaysComing() // a no-op once it runs
	k.releases.all(t.Context())
	refused("gateways-unread", "Gateway shop/web names it")

	// web names another; mallory of team-x names it, and so does a
	// Gateway of team-x, which neither may.
	gws[objectref.Gateway("shop", "web", "uid-web")] = []string{"203.0.113.99"}
	gws[objectref.Gateway("team-x", "gw", "uid-gw")] = []string{a.ID}
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
	// The keeper, looking at what mallory names, leaves the waiting
	// release alone: nobody may take the address.
	asked := len(f.addrs.asked)
	testkit.Must(t, k.sync(t.Context(), addressWant{Ref: a.ID}.key()))
	if len(f.addrs.asked) != asked || f.addrs.waiting == nil {
		t.Fatalf("the keeper converged the address (%v) while its release waited; want it left waiting", f.addrs.asked[asked:])
	}
	// dave asks too: one decision for both, and both end with it.
	rb.ask("release-too", "dave", a.Name)

	f.addrs.approved = true
	k.releases.all(t.Context())
	for _, name := range []string{"release", "release-too"} {
		if why, ended := rb.ended[name]; !ended || why != "" || f.cloud.address(a.Name) != nil {
			t.Fatalf("approved: %s ended %v (%q), the cloud's address %+v; want it released, the request used up", name, ended, why, f.cloud.address(a.Name))
		}
	}

	f.addrs.released = nil
	ask("again")
	refused("again", "the controller keeps no such reserved address")
}

// A release is planned only while asked: its requests deleted, or no
// longer vouched for (made before the admission policy now in force,
// which refuses them once, saying so), the destroy waiting is withdrawn
// (superseded), by a new leader too, which knows of it from the record;
// under a plan-only cluster, which would hold it for ever, it is refused.
// Over the fakes.
func TestAddressReleaseWithdrawn(t *testing.T) {
	f, k, rb, blue, a := keptForRelease(t)
	testkit.Must(t, f.services.groups.services.Delete(blue))
	f.cloud.address(a.Name).LoadBalancerID = ""

	rb.ask("asked", "carol", a.Name)
	k.releases.all(t.Context())
	if f.addrs.waiting == nil {
		t.Fatal("the release is not waiting")
	}
	rb.reqs = nil // deleted by hand
	k.releases.all(t.Context())
	if !slices.Equal(f.addrs.withdrawn, []string{"shop/" + a.Name}) || f.addrs.waiting != nil {
		t.Fatalf("withdrawn %v, waiting %v; want the release withdrawn once its request went", f.addrs.withdrawn, f.addrs.waiting)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "PlanSuperseded") {
		t.Error("the withdrawn release is not said to be superseded")
	}
	k.releases.all(t.Context())
	if len(f.addrs.withdrawn) != 1 {
		t.Fatalf("withdrawn %v; want once", f.addrs.withdrawn)
	}

	rb.ask("vouched", "carol", a.Name)
	k.releases.all(t.Context())
	rb.stale, rb.reqs = rb.reqs, nil // the policy changed since
	k.releases.all(t.Context())
	if why := rb.ended["vouched"]; why != "stale: it was made before the policy" || len(f.addrs.withdrawn) != 2 {
		t.Fatalf("a request older than the policy: refused %q, withdrawn %v; want it refused saying why, the release withdrawn", why, f.addrs.withdrawn)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "ReleaseRefused") {
		t.Error("the request older than the policy is not said to be refused")
	}

	// The leader changes while a release waits: the new one knows of it
	// only from the record, read once, and withdraws it once nobody asks.
	rb.ask("left", "carol", a.Name)
	k.releases.all(t.Context())
	if rec := f.get(t, "prod-address-shop-"+a.Name); rec == nil || rec.AwaitingDestroy(true) == nil {
		t.Fatalf("record %+v; want the release recorded as waiting", rec)
	}
	k.releases = newReleaser(k)
	rb.reqs = nil
	k.releases.all(t.Context())
	if len(f.addrs.withdrawn) != 3 || f.addrs.waiting != nil || f.get(t, "prod-address-shop-"+a.Name).AwaitingDestroy(true) != nil {
		t.Fatalf("withdrawn %v, waiting %v; want the release an earlier leader left withdrawn by the new one", f.addrs.withdrawn, f.addrs.waiting)
	}

	f.cfg.Terraform.ApplyPolicy = string(annotations.ApplyPlanOnly)
	planned := len(f.addrs.released)
	rb.ask("plan-only", "carol", a.Name)
	k.releases.all(t.Context())
	if why := rb.ended["plan-only"]; !strings.Contains(why, "plan-only") || len(f.addrs.released) != planned {
		t.Fatalf("under plan-only: refused %q, %d releases planned; want it refused, nothing planned", why, len(f.addrs.released)-planned)
	}
}

// gatewayNames are the addresses each Gateway names, as the front-end
// tells them (gatewaycontroller's NamedAddresses).
type gatewayNames map[objectref.Ref][]string

func (n gatewayNames) NamedAddresses() (map[objectref.Ref][]string, error) { return n, nil }

// keptForRelease is Service shop/blue holding the address it keeps (a)
// over the fakes, with the leader's keeper and a board that takes the
// test's release requests; the addresses' owners are read, no grant.
func keptForRelease(t *testing.T) (*fakeServices, *addressKeeper, *releaseBoard, *v1.Service, *exampleapi.Address) {
	t.Helper()
	f := newFakeServices(t, "")
	f.granting(t)
	k := f.keeper()
	rb := &releaseBoard{Reviewer: f.board, ended: map[string]string{}}
	f.services.addresses.board = rb
	blue := groupSvc("shop", "blue", 0, "", 80)
	blue.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := f.holding(t, k, blue, f.cloud.serve(f.cfg, blue, "lb-blue", "203.0.113.1"))
	f.takeEvents()
	return f, k, rb, blue, a
}
