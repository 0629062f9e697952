package runner

import "testing"

// Every terraform process collects garbage only near its memory limit
// (internal/tfgc), unless the runner is told otherwise; a caller's Env
// still has the last word.
func TestProcessGarbageCollector(t *testing.T) {
	for _, c := range []struct {
		name           string
		cfg            Config
		gogc, memlimit string
	}{
		{"default", Config{}, "off", "536870912"},
		{"limit", Config{ProcessMemoryLimit: 1 << 30}, "off", "1073741824"},
		{"Go's collector", Config{ProcessMemoryLimit: -1}, "", ""},
		{"caller's Env", Config{Env: map[string]string{"GOGC": "100"}}, "100", "536870912"},
	} {
		env := (&Runner{cfg: c.cfg}).env(nil)
		if env["GOGC"] != c.gogc || env["GOMEMLIMIT"] != c.memlimit {
			t.Errorf("%s: GOGC=%q GOMEMLIMIT=%q, want %q %q", c.name, env["GOGC"], env["GOMEMLIMIT"], c.gogc, c.memlimit)
		}
	}
}
