package gateway

import (
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// AppProtocolH2C is the appProtocol of a Service port that speaks HTTP/2
// without TLS, by prior knowledge (Kubernetes' standard name, which the
// Gateway API's HTTPRouteBackendProtocolH2C names).
const AppProtocolH2C = "kubernetes.io/h2c"

// BackendProtocol is the cloud backend protocol in which a route of kind
// reaches a Service port of appProtocol: for an HTTPRoute, h2c for
// kubernetes.io/h2c, and "" (HTTP/1.1) for any other: kubernetes.io/ws
// (a WebSocket's upgrade is HTTP/1.1), none, or one this controller does
// not know, as before it read them. A GRPCRoute's is h2c, whatever the
// port says: gRPC is HTTP/2, and the cloud's backends are without TLS.
// Routes of the other kinds forward connections as they come, whatever
// the port speaks.
func BackendProtocol(kind string, appProtocol *string) string {
	if kind == objectref.KindGRPCRoute {
		return exampleapi.BackendH2C
	}
	if kind == objectref.KindHTTPRoute && appProtocol != nil && *appProtocol == AppProtocolH2C {
		return exampleapi.BackendH2C
	}
	return ""
}
