// Package servicemodel is a Service's own load balancer as package
// lbmodel describes it: the Service front-end's translation, beside
// package gateway's for Gateways. Translate reads the Service, its
// annotations (read once, annotations.Read), the nodes and what the
// cluster's config decides (Config), and returns the lbmodel.LoadBalancer
// the renderer renders: its listeners (one per Service port, to its node
// port; http and https on the ports the annotations name, with their
// certificates, redirect and sticky sessions; proxy protocol), its health
// check, source ranges, targets or target pool, name and tags; of target
// type ip, no targets but each listener's rule to its Service port's pod
// pool (pods.go).
//
// It is pure: no I/O, no clock. Check refuses a Service before anything
// else is done for it, Shape is what a reviewer reads of it (the
// preview's fallback); both read what Translate reads. Invalid input is
// an error naming the Service's field (lbmodel.InputError,
// TooManyListenersError, UnsupportedProtocolError, annotations.Error);
// the model's own Validate checks the result again, by its own fields.
// The golden files in testdata/translate show each translation whole:
// a Service, nodes and config in, the model or the error out
// (TestTranslateGolden, -update to rewrite them).
//
// It imports neither front-end nor the engine, the renderer or the
// runner: the engine translates where it renders (docs/adr/0022).
package servicemodel
