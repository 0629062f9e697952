// Package review is what the controller makes of every plan besides
// planning and applying it: who may approve it, what people read of it,
// and what survives a restart.
//
// The engine decides a plan under an engine.Review (apply policy, policy
// rules, approvals) and returns an engine.Outcome; it knows nothing of
// Kubernetes objects people read. This package builds that engine.Review
// for one object and turns the Outcome into events, the plan record, the
// audit log and metrics. It lives apart from the cloud provider (package
// ccm) so that the provider's load balancers, routes, groups, target
// pools and drift checks call it through one narrow interface, and never
// the other way round:
//
//   - wiring: New, Connect (the Kubernetes client), WatchApprovals,
//     RegisterMetrics;
//   - a reconcile's Subject: ServiceSubject, GroupSubject,
//     RouteSetSubject, PoolsSubject, DriftSubject (objectref.Ref is the
//     object's identity);
//   - its engine.Review: For;
//   - its outcome: Report, and Failed, Eventf, RetiredAnnotations and
//     ReportMembers for what the provider refuses or adjusts itself;
//     Removed after a removal (a record goes when nothing was destroyed);
//   - state unlock requests: Unlock, and StaleLockForced (the runner's
//     hook);
//   - the engine's PlanStore (Load), the record move of a state migration
//     (MoveRecord), the records for group membership (Records);
//   - secrets kept out of events and the audit log: Redact,
//     RedactCredentials.
//
// Approvals (PlanApproval) and unlock requests (StateUnlock) count only
// while the API server verifies who made them (docs/review.md).
package review
