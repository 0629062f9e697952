package e2e

import (
	"testing"
	"time"
)

// TestGateAdmitsLongFirst: with one slot held, a short and then a long
// waiter queue; a freed slot goes to the long one, the next to the short.
func TestGateAdmitsLongFirst(t *testing.T) {
	t.Parallel()
	g := &gate{free: 1}
	held := g.wait(false)
	<-held
	short, long := g.wait(false), g.wait(true)
	time.Sleep(2 * settle)
	for name, c := range map[string]<-chan struct{}{"short": short, "long": long} {
		select {
		case <-c:
			t.Fatalf("the %s waiter was admitted with no slot free", name)
		default:
		}
	}
	g.release()
	select {
	case <-long:
	case <-short:
		t.Fatal("the short waiter was admitted before the long one")
	case <-time.After(10 * settle):
		t.Fatal("no waiter admitted after a release")
	}
	g.release()
	select {
	case <-short:
	case <-time.After(10 * settle):
		t.Fatal("the short waiter was not admitted after the second release")
	}
}
