package cloudconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
)

// gatewayAPI.hostnameClaimGrace: 15m unless set; 0s to 24h.
func TestHostnameClaimGrace(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want time.Duration
		err  bool
	}{
		{"", DefaultHostnameClaimGrace, false},
		{"gatewayAPI: {hostnameClaimGrace: 0s}", 0, false},
		{"gatewayAPI: {enabled: true, hostnameClaimGrace: 1h}", time.Hour, false},
		{"gatewayAPI: {hostnameClaimGrace: 25h}", 0, true},
		{"gatewayAPI: {hostnameClaimGrace: -1m}", 0, true},
		{"gatewayAPI: {hostnameClaimGrace: soon}", 0, true},
	} {
		c, err := Load([]byte(cloudconfigtest.Minimal + tc.set + "\n"))
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), "gatewayAPI.hostnameClaimGrace")):
			t.Errorf("%q: %v, want an error naming the field", tc.set, err)
		case !tc.err && err != nil:
			t.Errorf("%q: %v", tc.set, err)
		case !tc.err && c.GatewayAPI.HostnameClaimGrace.Duration != tc.want:
			t.Errorf("%q: %s, want %s", tc.set, c.GatewayAPI.HostnameClaimGrace.Duration, tc.want)
		}
	}
}
