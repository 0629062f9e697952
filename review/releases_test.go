package review

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

const keptWS = "prod-address-shop-k8s-a-0123456789abcdef"

var kept = objectref.Address("shop", "k8s-a-0123456789abcdef")

func releaseObj(name, requester string, created time.Time) *unstructured.Unstructured {
	return reviewObj(reviewapi.KindAddressRelease, name, &reviewapi.AddressReleaseSpec{Address: kept, Requester: requester, Comment: "DNS moved"}, created)
}

// Release requests are honoured only while the admission policy vouches
// for their requester, oldest first; the requester is the release's
// author, so their own approval of it never counts, another reviewer's
// does.
func TestAddressReleases(t *testing.T) {
	now := time.Now()
	objs := []*unstructured.Unstructured{releaseObj("release-b", "dave", now), releaseObj("release-a", "carol", now.Add(-time.Minute))}
	if _, err := newReviewFixture(t, "", true, objs...).AddressReleases(t.Context()); err == nil || !strings.Contains(err.Error(), "admission policy") {
		t.Fatalf("without the identity policy: %v; want release requests refused, naming the policy", err)
	}
	planned := now.Add(-30 * time.Second)
	p := planAt(t, "plan-dddddddddddd", 0, planned)
	p.Workspace, p.Destroy, p.HasChanges, p.Summary = keptWS, true, true, engine.PlanSummary{Remove: 1}
	f := newReviewFixture(t, "", false, append(objs,
		approvalObj("by-carol", kept, p.ID, "carol", planned.Add(time.Second)), approvalObj("by-rita", kept, p.ID, "rita", planned.Add(time.Second)))...)
	got, err := f.AddressReleases(t.Context())
	reqs := got.Verified
	if err != nil || len(reqs) != 2 || reqs[0].Name != "release-a" || reqs[1].Name != "release-b" || len(got.Stale) != 0 {
		t.Fatalf("AddressReleases = %+v, %v; want release-a then release-b", got, err)
	}

	if both := f.AddressReleaseSubject(kept.Namespace, kept.Name, keptWS, reqs); !slices.Equal(both.contrib.Authors, []string{"carol", "dave"}) {
		t.Errorf("a release two people ask for is authored by %v; want both", both.contrib.Authors)
	}
	s := f.AddressReleaseSubject(kept.Namespace, kept.Name, keptWS, reqs[:1])
	waiting := &engine.Outcome{Policy: annotations.ApplyManual, Workspace: keptWS, Planned: p, Awaiting: p}
	f.Report(t.Context(), s, waiting, &engine.AwaitingApprovalError{PlanID: p.ID})
	if rp := f.get(t, keptWS).Find(p.ID); rp == nil || rp.Kind != records.KindDestroy || !slices.Equal(rp.Authors, []string{"carol"}) {
		t.Fatalf("recorded %+v; want the destroy, authored by carol", rp)
	}
	a := f.For(t.Context(), s, annotations.ApplyManual).Approval(p)
	if !a.Approved || !slices.Equal(a.Approvers, []string{"rita"}) || len(a.Ignored) != 1 || !strings.Contains(a.Ignored[0], `"carol"`) {
		t.Fatalf("approval %+v; want rita's counted, carol's (the requester's) ignored", a)
	}
	// A destroy waiting is the release's own, not a change in its way.
	if id, err := f.WaitingChange(t.Context(), keptWS); err != nil || id != "" {
		t.Fatalf("WaitingChange = %q, %v with the release waiting; want none", id, err)
	}

	// The policy installed again since carol asked: her request could
	// name anyone, and is stale, saying why.
	f.policyInstalled(t, now.Add(-90*time.Second)) // in force 30 s ago
	f.approvals.checked = map[string]policyCheck{} // read again now, not in a minute
	got, err = f.AddressReleases(t.Context())
	if err != nil || len(got.Verified) != 1 || got.Verified[0].Name != "release-b" || len(got.Stale) != 1 || got.Stale[0].Name != "release-a" ||
		!strings.Contains(got.Why, "was made before the admission policy that verifies requesters") {
		t.Fatalf("AddressReleases = %+v, %v; want release-b verified, release-a stale, saying why", got, err)
	}
}

