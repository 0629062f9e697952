package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

// Ids and IPs of the release fixtures: k8s-a-gone, released, had the IP
// k8s-a-free has now.
const (
	freeID, freeIP = "addr-0f0f0f0f0f0f0f0f", "203.0.113.9"
	heldID, heldIP = "addr-1e1e1e1e1e1e1e1e", "203.0.113.4"
	movePlan       = "plan-7b7b7b7b7b7b"
	releasePlan    = "plan-7c7c7c7c7c7c"
)

func testRelease(t *testing.T, s *scope) {
	s.address("k8s-a-free", freeID, freeIP, "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	s.address("k8s-a-held", heldID, heldIP, "lb-00aa00aa00aa00aa", "Service "+s.svcNS+"/green", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	s.address("k8s-a-moving", "addr-2d2d2d2d2d2d2d2d", "203.0.113.5", "", "",
		records.Plan{ID: movePlan, Kind: records.KindChange, Summary: runner.PlanSummary{Change: 1}, Policy: "manual",
			Outcome: records.AwaitingApproval, PlannedAt: ago(2 * time.Minute)},
		appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	s.address("k8s-a-asked", "addr-3c3c3c3c3c3c3c3c", "203.0.113.6", "", "",
		records.Plan{ID: releasePlan, Kind: records.KindDestroy, Summary: runner.PlanSummary{Remove: 1}, Policy: "manual",
			Outcome: records.AwaitingApproval, PlannedAt: ago(3 * time.Minute), Author: "carol@example.com"},
		appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	s.address("k8s-a-gone", "addr-4b4b4b4b4b4b4b4b", freeIP, "", "",
		records.Plan{ID: "plan-7d7d7d7d7d7d", Kind: records.KindDestroy, Summary: runner.PlanSummary{Remove: 1}, Policy: "manual",
			Outcome: records.Applied, PlannedAt: ago(4 * time.Hour), DecidedAt: decidedAgo(3 * time.Hour)},
		appliedChange("plan-7a7a7a7a7a7a", 5*time.Hour))
	free := "address:" + s.svcNS + "/k8s-a-free"

	// No terminal, no --yes: refused after showing the address; not
	// confirmed: nothing created.
	s.asksFirst("release.golden", "refusing to release an address", func() int { return len(s.releases()) }, "release", free)

	// Confirmed on the terminal, named by its IP (which the released
	// k8s-a-gone's record still shows): an AddressRelease as the caller.
	out := s.mustRun(typed("y\n"), "release", freeIP, "--wait=0")
	created := regexp.MustCompile(`\? \[y/N\]: Created AddressRelease release-system/release-[a-z0-9]+ as ` + regexp.QuoteMeta(s.user) +
		`: the controller plans the release of address:release-shop/k8s-a-free \(` + freeID + `, ` + regexp.QuoteMeta(freeIP) + `\), a destroy of its workspace\.\n` +
		`It waits for another reviewer's approval: examplectl approve address:release-shop/k8s-a-free\. Your own approval does not count\.\n$`)
	if !created.MatchString(out) {
		t.Errorf("confirmed release:\n%s", out)
	}
	want := reviewapi.AddressReleaseSpec{Address: objectref.Address(s.svcNS, "k8s-a-free"), Requester: s.user}
	if r := s.releases(); len(r) != 1 || r[0].Spec != want {
		t.Fatalf("AddressReleases = %+v; want one with %+v", r, want)
	}

	// --yes: no question; named by its id, with a comment.
	s.yesSkipsTheQuestion("Created AddressRelease release-system/release-", "release", freeID, "--comment", "DNS moved off it", "--wait=0")
	want.Comment = "DNS moved off it"
	if r := s.releases(); len(r) != 2 || !(r[0].Spec == want || r[1].Spec == want) {
		t.Errorf("AddressReleases after --yes = %+v; want one with %+v", r, want)
	}

	// Refused before anything is created, --yes or not.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"address:" + s.svcNS + "/k8s-a-none"}, "no plan record for address:release-shop/k8s-a-none in namespace release-system: it is not an address the controller keeps"},
		{[]string{"203.0.113.99"}, "no plan record of an address with IP 203.0.113.99 in namespace release-system: it is not an address the controller keeps"},
		{[]string{freeID, "-n", "other"}, "no plan record of an address with id " + freeID + " of namespace other in namespace release-system"},
		{[]string{"web"}, `"web" is not an address: want address:NS/NAME`},
		{[]string{"address:k8s-a-held", "-n", s.svcNS}, "refusing to release address:release-shop/k8s-a-held: Service release-shop/green (lb-00aa00aa00aa00aa) holds it as of its last apply (60m ago), " +
			"and it cannot be released while a load balancer holds it: the Service must let go of it first (once it has, the address's next apply records it detached)"},
		{[]string{heldIP}, "it cannot be released while a load balancer holds it"},
		{[]string{"address:" + s.svcNS + "/k8s-a-moving"}, "refusing to release address:release-shop/k8s-a-moving: " + movePlan + " (change, +0 ~1 -0, planned 2m ago), a move of it, awaits approval: " +
			"it cannot be released before that plan is decided (examplectl approve address:release-shop/k8s-a-moving " + movePlan + ")"},
		{[]string{"address:" + s.svcNS + "/k8s-a-asked"}, "refusing to release address:release-shop/k8s-a-asked: its release is asked already: " + releasePlan +
			" (destroy, +0 ~0 -1, planned 3m ago) awaits another reviewer's approval: examplectl approve address:release-shop/k8s-a-asked " + releasePlan},
		{[]string{"addr-4b4b4b4b4b4b4b4b"}, "refusing to release address:release-shop/k8s-a-gone: it is released already (its destroy plan-7d7d7d7d7d7d was applied 3h ago): its IP went back to the region"},
		{[]string{free, "--comment", strings.Repeat("x", 1025)}, "--comment is 1025 characters; at most 1024"},
	} {
		s.mustFail(tc.want, nil, append(append([]string{"release"}, tc.args...), "--yes")...)
	}
	if r := s.releases(); len(r) != 2 {
		t.Errorf("%d AddressReleases; want 2", len(r))
	}

	s.awaitsTheDecision()
	s.waitsForTheApplyUnderWay()

	// What a record holds is shown inert.
	s.address("k8s-a-odd", "addr-odd"+clear, "203.0.113.7"+clear, "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	out, _, _ = s.run(nil, "release", "address:"+s.svcNS+"/k8s-a-odd")
	if strings.ContainsAny(out, "\x1b\r\u202e\u009b") || !strings.Contains(out, "id:        addr-odd"+shown) {
		t.Errorf("release of a hostile record:\n%q", out)
	}
}

// address saves the record of address name of the scope's Service
// namespace: its last apply output id and ip, and lb and holder ("": none,
// null as a detached address's), and its plans, newest first.
func (s *scope) address(name, id, ip, lb, holder string, plans ...records.Plan) {
	s.t.Helper()
	out := func(v string) json.RawMessage {
		if v == "" {
			return json.RawMessage("null")
		}
		b, _ := json.Marshal(v)
		return b
	}
	s.save(&records.Record{
		Object: objectref.Address(s.svcNS, name), Workspace: "demo-address-" + s.svcNS + "-" + name, Policy: plans[0].Policy,
		Files: map[string]string{"main.tf": "# address " + name + "\n"},
		Plans: plans,
		Applied: &records.LastApply{HCLHash: "a7a7a7a7", At: ago(time.Hour), Outputs: map[string]json.RawMessage{
			"id": out(id), "ip": out(ip), "load_balancer_id": out(lb), "holder": out(holder),
		}},
	})
}

// appliedChange is an address's reservation, applied ago.
func appliedChange(id string, d time.Duration) records.Plan {
	return records.Plan{ID: id, Kind: records.KindChange, Summary: runner.PlanSummary{Add: 1}, Policy: "auto",
		Outcome: records.Applied, PlannedAt: ago(d + time.Minute), DecidedAt: decidedAgo(d)}
}

// awaitsTheDecision checks that release waits for the controller's first
// decision and says it: the release planned (with the command that
// approves it), refused (failing, in the controller's words), not yet
// taken up, or waiting (the controller's reason). The controller's part is played by the test, on the request
// examplectl creates.
func (s *scope) awaitsTheDecision() {
	t := s.t
	s.address("k8s-a-spare", "addr-5a5a5a5a5a5a5a5a", "203.0.113.8", "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	spare := "address:" + s.svcNS + "/k8s-a-spare"
	plan := records.Plan{ID: "plan-7e7e7e7e7e7e", Kind: records.KindDestroy, Summary: runner.PlanSummary{Remove: 1}, Policy: "manual",
		Outcome: records.AwaitingApproval, PlannedAt: ago(2 * time.Minute), Author: s.user}
	done := s.onRelease(func(ctx context.Context, r *reviewapi.AddressRelease) error {
		_, err := s.store.Update(ctx, "demo-address-"+s.svcNS+"-k8s-a-spare", func(rec *records.Record) error {
			rec.Plans = append([]records.Plan{plan}, rec.Plans...)
			return nil
		})
		return err
	})
	out := s.mustRun(nil, "release", spare, "--yes", "--wait=20s")
	testkit.Must(t, <-done)
	if want := "The controller planned plan-7e7e7e7e7e7e (destroy, +0 ~0 -1, planned 2m ago): it waits for another reviewer's approval: " +
		"examplectl approve " + spare + " plan-7e7e7e7e7e7e. Your own approval does not count.\n"; !strings.HasSuffix(out, want) {
		t.Errorf("release, planned:\n%s\nwant it to end with:\n%s", out, want)
	}

	s.address("k8s-a-named", "addr-6969696969696969", "203.0.113.10", "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	named := "address:" + s.svcNS + "/k8s-a-named"
	done = s.onRelease(func(ctx context.Context, r *reviewapi.AddressRelease) error {
		return s.controllerSays(ctx, "ReleaseRefused", corev1.EventTypeWarning,
			fmt.Sprintf("AddressRelease %s by %q: address %s/k8s-a-named is not released: Service other/web names it\x1b[2J", r.Name, s.user, s.svcNS))
	})
	_, _, err := s.run(nil, "release", named, "--yes", "--wait=20s")
	testkit.Must(t, <-done)
	if err == nil || !strings.Contains(err.Error(), "the controller refused the release: AddressRelease release-") ||
		!strings.Contains(err.Error(), `is not released: Service other/web names it\x1b[2J`) || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("release, refused: %v; want the controller's words, inert", err)
	}

	// Nobody decides (that refusal named another request): it says so.
	out = s.mustRun(nil, "release", named, "--yes", "--wait=1s")
	if want := "The controller has not taken it up within 1s (its leader looks every few seconds): examplectl status " + named + " shows the release once planned.\n"; !strings.HasSuffix(out, want) {
		t.Errorf("release, not taken up:\n%s\nwant it to end with:\n%s", out, want)
	}

	// Taken up, not decided: the controller's reason is shown.
	done = s.onRelease(func(ctx context.Context, r *reviewapi.AddressRelease) error {
		return s.controllerSays(ctx, "ReleaseWaits", corev1.EventTypeNormal,
			fmt.Sprintf("AddressRelease %s by %q: address %s/k8s-a-named is not decided yet: the Gateways are unread; it is looked at again", r.Name, s.user, s.svcNS))
	})
	out = s.mustRun(nil, "release", named, "--yes", "--wait=2s")
	testkit.Must(t, <-done)
	if !strings.Contains(out, "The controller has not decided it within 2s: AddressRelease release-") ||
		!strings.HasSuffix(out, "is not decided yet: the Gateways are unread; it is looked at again\nexamplectl status "+named+" shows the release once planned.\n") {
		t.Errorf("release, waiting:\n%s\nwant the controller's reason", out)
	}
}

// waitsForTheApplyUnderWay checks that an address named by its IP while
// its apply is under way (which clears the id and IP its record shows) is
// waited for within --wait, and that past it the error names the address
// whose IP is not known.
func (s *scope) waitsForTheApplyUnderWay() {
	t := s.t
	const busyIP = "203.0.113.11"
	ws := "demo-address-" + s.svcNS + "-k8s-a-busy"
	s.address("k8s-a-busy", "addr-7878787878787878", busyIP, "", "", appliedChange("plan-7a7a7a7a7a7a", time.Hour))
	rec, err := s.store.Get(t.Context(), ws)
	testkit.Must(t, err)
	applied := rec.Applied
	applying := func(r *records.Record) error {
		r.Applying = &records.ApplyStart{Plan: records.Plan{ID: "plan-7f7f7f7f7f7f", Kind: records.KindChange}, StartedAt: ago(2 * time.Second)}
		r.Applied = nil
		return nil
	}
	_, err = s.store.Update(t.Context(), ws, applying)
	testkit.Must(t, err)
	s.mustFail("no plan record of an address with IP "+busyIP+" in namespace release-system now: address:release-shop/k8s-a-busy's apply is under way (started 2s ago), "+
		"and an address's id and IP are read from its last apply: name it as address:NS/NAME, or ask again once the apply ends", nil, "release", busyIP, "--yes", "--wait=0")
	s.mustFail("address:release-shop/k8s-a-busy's apply is under way", nil, "release", busyIP, "--yes", "--wait=1s")
	if out := s.mustRun(nil, "addresses", "-n", s.svcNS); !regexp.MustCompile(`(?m)^address:release-shop/k8s-a-busy +- +- +release-shop +unknown: an apply under way \(2s\) +plan-7a7a7a7a7a7a `).MatchString(out) {
		t.Errorf("addresses while k8s-a-busy's apply is under way:\n%s", out)
	}

	// The apply ends while release waits: the address is found.
	ended := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		_, err := s.store.Update(t.Context(), ws, func(r *records.Record) error {
			r.Applying, r.Applied = nil, applied
			return nil
		})
		ended <- err
	}()
	out, errOut, err := s.run(nil, "release", busyIP, "--yes", "--wait=10s")
	testkit.Must(t, <-ended)
	if err != nil || !strings.Contains(out, "Created AddressRelease release-system/release-") || !strings.Contains(out, "address:release-shop/k8s-a-busy (addr-7878787878787878, "+busyIP+")") ||
		errOut != "No address the controller keeps shows "+busyIP+" yet, and address:release-shop/k8s-a-busy's apply is under way (started 2s ago): waiting for it to end (at most 10s).\n" {
		t.Errorf("release while the address's apply is under way: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}

// controllerSays records the controller's event of reason on the address
// record's ConfigMap, as the controller would.
func (s *scope) controllerSays(ctx context.Context, reason, typ, message string) error {
	_, err := s.client.CoreV1().Events(s.ccmNS).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "controller-", Namespace: s.ccmNS},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: s.ccmNS, Name: "ccm-plans-demo-address"},
		Reason:         reason, Type: typ, Message: message,
	}, metav1.CreateOptions{})
	return err
}

// onRelease plays the controller: decide runs on the next AddressRelease
// created, and its error (or the wait's) comes on the channel.
func (s *scope) onRelease(decide func(context.Context, *reviewapi.AddressRelease) error) <-chan error {
	seen := map[string]bool{}
	for _, r := range s.releases() {
		seen[r.Name] = true
	}
	done := make(chan error, 1)
	go func() {
		done <- wait.PollUntilContextTimeout(s.t.Context(), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			l, err := reviewapi.ListAddressReleases(ctx, s.dynamic, s.ccmNS)
			if err != nil {
				return false, err
			}
			for _, r := range l {
				if !seen[r.Name] {
					return true, decide(ctx, r)
				}
			}
			return false, nil
		})
	}()
	return done
}
