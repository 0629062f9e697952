package gateway

import (
	"strings"
	"testing"
)

// A long rule name keeps its start and a hash of it all, byte for byte
// what it was before objectref.HashedName computed it (f180f11's): the
// cloud keys its rules by name.
func TestShortenUnchanged(t *testing.T) {
	got := shorten("shop/web/0.0:80@" + strings.Repeat("a", 130))
	want := "shop/web/0.0:80@" + strings.Repeat("a", 95) + "#ae5707bf416d1ad7"
	if got != want || len(got) != 128 {
		t.Errorf("shorten = %s, was %s", got, want)
	}
	if short := "shop/web/0.0:80@a.example"; shorten(short) != short {
		t.Errorf("shorten changed a short name: %s", shorten(short))
	}
}