// A refused request says why on the record's ConfigMap and in the audit
// log, as its requester, and is used up (one that waits says why once); a change waiting in the
// address's workspace (a move) is what a release must not supersede.
func TestReleaseRefused(t *testing.T) {
	f := newReviewFixture(t, "", false, releaseObj("release-a", "carol", time.Now()))
	got, err := f.AddressReleases(t.Context())
	reqs := got.Verified
	if err != nil || len(reqs) != 1 {
		t.Fatalf("AddressReleases = %+v, %v", got, err)
	}
	s := f.AddressReleaseSubject(kept.Namespace, kept.Name, keptWS, reqs[:1])
	f.ReleaseTaken(s, reqs[0])
	f.ReleaseTaken(s, reqs[0])
	// Not decided yet, said once per reason: an event, no audit line.
	for _, why := range []string{"the Gateways are unread", "the Gateways are unread", "the cloud is down (request r-1)", "the cloud is down (request r-2)"} {
		f.ReleaseWaits(s, reqs[0], why, strings.Split(why, " (")[0])
	}
	evs := f.takeEvents()
	if len(evs) != 2 || evs[0].Type != v1.EventTypeNormal || evs[0].Reason != "ReleaseWaits" ||
		evs[0].Message != `AddressRelease release-a by "carol": address shop/k8s-a-0123456789abcdef is not decided yet: the Gateways are unread; it is looked at again` ||
		!strings.Contains(evs[1].Message, "the cloud is down") {
		t.Errorf("events %+v; want ReleaseWaits once for each reason", evs)
	}
	f.ReleaseEnded(t.Context(), s, reqs[0], "Service shop/green names it")
	evs = f.takeEvents()
	if len(evs) != 1 || evs[0].Reason != "ReleaseRefused" || !strings.Contains(evs[0].Message, `AddressRelease release-a by "carol": address shop/k8s-a-0123456789abcdef is not released: Service shop/green names it`) {
		t.Errorf("events %+v; want one ReleaseRefused saying why", evs)
	}
	lines, _ := f.auditLog(t)
	if len(lines) != 2 || lines[0].Outcome != "taken" || lines[1].Action != "release" || lines[1].Actor != "carol" || lines[1].Outcome != "refused: Service shop/green names it" ||
		lines[1].Details["comment"] != "DNS moved" || lines[1].Details["request"] != "release-a" {
		t.Errorf("audit %+v; want the request taken once, then refused, as carol", lines)
	}
	if left, _ := f.AddressReleases(t.Context()); len(left.Verified) != 0 {
		t.Errorf("the refused request is still there: %+v", left)
	}

	// A request older than the policy names a requester nobody checked:
	// the controller refuses it, as itself.
	stale := &reviewapi.AddressRelease{Meta: reviewapi.Meta{Name: "release-old"}, Spec: reviewapi.AddressReleaseSpec{Address: kept, Requester: "mallory"}}
	f.ReleaseStale(t.Context(), s, stale, "it was made before the policy")
	evs = f.takeEvents()
	if len(evs) != 1 || evs[0].Reason != "ReleaseRefused" || !strings.Contains(evs[0].Message, `AddressRelease release-old, naming "mallory" as its requester: address shop/k8s-a-0123456789abcdef is not released: it was made before the policy; ask again`) {
		t.Errorf("events %+v; want one ReleaseRefused saying the request is older than the policy", evs)
	}
	lines, _ = f.auditLog(t)
	if last := lines[len(lines)-1]; last.Actor != self || last.Details["uncheckedRequester"] != "mallory" || last.Outcome != "refused: it was made before the policy" {
		t.Errorf("audit %+v; want the refusal by the controller, mallory only named", last)
	}

	move := planAt(t, "plan-eeeeeeeeeeee", 1, time.Now())
	move.Workspace = keptWS
	f.Report(t.Context(), Subject{ref: kept, kind: records.KindChange, event: f.recordObject(keptWS)},
		&engine.Outcome{Policy: annotations.ApplyManual, Workspace: keptWS, Planned: move, Awaiting: move}, &engine.AwaitingApprovalError{PlanID: move.ID})
	if id, err := f.WaitingChange(t.Context(), keptWS); err != nil || id != move.ID {
		t.Errorf("WaitingChange = %q, %v; want the move %s", id, err, move.ID)
	}
}

