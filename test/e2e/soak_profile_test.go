package e2e

import "testing"

// TestGoroutinesIn reads a goroutine profile as the controller's
// /debug/pprof/goroutine?debug=1 writes it (an excerpt of a soak's).
func TestGoroutinesIn(t *testing.T) {
	t.Parallel()
	const profile = "goroutine profile: total 196\n" +
		"8 @ 0x48e10e 0x44f557 0x855732 0x495a81\n" +
		"#\t0x6fd024\tnet.(*conn).Read+0x44\t\t\tnet/net.go:196\n" +
		"#\t0x855731\tnet/http.(*persistConn).readLoop+0x171\t\tnet/http/transport.go:2330\n" +
		"\n" +
		"8 @ 0x48e10e 0x46a205 0x8570e6 0x495a81\n" +
		"#\t0x8570e5\tnet/http.(*persistConn).writeLoop+0xe5\tnet/http/transport.go:2652\n" +
		"\n" +
		"1 @ 0x48e10e 0x46a205 0x855732 0x495a81\n" +
		"#\t0x855731\tnet/http.(*persistConn).readLoop+0x171\t\tnet/http/transport.go:2330\n"
	if got := goroutinesIn(profile, "net/http.(*persistConn).readLoop"); got != 9 {
		t.Errorf("read loops = %d, want 9", got)
	}
}
