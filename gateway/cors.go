package gateway

import (
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// An HTTPRoute rule's CORS filter is the cloud rule's cors: the load
// balancer answers the preflights and marks the answers (the cloud's own
// check refuses what it cannot hold, naming the field). An origin is
// compared without case: the cloud takes it in lower case.

// corsOf is f as the cloud rule's CORS.
func corsOf(f *gatewayv1.HTTPCORSFilter) *exampleapi.CORS {
	if f == nil {
		return nil
	}
	out := &exampleapi.CORS{AllowCredentials: f.AllowCredentials != nil && *f.AllowCredentials, MaxAgeSeconds: int(f.MaxAge)}
	for _, o := range f.AllowOrigins {
		out.AllowOrigins = append(out.AllowOrigins, strings.ToLower(string(o)))
	}
	for _, m := range f.AllowMethods {
		out.AllowMethods = append(out.AllowMethods, string(m))
	}
	for _, h := range f.AllowHeaders {
		out.AllowHeaders = append(out.AllowHeaders, string(h))
	}
	for _, h := range f.ExposeHeaders {
		out.ExposeHeaders = append(out.ExposeHeaders, string(h))
	}
	return out
}