// Who asks for a release authors that plan alone: withdrawn, a later
// move of the address is not theirs, and their approval of it counts;
// their approval of the release itself never does, after a restart too.
func TestReleaseRequestersAuthorTheReleaseOnly(t *testing.T) {
	at := time.Now().Add(-time.Minute)
	f := newReviewFixture(t, "", false, releaseObj("release-a", "carol", at),
		approvalObj("a", kept, "plan-dddddddddddd", "carol", at.Add(time.Second)),
		approvalObj("b", kept, "plan-eeeeeeeeeeee", "carol", at.Add(time.Second)))
	got, err := f.AddressReleases(t.Context())
	testkit.Must(t, err)
	release := f.AddressReleaseSubject(kept.Namespace, kept.Name, keptWS, got.Verified)
	destroy := planAt(t, "plan-dddddddddddd", 0, at)
	destroy.Workspace, destroy.Destroy, destroy.HasChanges, destroy.Summary = keptWS, true, true, engine.PlanSummary{Remove: 1}
	f.Report(t.Context(), release, &engine.Outcome{Policy: annotations.ApplyManual, Workspace: keptWS, Planned: destroy, Awaiting: destroy},
		&engine.AwaitingApprovalError{PlanID: destroy.ID})
	if r := f.get(t, keptWS); !slices.Equal(r.Find(destroy.ID).Authors, []string{"carol"}) || r.Unapplied != nil {
		t.Fatalf("release planned: authors %v, unapplied %+v; want carol the release's author, no input changed", r.Find(destroy.ID).Authors, r.Unapplied)
	}
	restarted := newReviewFixture(t, "", false, approvalObj("a", kept, destroy.ID, "carol", at.Add(time.Second)))
	restarted.store = f.store
	if a := restarted.For(t.Context(), Subject{ref: kept, kind: records.KindDestroy}, annotations.ApplyManual).Approval(destroy); a.Approved {
		t.Fatalf("carol's approval of the release she asked for counted after a restart: %+v", a)
	}

	// Withdrawn; dave's Service moves the address: carol may approve.
	f.Report(t.Context(), f.AddressReleaseSubject(kept.Namespace, kept.Name, keptWS, nil), &engine.Outcome{Workspace: keptWS, Superseded: destroy}, nil)
	move := planAt(t, "plan-eeeeeeeeeeee", 1, at)
	move.Workspace = keptWS
	dave := Subject{ref: kept, kind: records.KindChange, event: f.recordObject(keptWS), contrib: records.Contributors{Authors: []string{"dave"}}}
	a := f.For(t.Context(), dave, annotations.ApplyManual).Approval(move)
	if !a.Approved || !slices.Equal(a.Approvers, []string{"carol"}) {
		t.Fatalf("carol approving dave's move after her release was withdrawn: %+v; want it counted", a)
	}
	f.Report(t.Context(), dave, &engine.Outcome{Policy: annotations.ApplyManual, Workspace: keptWS, Planned: move, Awaiting: move},
		&engine.AwaitingApprovalError{PlanID: move.ID})
	if got := f.get(t, keptWS).Find(move.ID).Authors; !slices.Equal(got, []string{"dave"}) {
		t.Errorf("the move records authors %v; want dave only", got)
	}
}
