package tfprovider

import (
	"strings"
	"testing"
)

func TestCheckCIDR(t *testing.T) {
	ok := []string{"10.0.0.0/8", "192.0.2.0/24", "0.0.0.0/0", "2001:db8::/32", "fd00:10::/48", "::/0", "10.0.0.1/32"}
	for _, s := range ok {
		if err := checkCIDR(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	bad := map[string]string{
		"10.0.0.1/8":         `did you mean "10.0.0.0/8"`,
		"2001:DB8::/32":      `write it as "2001:db8::/32"`,
		"2001:db8:0::/32":    `write it as "2001:db8::/32"`,
		"10.0.0.0":           "not a valid CIDR",
		"::ffff:1.2.3.0/120": "not a valid CIDR",
		"banana":             "not a valid CIDR",
		"":                   "not a valid CIDR",
	}
	for s, want := range bad {
		err := checkCIDR(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", s, err, want)
		}
	}
}

func TestCheckEndpoint(t *testing.T) {
	for _, s := range []string{"http://127.0.0.1:8440", "https://api.example.com", "http://h/base/"} {
		if err := checkEndpoint(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"127.0.0.1:8440", "ftp://h", "http://", "http://h?x=1", "http://h#f", "://"} {
		if err := checkEndpoint(s); err == nil {
			t.Errorf("%s accepted", s)
		}
	}
}

func TestCheckIDPrefix(t *testing.T) {
	if checkIDPrefix("lb-1", "lb-") != nil || checkIDPrefix("lb-", "lb-") == nil || checkIDPrefix("rt-1", "lb-") == nil {
		t.Fatal("checkIDPrefix")
	}
}
