package ccm

import (
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// sink keeps the events the recorder sends (in place of the API server:
// what is tested is which events the recorder lets through).
type sink struct {
	mu     sync.Mutex
	events []*v1.Event
}

func (s *sink) Create(e *v1.Event) (*v1.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	return e, nil
}
func (s *sink) Update(e *v1.Event) (*v1.Event, error)          { return s.Create(e) }
func (s *sink) Patch(e *v1.Event, _ []byte) (*v1.Event, error) { return s.Create(e) }

func (s *sink) reasons() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, e := range s.events {
		out[e.Reason]++
	}
	return out
}

// Forty events of one reason on a Gateway spend that reason's spam
// budget (25 at once) and no other's: the AwaitingApproval after them
// is recorded.
func TestEventBudgetPerReason(t *testing.T) {
	s := &sink{}
	rec := recorderTo(s)
	gw := &v1.ObjectReference{Kind: "Gateway", APIVersion: "gateway.networking.k8s.io/v1", Namespace: "infra", Name: "gw", UID: types.UID("u-1")}
	for i := range 40 {
		// Messages differ (each names its plan), as the controller's do.
		rec.Eventf(gw, v1.EventTypeNormal, "Applied", "plan-%02d applied", i)
	}
	rec.Event(gw, v1.EventTypeNormal, "AwaitingApproval", "plan-40 waits for an approval")
	testkit.Eventually(t, 10*time.Second, "the AwaitingApproval event recorded", func() error {
		if got := s.reasons(); got["AwaitingApproval"] != 1 {
			return fmt.Errorf("reasons recorded %v", got)
		}
		return nil
	})
	if got := s.reasons()["Applied"]; got != 25 {
		t.Errorf("Applied events recorded: %d, want 25 (the spam filter's burst)", got)
	}
}
