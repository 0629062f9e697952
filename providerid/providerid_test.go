package providerid

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]ID{
		"example://eu-central-1/i-0123abcd": {"eu-central-1", "i-0123abcd"},
		"example://r1/i-A":                  {"r1", "i-A"},
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("round trip %q -> %q", in, got.String())
		}
	}
	bad := []string{
		"", "aws:///us-east-1a/i-1", "example://", "example://r1", "example://r1/",
		"example:///i-1", "example://R1/i-1", "example://r1/i-", "example://r1/x-1",
		"example://r1/i-1/extra", "example://r1/i-1\n", "example://r 1/i-1",
	}
	for _, in := range bad {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
	if _, err := Parse("gce://p/z/i"); !errors.Is(err, ErrNotExample) {
		t.Errorf("foreign providerID: err = %v, want ErrNotExample", err)
	}
	if _, err := Parse("example://r1/x"); errors.Is(err, ErrNotExample) {
		t.Errorf("broken Example providerID must not be ErrNotExample")
	}
}
