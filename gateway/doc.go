// Package gateway is the Gateway API front-end, beside the Service one in
// ccm: a Gateway of this controller's GatewayClass is one Example load
// balancer, its routes the load balancer's rules: HTTPRoutes' L7 rules,
// TLSRoutes' SNI rules, TCPRoutes' and UDPRoutes' one rule per listener.
// This package holds the decisions, free of I/O: which listeners a route
// attaches to (parentRefs, sectionName, port, allowedRoutes, hostnames),
// and the routes' matches as cloud rules in the Gateway API's precedence.
package gateway
