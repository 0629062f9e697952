// Package gateway is the Gateway API front-end, beside the Service one in
// ccm: a Gateway of this controller's GatewayClass is one Example load
// balancer, its routes the load balancer's rules: HTTPRoutes' L7 rules
// (GRPCRoutes' too, read as HTTPRoutes: grpcroutes.go), TLSRoutes' SNI
// rules, TCPRoutes' and UDPRoutes' one rule per listener.
// This package holds the decisions, free of I/O: which listeners a route
// attaches to (parentRefs, sectionName, port, allowedRoutes, hostnames),
// the routes' matches as cloud rules in the Gateway API's precedence, and
// the tenant boundary of a shared Gateway: routes admitted oldest first,
// each whole, under the cloud's own checks and rule budget (a route never
// fails the Gateway), and host names and TCP/UDP listeners held by the
// namespace that served them first (claims.go, ADR 0021). ListenerSets
// add tenants' listeners to a Gateway, where its allowedListeners admits
// them, under the same conflict rules and claims (ADR 0027).
//
// What it decides of a Gateway is an lbmodel.LoadBalancer (Program),
// the description the engine renders; it never sees the renderer. The
// golden files in testdata/translate show each decision whole: Gateway
// API objects in, the model and the statuses out (TestTranslateGolden,
// -update to rewrite them).
package gateway
