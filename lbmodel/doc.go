// Package lbmodel is the one description of what a load balancer is to
// be, as a front-end hands it to the engine and the renderer turns it into
// HCL: its listeners and rules and where they forward, its certificates,
// its reserved address, the target pools and routes of the cluster.
// It is data with its own checks and no I/O: each top type has a
// Validate that refuses a description the cloud could not build (with
// the cloud's own rule check, exampleapi.CheckRule), so a front-end can
// check what it decided before anything is rendered, and the renderer
// checks it again.
//
// loadbalancer.go is a load balancer (LoadBalancer, Listener,
// HealthCheck), a Gateway's (package gateway) or a Service's (package
// servicemodel), validate.go the checks of its listeners and of where it
// forwards, tags.go the tags it carries; rules.go its rules; targets.go
// everything a load balancer forwards to, in one place:
// a rule's Backend (a pool and a port, or a Service port's pods), a
// target Pool (a node selection's instances) and a NodeInstance;
// podpool.go a PodPool (a Service port's pods, a ServicePort's) for
// backends that reach pods directly; ruleset.go a RuleSet (one route's
// rules on a Gateway's load balancer, keyed by order); address.go a
// reserved Address and
// a Gateway's AddressUse; routes.go the cluster's Routes; group.go a load
// balancer Group of Services;
// errors.go the InputError every check returns, naming the field.
//
// It imports neither front-end (gateway, gatewaycontroller, servicelb,
// servicemodel, ccm) nor what lies below the engine (renderer, runner),
// nor the engine itself: the seam test in internal/tours keeps it so.
package lbmodel
