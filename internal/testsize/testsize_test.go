package testsize

import "testing"

// make bench, make soak and make chaos set full, make soak-long long;
// both run the scale tests at full size, make test's unset does not.
func TestAtFull(t *testing.T) {
	for scale, want := range map[string]bool{"": false, Full: true, Long: true, "fast": false} {
		t.Setenv(Env, scale)
		if AtFull() != want || Scale() != scale {
			t.Errorf("%s=%q: AtFull %v, Scale %q", Env, scale, AtFull(), Scale())
		}
	}
}
