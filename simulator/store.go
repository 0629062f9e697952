package simulator

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Bucket names. Values are JSON; object buckets are keyed by id, so a cursor
// walks them in id order, which is the order lists are paginated in.
var (
	bucketRegions      = []byte("regions")
	bucketInstances    = []byte("instances")
	bucketNetworks     = []byte("networks")
	bucketRoutes       = []byte("routes")
	bucketLBs          = []byte("load_balancers")
	bucketTargetPools  = []byte("target_pools")
	bucketCertificates = []byte("certificates") // see certificates.go: holds private keys
	bucketAddresses    = []byte("addresses")    // reserved addresses, see addresses.go
	bucketNames        = []byte("names")        // uniqueness index, see nameKey
	bucketPools        = []byte("pools")        // one sub-bucket per address pool (not target pools)
	bucketIdempotency  = []byte("idempotency")  // see idempotency.go
	bucketRuleSets     = []byte("rule_sets")    // by load balancer id and name, see rulesets.go

	allBuckets = [][]byte{bucketRegions, bucketInstances, bucketNetworks, bucketRoutes,
		bucketLBs, bucketTargetPools, bucketCertificates, bucketAddresses, bucketNames, bucketPools, bucketIdempotency, bucketRuleSets}
)

// dbFileName is the bbolt file inside the data directory.
const dbFileName = "example-cloud.db"

// openDB opens (creating if needed) the database in dataDir. bbolt fsyncs
// every Update transaction, so a write is durable once Update returns.
func openDB(dataDir string) (*bolt.DB, error) {
	if dataDir == "" {
		return nil, errors.New("data directory is required")
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil { //nolint:gosec // the simulator's data directory
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	path := filepath.Join(dataDir, dbFileName)
	// The timeout turns "another simulator holds the lock" into an error
	// instead of a hang.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("opening %s: locked by another process (is a simulator already running on this data dir?)", path)
		}
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("creating bucket %s: %w", b, err)
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// getJSON decodes the value at key into v; it reports whether the key exists.
func getJSON(b *bolt.Bucket, key string, v any) (bool, error) {
	raw := b.Get([]byte(key))
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decoding %q: %w", key, err)
	}
	return true, nil
}

func putJSON(b *bolt.Bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %q: %w", key, err)
	}
	if err := b.Put([]byte(key), raw); err != nil {
		return fmt.Errorf("storing %q: %w", key, err)
	}
	return nil
}

// scanFrom calls fn for each key strictly after `after` ("" = from the
// start), in key order, until fn returns false or an error.
func scanFrom(b *bolt.Bucket, after string, fn func(k, v []byte) (bool, error)) error {
	c := b.Cursor()
	var k, v []byte
	if after == "" {
		k, v = c.First()
	} else {
		k, v = c.Seek([]byte(after))
		if k != nil && bytes.Equal(k, []byte(after)) {
			k, v = c.Next()
		}
	}
	for ; k != nil; k, v = c.Next() {
		more, err := fn(k, v)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// newID returns prefix followed by 16 random hex characters.
func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + hex.EncodeToString(b[:])
}

// Uniqueness index: nameKey(kind, scope, name) -> id in bucketNames. It is
// read and written inside the same write transaction as the object, so two
// concurrent creates cannot both claim a name (bbolt has a single writer).
func nameKey(kind, scope, name string) []byte {
	return []byte(kind + "\x00" + scope + "\x00" + name)
}

func lookupName(tx *bolt.Tx, kind, scope, name string) string {
	return string(tx.Bucket(bucketNames).Get(nameKey(kind, scope, name)))
}

// requireNewName checks a create's region, and that the region has no
// kind named name yet (what names one in the conflict: "a network").
func requireNewName(tx *bolt.Tx, kind, what, region, name string) error {
	if err := requireRegion(tx, "region", region); err != nil {
		return err
	}
	return requireFreeName(tx, kind, what, region, name)
}

// requireFreeName is a conflict when region already has a kind named name.
func requireFreeName(tx *bolt.Tx, kind, what, region, name string) error {
	if id := lookupName(tx, kind, region, name); id != "" {
		return conflict("%s named %q already exists in region %s (%s)", what, name, region, id)
	}
	return nil
}

func putName(tx *bolt.Tx, kind, scope, name, id string) error {
	if err := tx.Bucket(bucketNames).Put(nameKey(kind, scope, name), []byte(id)); err != nil {
		return fmt.Errorf("indexing %s %q: %w", kind, name, err)
	}
	return nil
}

func deleteName(tx *bolt.Tx, kind, scope, name string) error {
	if err := tx.Bucket(bucketNames).Delete(nameKey(kind, scope, name)); err != nil {
		return fmt.Errorf("unindexing %s %q: %w", kind, name, err)
	}
	return nil
}

// hasNamesWithPrefix reports whether any index key of kind/scope exists.
func hasNamesWithPrefix(tx *bolt.Tx, kind, scope string) bool {
	prefix := []byte(kind + "\x00" + scope + "\x00")
	k, _ := tx.Bucket(bucketNames).Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}
