package servicelb

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// boardFixture is the review board as the controller connects it, over
// client-go's fake clientset (records, events, Services, Secrets) and a
// fake recorder: what the adapters report is read back through them.
type boardFixture struct {
	board  *review.Board
	cfg    *cloudconfig.Config
	client *fake.Clientset
	events *record.FakeRecorder
	// store reads the records the board wrote.
	store *records.Store
}

// newBoardFixture is a board under reviewtest.Config plus extra, with no
// audit log and no approvals (none is honoured).
func newBoardFixture(t *testing.T, extra string) *boardFixture {
	t.Helper()
	f := &boardFixture{cfg: testConfig(t, extra), client: fake.NewClientset(), events: record.NewFakeRecorder(100)}
	reviewtest.Versioned(f.client)
	f.board = review.New(f.cfg, nil)
	f.board.Connect(t.Context(), f.client, f.events)
	f.store = records.NewStore(f.client, f.cfg.Review.Namespace, f.cfg.Review.Keep)
	return f
}

// takeEvents returns the events recorded since the last call.
func (f *boardFixture) takeEvents() []reviewtest.Event { return reviewtest.Take(f.events) }

// get reads the record of workspace.
func (f *boardFixture) get(t *testing.T, ws string) *records.Record {
	t.Helper()
	r, err := f.store.Get(t.Context(), ws)
	testkit.Must(t, err)
	return r
}
