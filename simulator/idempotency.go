package simulator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Idempotent creates: the answer to a POST carrying an Idempotency-Key is
// recorded in the same transaction as the object it created, so a retry of
// a create whose answer was lost gets that answer again instead of a second
// object (or a 409). Records expire after idempotencyTTL; expiry is lazy.

const (
	idempotencyTTL    = 24 * time.Hour
	maxIdempotencyKey = 255
)

// idempotencyRecord is a recorded answer.
type idempotencyRecord struct {
	Status   int             `json:"status"`
	Body     json.RawMessage `json:"body"`
	ETag     string          `json:"etag,omitempty"`
	Location string          `json:"location,omitempty"`
	// RequestHash detects a key reused for a different request.
	RequestHash string    `json:"request_hash"`
	CreatedAt   time.Time `json:"created_at"`
}

// idempotencyScope scopes a key to the caller's token and the request path,
// so different clients or endpoints cannot collide.
func idempotencyScope(tokenID, path, key string) string {
	return tokenID + " " + path + " " + key
}

func requestHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// lookupIdempotency returns the live record of scope, if any.
func lookupIdempotency(tx *bolt.Tx, scope string, now time.Time) (idempotencyRecord, bool, error) {
	var rec idempotencyRecord
	ok, err := getJSON(tx.Bucket(bucketIdempotency), scope, &rec)
	if err != nil || !ok || now.Sub(rec.CreatedAt) > idempotencyTTL {
		return idempotencyRecord{}, false, err
	}
	return rec, true, nil
}

func putIdempotency(tx *bolt.Tx, scope string, rec idempotencyRecord) error {
	return putJSON(tx.Bucket(bucketIdempotency), scope, rec)
}
