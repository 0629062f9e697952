package cloudconfig

// GatewayAPIConfig turns on the Gateway API front-end
// (docs/gateway-api.md): the controller named gateway, run by the leader,
// serves the GatewayClasses whose controllerName is
// example.com/gateway-controller. It needs Gateway API's CRDs and the
// chart's gatewayAPI RBAC.
type GatewayAPIConfig struct {
	Enabled bool `json:"enabled,omitempty"`
}
