package cloudconfig

import (
	"cmp"
	"time"
)

// GatewayAPIConfig turns on the Gateway API front-end
// (docs/gateway-api.md): the controller named gateway, run by the leader,
// serves the GatewayClasses whose controllerName is
// example.com/gateway-controller. It needs Gateway API's CRDs and the
// chart's gatewayAPI RBAC.
type GatewayAPIConfig struct {
	Enabled bool `json:"enabled,omitempty"`
	// HostnameClaimGrace is how long a host name or TCP/UDP listener a
	// namespace holds on a shared Gateway stays its once no route of it
	// serves it (default 15m, 0s to 24h): a route deleted and created
	// again (a redeploy, kubectl replace --force) finds it still its own.
	HostnameClaimGrace *Duration `json:"hostnameClaimGrace,omitempty"`
	// TargetType is what a Gateway's load balancer forwards to: ip (the
	// default), the pods of each backend Service port directly, through
	// its pod pool (docs/adr/0024-pod-targets.md); or node, the node
	// ports of the target pool of every node (NodePort Services only).
	TargetType string `json:"targetType,omitempty"`
}

// Gateways' target types (gatewayAPI.targetType).
const (
	TargetTypeIP   = "ip"
	TargetTypeNode = "node"
)

// DefaultHostnameClaimGrace is gatewayAPI.hostnameClaimGrace's default:
// longer than a redeploy, short enough that a name given up is free the
// same hour.
const DefaultHostnameClaimGrace = 15 * time.Minute

func (g *GatewayAPIConfig) defaults() {
	if g.HostnameClaimGrace == nil {
		g.HostnameClaimGrace = &Duration{Duration: DefaultHostnameClaimGrace}
	}
	if g.TargetType == "" {
		g.TargetType = TargetTypeIP
	}
}

func (g *GatewayAPIConfig) validate(bad func(field, format string, args ...any)) {
	if d := g.HostnameClaimGrace; d != nil && (d.invalid != "" || d.Duration > 24*time.Hour) {
		bad("gatewayAPI.hostnameClaimGrace", "%q: want a duration from 0s to 24h", cmp.Or(d.invalid, d.String()))
	}
	if g.TargetType != TargetTypeIP && g.TargetType != TargetTypeNode {
		bad("gatewayAPI.targetType", "unknown target type %q (accepted: ip, node)", g.TargetType)
	}
}
