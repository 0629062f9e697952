package cloudconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/cloudconfig/cloudconfigtest"
)

// durationCase is a setting added to the minimal config and the duration
// it gives, or an error naming the field.
type durationCase struct {
	set  string
	want time.Duration
	err  bool
}

// checkDuration loads each case and checks the duration got reads from
// the config, or that the error names field.
func checkDuration(t *testing.T, field string, got func(*Config) time.Duration, cases []durationCase) {
	t.Helper()
	for _, tc := range cases {
		c, err := Load([]byte(cloudconfigtest.Minimal + tc.set + "\n"))
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), field)):
			t.Errorf("%q: %v, want an error naming %s", tc.set, err, field)
		case !tc.err && err != nil:
			t.Errorf("%q: %v", tc.set, err)
		case !tc.err && got(c) != tc.want:
			t.Errorf("%q: %s, want %s", tc.set, got(c), tc.want)
		}
	}
}
