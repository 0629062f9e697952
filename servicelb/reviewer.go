package servicelb

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Reviewer is what the Services' load balancers, groups, target pools and
// addresses need of review (a *review.Board): to run a change under
// review, reported (changes); to name what it changes (a Subject); and
// to tell people what happened beside a change (teller).
type Reviewer interface {
	changes
	teller
	releaseRequests
	ServiceSubject(ctx context.Context, in *annotations.Service, kind string) review.Subject
	GroupSubject(ctx context.Context, g annotations.Group, workspace string, members []*v1.Service, caller *v1.Service, kind string) review.Subject
	PoolsSubject(workspace, kind string) review.Subject
	CausedBy(ctx context.Context, s review.Subject, in *annotations.Service) review.Subject
	AddressSubject(ctx context.Context, ns, name, workspace string, taker *annotations.Service, involved []*annotations.Service, kind string) review.Subject
	// Records are the plan records, what groups remember across restarts.
	Records(ctx context.Context) ([]*records.Record, error)
}

// changes runs changes under review: Run gives the engine's call the
// Review it decides under and reports the outcome; Unlock executes the
// state-unlock requests of a subject first.
type changes interface {
	Run(ctx context.Context, s *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error)
	Unlock(ctx context.Context, r review.Unlocker, s review.Subject, render func() (engine.Job, error))
}

// releaseRequests are the requests to release kept reserved addresses,
// what deciding them reads, and the report of a release waiting or
// withdrawn (releases.go).
type releaseRequests interface {
	AddressReleases(ctx context.Context) (review.Requests[reviewapi.AddressRelease], error)
	AddressReleaseSubject(ns, name, workspace string, reqs []*reviewapi.AddressRelease) review.Subject
	Report(ctx context.Context, s review.Subject, out *engine.Outcome, err error)
	WaitingChange(ctx context.Context, workspace string) (string, error)
	ReleaseTaken(s review.Subject, r *reviewapi.AddressRelease)
	ReleaseWaits(s review.Subject, r *reviewapi.AddressRelease, why, reason string)
	ReleaseEnded(ctx context.Context, s review.Subject, r *reviewapi.AddressRelease, why string)
	ReleaseStale(ctx context.Context, s review.Subject, r *reviewapi.AddressRelease, why string)
}

// teller tells people what happened beside a change: events, records
// and audit lines, and secrets to keep out of them.
type teller interface {
	Failed(s review.Subject, err error)
	Eventf(s review.Subject, typ, reason, format string, args ...any)
	Removed(ctx context.Context, out *engine.Outcome)
	GroupRemoved(g annotations.Group)
	ReportMembers(g annotations.Group, rep *engine.GroupReport)
	ReportLeaving(ctx context.Context, s review.Subject, workspace string, leaving, departed []records.LeavingNode)
	ConsentWithdrawn(g annotations.Group, owner, guest *v1.Service, reason string)
	RetiredAnnotations(s review.Subject, ann map[string]string)
	RedactFrom(source string, values ...string)
}

var _ Reviewer = (*review.Board)(nil)
