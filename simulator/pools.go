package simulator

import (
	"bytes"
	"fmt"
	"net/netip"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Address pools of the Example cloud. Each pool is a sub-bucket of
// bucketPools whose keys are the 16-byte form of the allocated addresses, so
// a cursor walks them in numeric order and the first gap is the lowest free
// address. Allocation happens inside the write transaction of the object
// that owns the address.
var (
	lbPublicPrefix       = netip.MustParsePrefix("203.0.113.0/24")
	lbInternalPrefix     = netip.MustParsePrefix("10.255.0.0/16")
	lbIPv6Prefix         = netip.MustParsePrefix("2001:db8:1b::/64")
	instancePublicPrefix = netip.MustParsePrefix("198.51.100.0/24")
	defaultPrivatePrefix = netip.MustParsePrefix("10.0.0.0/16")
)

// publicPool is the public pool of a family (exampleapi.AddressFamilies)
// that load balancers and reserved addresses share.
func (c *cloud) publicPool(family string) pool {
	if family == exampleapi.AddressFamilyIPv6 {
		return prefixPool("lb-v6", lbIPv6Prefix)
	}
	return prefixPool("lb-public-v4", c.lbPublicPrefix).limit(c.lbPublicPoolSize)
}

// pool is an inclusive range of allocatable addresses.
type pool struct {
	name        string
	prefix      netip.Prefix
	first, last netip.Addr
}

// allocation records which pool an owner's address came from, so deleting
// the owner can give it back.
type allocation struct {
	Pool string `json:"pool"`
	Addr string `json:"addr"`
}

// prefixPool is the usable range of p: without the network address and,
// for IPv4, without the broadcast address.
func prefixPool(name string, p netip.Prefix) pool {
	p = p.Masked()
	last := lastAddr(p)
	if p.Addr().Is4() {
		last = last.Prev()
	}
	return pool{name: name, prefix: p, first: p.Addr().Next(), last: last}
}

// limit shrinks the pool to at most n addresses (n <= 0 leaves it alone).
func (p pool) limit(n int) pool {
	if n <= 0 {
		return p
	}
	last := p.first
	for i := 1; i < n && last.Less(p.last); i++ {
		last = last.Next()
	}
	p.last = last
	return p
}

func (p pool) contains(a netip.Addr) bool {
	return a.Is4() == p.first.Is4() && p.first.Compare(a) <= 0 && a.Compare(p.last) <= 0
}

func (p pool) String() string {
	return fmt.Sprintf("%s (%s)", p.name, p.prefix)
}

// lastAddr is the highest address of p (all host bits set).
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := bits; i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a := netip.AddrFrom16(b)
	if p.Addr().Is4() {
		a = a.Unmap()
	}
	return a
}

func addrKey(a netip.Addr) []byte {
	b := a.As16()
	return b[:]
}

func poolBucket(tx *bolt.Tx, name string) (*bolt.Bucket, error) {
	b, err := tx.Bucket(bucketPools).CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("opening pool %s: %w", name, err)
	}
	return b, nil
}

// errPoolExhausted is returned by allocate when no address is free.
type errPoolExhausted struct{ pool pool }

func (e errPoolExhausted) Error() string {
	return "no free address in pool " + e.pool.String()
}

// allocate takes the lowest free address of p for owner.
func allocate(tx *bolt.Tx, p pool, owner string) (netip.Addr, error) {
	b, err := poolBucket(tx, p.name)
	if err != nil {
		return netip.Addr{}, err
	}
	cand := p.first
	c := b.Cursor()
	for k, _ := c.Seek(addrKey(cand)); k != nil && bytes.Equal(k, addrKey(cand)); k, _ = c.Next() {
		if cand == p.last {
			return netip.Addr{}, errPoolExhausted{p}
		}
		cand = cand.Next()
	}
	if !p.contains(cand) {
		return netip.Addr{}, errPoolExhausted{p}
	}
	if err := b.Put(addrKey(cand), []byte(owner)); err != nil {
		return netip.Addr{}, fmt.Errorf("allocating from pool %s: %w", p.name, err)
	}
	return cand, nil
}

// reserve marks a caller-chosen address as used. Addresses outside the
// pool's range are not tracked; an address already in use is a conflict.
func reserve(tx *bolt.Tx, p pool, a netip.Addr, owner string) (bool, error) {
	if !p.contains(a) {
		return false, nil
	}
	b, err := poolBucket(tx, p.name)
	if err != nil {
		return false, err
	}
	if used := b.Get(addrKey(a)); used != nil {
		return false, conflict("address %s is already in use by %s", a, used)
	}
	if err := b.Put(addrKey(a), []byte(owner)); err != nil {
		return false, fmt.Errorf("reserving %s in pool %s: %w", a, p.name, err)
	}
	return true, nil
}

// release gives back the addresses of allocs. A pool that no longer exists
// (its network was deleted) is skipped.
func release(tx *bolt.Tx, allocs []allocation) error {
	for _, al := range allocs {
		b := tx.Bucket(bucketPools).Bucket([]byte(al.Pool))
		if b == nil {
			continue
		}
		a, err := netip.ParseAddr(al.Addr)
		if err != nil {
			return fmt.Errorf("releasing %q from pool %s: %w", al.Addr, al.Pool, err)
		}
		if err := b.Delete(addrKey(a)); err != nil {
			return fmt.Errorf("releasing %s from pool %s: %w", a, al.Pool, err)
		}
	}
	return nil
}
