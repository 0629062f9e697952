// Package review is what the controller makes of every plan besides
// planning and applying it: who may approve it, what people read of it,
// and what survives a restart.
//
// The engine decides a plan under an engine.Review (apply policy, policy
// rules, approvals) and returns an engine.Outcome; it knows nothing of
// Kubernetes objects people read. This package builds that engine.Review
// for one object and turns the Outcome into events, the plan record, the
// audit log and metrics. It lives apart from the front-ends (the cloud
// provider's load balancers, routes, groups, target pools and drift
// checks; the Gateway API controller) so that they call it, never the
// other way round, each through the interface of what it needs
// (ccm/reviewer.go, gatewaycontroller/program.go).
//
// Board does it all, one method a job:
//
//   - wiring: New (Open, with the audit log the config names), Connect
//     (the Kubernetes client), WatchApprovals, RegisterMetrics;
//     SetReplica, ShardMoved and DropWarmRecords for sharding;
//   - a reconcile's Subject: ServiceSubject, GroupSubject,
//     GatewaySubject (with its GatewayInputs), AddressSubject,
//     GatewayAddressSubject (a Gateway's reserved address),
//     RuleSetSubject (a route's rules on a Gateway's load balancer),
//     RouteSetSubject, PoolsSubject, PodPoolSubject, DriftSubject, and CausedBy for a
//     change another object caused (objectref.Ref is the object's
//     identity);
//   - a change run under review: Run (the engine's call gets the
//     engine.Review that For builds, and its outcome is reported);
//   - an apply's start, before terraform runs: its audit line and its
//     record, which the object's next plan settles if it never reports;
//   - its outcome: Report; Failed, Eventf, RetiredAnnotations,
//     ReportMembers, GroupRemoved, ConsentWithdrawn and ReportLeaving for
//     what the front-ends refuse, adjust or decide themselves (GuestError
//     is what a group's guest is told; a rule set's route is told what
//     became of its plan, routeReasons); Inert for the errors the service
//     controller puts in events; Removed after a removal (a record goes
//     when nothing was destroyed);
//   - state unlock requests: Unlock (through the engine, an Unlocker),
//     and StaleLockForced (the runner's hook);
//   - address release requests, which servicelb decides: AddressReleases,
//     AddressReleaseSubject (the release, authored by its requester),
//     WaitingChange (a move it must not supersede), ReleaseTaken,
//     ReleaseWaits (a decision that cannot be made yet, said once),
//     ReleaseEnded (audit lines, a refusal's event, the request used up)
//     and ReleaseStale (a request older than the identity policy);
//   - the engine's PlanStore (Load), the record move of a state migration
//     (MoveRecord), the records for group membership (Records);
//   - secrets kept out of events and the audit log: Redact, RedactFrom,
//     RedactCredentials;
//   - its memory, for the soak tests: Sizes.
//
// Approvals (PlanApproval), unlock requests (StateUnlock) and release
// requests (AddressRelease) count only while the API server verifies who
// made them (docs/review.md).
package review
