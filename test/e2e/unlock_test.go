package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A CCM killed mid-apply leaves the kubernetes backend's Lease lock behind
// (it never expires). The restarted CCM reports the lock in the record;
// a reviewer forces it open with a StateUnlock (what examplectl unlock
// creates), and the Service converges to one LB.
func TestForceUnlockByReviewer(t *testing.T) {
	testsize.SkipShort(t, "a lock left by a killed apply, opened by a reviewer")
	t.Parallel()
	e := newEnv(t, options{state: "kubernetes", provisionDelay: 30 * time.Second, lockTimeout: "1s", staleLockAge: "1h"})
	e.nodeA()
	svc, err := e.kube.CoreV1().Services("default").Create(testkit.Context(t), lbService("locked", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	e.waitLBCount(t, 1, "LB being provisioned")
	e.killCCM(e.ccm) // terraform dies with it, holding the state lock
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 100})
	e.startCCM()

	var lockID string
	testkit.Eventually(t, 60*time.Second, "lock recorded", func() error {
		var rec struct {
			Lock *struct {
				ID string `json:"id"`
			} `json:"lock"`
		}
		data, ok := e.findRecord(t, "locked")
		if !ok {
			return fmt.Errorf("no record yet")
		}
		if err := json.Unmarshal([]byte(data), &rec); err != nil {
			return err
		}
		if rec.Lock == nil || rec.Lock.ID == "" {
			return fmt.Errorf("no lock in the record")
		}
		lockID = rec.Lock.ID
		return nil
	})
	if len(e.events("locked", "StateLocked")) == 0 {
		t.Fatal("no StateLocked event")
	}
	bob := e.reviewer(t, "bob")
	_, err = reviewapi.CreateStateUnlock(testkit.Context(t), bob.dyn, namespace, reviewapi.StateUnlockSpec{Object: serviceRef(svc), LockID: lockID, Requester: bob.name})
	testkit.Must(t, err)
	svc = e.waitIngress("locked", 90*time.Second)
	all, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	testkit.Must(t, err)
	if len(all) != 1 || all[0].IPv4 != svc.Status.LoadBalancer.Ingress[0].IP {
		t.Fatalf("after unlock: %d LBs %+v", len(all), all)
	}
	if len(e.events("locked", "ForceUnlocked")) == 0 {
		t.Error("no ForceUnlocked event")
	}
	for _, a := range e.auditEntries(t) {
		if a.Action == "force-unlock" && a.Details["lockID"] == lockID {
			if a.Actor != bob.name {
				t.Fatalf("unlock audited as %q, want %q", a.Actor, bob.name)
			}
			return
		}
	}
	t.Fatal("no force-unlock audit line")
}
