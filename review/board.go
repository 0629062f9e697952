package review

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/lru"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/redact"
)

// Board reviews the controller's objects: one per controller, shared by
// everything that reconciles, because approvals, records and the audit
// log are the cluster's, not one object's. Its parts are in the files
// named for them: subject.go, decision.go, report.go, events.go,
// audit.go, records.go, planstore.go, approvals.go, unlock.go, ...
type Board struct {
	cfg       *cloudconfig.Config
	client    kubernetes.Interface
	store     *records.Store // nil until the CCM has a Kubernetes client
	audit     *audit.Log
	recorder  record.EventRecorder
	approvals *approvals
	phases    phases
	// self is the controller's own user, as the API server knows it: the
	// actor of what it does on its own (auto applies, stale unlocks).
	self string

	// said remembers one-time messages (an ignored approval, a retired
	// annotation) already reported: the newest saidSize of them.
	saidMu sync.Mutex
	said   *lru.Cache

	redactor redactor
	// warm answers the first record reads after a start.
	warm warmRecords
	// members is what was last said of each group's members.
	members memberReports
}

// New is the board of a controller running cfg; log may be nil (no
// audit log). It records nothing until Connect.
func New(cfg *cloudconfig.Config, log *audit.Log) *Board {
	return &Board{cfg: cfg, audit: log, recorder: &record.FakeRecorder{}, self: "example-cloud-controller-manager", said: lru.New(saidSize),
		approvals: newApprovals(cfg.Review.Namespace, cfg.Review.Approvals.Required, cfg.Review.Approvals.PolicyPropagation.Duration), redactor: redactor{secrets: redact.New()}}
}

// Connect gives the board the controller's Kubernetes client: plan
// records in the controller's namespace, events through recorder, and the
// controller's own name as the API server knows it (SelfSubjectReview).
func (b *Board) Connect(ctx context.Context, client kubernetes.Interface, recorder record.EventRecorder) {
	b.setClient(client, recorder)
	b.self = whoAmI(ctx, client, b.self)
}

func (b *Board) setClient(client kubernetes.Interface, recorder record.EventRecorder) {
	b.client = client
	b.store = records.NewStore(client, b.cfg.Review.Namespace, b.cfg.Review.Keep)
	b.recorder = recorder
}

// WatchApprovals starts reading the PlanApprovals and StateUnlocks of the
// controller's namespace (an informer) until stop; before, none counts.
// Those that can no longer do anything are collected (collect.go).
// It needs the client of Connect to check the admission policy.
func (b *Board) WatchApprovals(dyn dynamic.Interface, stop <-chan struct{}) {
	b.approvals.start(b.client, dyn, stop)
	go b.collectLoop(stop)
}

// Records lists every plan record (nil before Connect): what a
// controller that starts reads of the groups' members.
func (b *Board) Records(ctx context.Context) ([]*records.Record, error) {
	if b.store == nil {
		return nil, nil
	}
	return b.store.List(ctx)
}

// Open is New with the audit log cfg.Review.AuditLog names opened.
func Open(cfg *cloudconfig.Config) (*Board, error) {
	log, err := audit.Open(cfg.Review.AuditLog)
	if err != nil {
		return nil, fmt.Errorf("review.auditLog: %w", err)
	}
	return New(cfg, log), nil
}
