package simulator

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestPoolRanges(t *testing.T) {
	for _, tc := range []struct {
		prefix, first, last string
	}{
		{"203.0.113.0/24", "203.0.113.1", "203.0.113.254"},
		{"10.255.0.0/16", "10.255.0.1", "10.255.255.254"},
		{"2001:db8:1b::/64", "2001:db8:1b::1", "2001:db8:1b:0:ffff:ffff:ffff:ffff"},
		{"10.0.0.0/29", "10.0.0.1", "10.0.0.6"},
	} {
		p := prefixPool("p", netip.MustParsePrefix(tc.prefix))
		if p.first.String() != tc.first || p.last.String() != tc.last {
			t.Errorf("%s: range %s-%s, want %s-%s", tc.prefix, p.first, p.last, tc.first, tc.last)
		}
	}
	if p := prefixPool("p", lbPublicPrefix).limit(3); p.last.String() != "203.0.113.3" {
		t.Errorf("limited pool ends at %s", p.last)
	}
}

func TestAllocateFillsGapsAndExhausts(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := prefixPool("p", netip.MustParsePrefix("10.0.0.0/29")) // .1-.6
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketPools); err != nil {
			return err
		}
		if _, err := reserve(tx, p, netip.MustParseAddr("10.0.0.2"), "x"); err != nil {
			return err
		}
		var got []string
		for range 5 {
			a, err := allocate(tx, p, "o")
			if err != nil {
				return err
			}
			got = append(got, a.String())
		}
		if want := "[10.0.0.1 10.0.0.3 10.0.0.4 10.0.0.5 10.0.0.6]"; fmt.Sprint(got) != want {
			t.Errorf("allocated %v, want %s", got, want)
		}
		if _, err := allocate(tx, p, "o"); err == nil {
			t.Error("allocated from a full pool")
		}
		if err := release(tx, []allocation{{Pool: "p", Addr: "10.0.0.4"}}); err != nil {
			return err
		}
		a, err := allocate(tx, p, "o")
		if err != nil || a.String() != "10.0.0.4" {
			t.Errorf("after release got %v, %v", a, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
