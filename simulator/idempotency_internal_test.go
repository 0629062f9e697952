package simulator

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestIdempotencyRecordsExpire(t *testing.T) {
	db, err := openDB(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	err = db.Update(func(tx *bolt.Tx) error {
		if err := putIdempotency(tx, "scope", idempotencyRecord{Status: 201, Body: []byte(`{}`), CreatedAt: created}); err != nil {
			return err
		}
		if _, ok, err := lookupIdempotency(tx, "scope", created.Add(23*time.Hour)); err != nil || !ok {
			t.Errorf("record gone before 24h: %v %v", ok, err)
		}
		if _, ok, err := lookupIdempotency(tx, "scope", created.Add(25*time.Hour)); err != nil || ok {
			t.Errorf("record alive after 24h: %v %v", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
