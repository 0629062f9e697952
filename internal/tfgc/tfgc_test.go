package tfgc

import (
	"maps"
	"testing"
)

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		limit int64
		want  map[string]string
	}{
		{0, map[string]string{"GOGC": "off", "GOMEMLIMIT": "536870912"}},
		{1 << 30, map[string]string{"GOGC": "off", "GOMEMLIMIT": "1073741824"}},
		{-1, nil},
	} {
		if got := Env(c.limit); !maps.Equal(got, c.want) {
			t.Errorf("Env(%d) = %v, want %v", c.limit, got, c.want)
		}
	}
}
