package ccm

import (
	"context"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/review"
)

// What each reconciler here needs of review (a *review.Board serves them
// all): to run a change under review, reported (changes), and to name what
// it changes (a Subject); the Services' load balancers say what they need
// in package servicelb. Only the controller's wiring (provider.go) holds
// the Board itself.

// changes runs changes under review: Run gives the engine's call the
// Review it decides under and reports the outcome; Unlock executes the
// state-unlock requests of a subject first.
type changes interface {
	Run(ctx context.Context, s *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error)
	Unlock(ctx context.Context, r review.Unlocker, s review.Subject, render func() (engine.Job, error))
}

// routeReviewer is what the route set needs.
type routeReviewer interface {
	changes
	RouteSetSubject(workspace, kind string) review.Subject
}

// driftReviewer is what the drift sweep needs.
type driftReviewer interface {
	changes
	DriftSubject(ctx context.Context, k engine.Known) review.Subject
}

var (
	_ routeReviewer = (*review.Board)(nil)
	_ driftReviewer = (*review.Board)(nil)
)
