package gateway

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A duration the API server's schema would refuse (one it did not check)
// is named; Gateway API durations pass and convert to milliseconds.
func TestUnsupportedTiming(t *testing.T) {
	d := func(s string) *gatewayv1.Duration { v := gatewayv1.Duration(s); return &v }
	ok := gatewayv1.HTTPRouteRule{Timeouts: &gatewayv1.HTTPRouteTimeouts{Request: d("1h30m"), BackendRequest: d("250ms")},
		Retry: &gatewayv1.HTTPRouteRetry{Backoff: d("0s")}}
	if why := unsupportedTiming(ok, "spec.rules[0]"); why != "" {
		t.Errorf("Gateway API durations refused: %s", why)
	}
	if ms := milliseconds(ok.Timeouts.Request); ms != 5400000 {
		t.Errorf("1h30m is %d ms", ms)
	}
	bad := gatewayv1.HTTPRouteRule{Retry: &gatewayv1.HTTPRouteRetry{Backoff: d("1.5s")}}
	want := `spec.rules[1].retry.backoff: "1.5s" is not a Gateway API duration (such as 500ms, 10s or 1h30m)`
	if why := unsupportedTiming(bad, "spec.rules[1]"); why != want {
		t.Errorf("got %q, want %q", why, want)
	}
}
