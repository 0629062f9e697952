package cloudconfig

import (
	"testing"
	"time"
)

// gatewayAPI.hostnameClaimGrace: 15m unless set; 0s to 24h.
func TestHostnameClaimGrace(t *testing.T) {
	checkDuration(t, "gatewayAPI.hostnameClaimGrace", func(c *Config) time.Duration { return c.GatewayAPI.HostnameClaimGrace.Duration }, []durationCase{
		{"", DefaultHostnameClaimGrace, false},
		{"gatewayAPI: {hostnameClaimGrace: 0s}", 0, false},
		{"gatewayAPI: {enabled: true, hostnameClaimGrace: 1h}", time.Hour, false},
		{"gatewayAPI: {hostnameClaimGrace: 25h}", 0, true},
		{"gatewayAPI: {hostnameClaimGrace: -1m}", 0, true},
		{"gatewayAPI: {hostnameClaimGrace: soon}", 0, true},
	})
}
