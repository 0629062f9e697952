package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lib/pq"

	"github.com/example/cloud-provider-example/redact"
)

// pgDefaultSchema is where terraform's pg backend keeps states when
// schema_name is not set.
const pgDefaultSchema = "terraform_remote_state"

// pgPool is one connection pool for existence checks, opened on first use
// and reopened when the connection string changes (a rotated Secret). It
// uses lib/pq, the driver terraform's pg backend uses, so a connection
// string means the same to both.
type pgPool struct {
	mu   sync.Mutex
	conn string
	db   *sql.DB
}

func (p *pgPool) get(conn string) (*sql.DB, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db != nil && p.conn == conn {
		return p.db, nil
	}
	if p.db != nil {
		p.db.Close()
		p.db = nil
	}
	db, err := sql.Open("postgres", conn)
	if err != nil {
		return nil, err
	}
	// A check or two at start-up, then nothing: keep no idle connection.
	db.SetMaxOpenConns(2)
	db.SetConnMaxIdleTime(30 * time.Second)
	p.conn, p.db = conn, db
	return db, nil
}

// exists reports whether workspace has a state row in the backend's table
// (terraform's pg backend: <schema>.states, one row per workspace name).
// A missing schema or table means no state at all.
func (p *pgPool) exists(ctx context.Context, conn, schema, workspace string) (bool, error) {
	if schema == "" {
		schema = pgDefaultSchema
	}
	ok, err := p.query(ctx, conn, schema, workspace)
	if err != nil {
		// The driver may quote parts of the connection string (a parse
		// error): scrub it like terraform's output.
		return false, fmt.Errorf("look up pg workspace %s in schema %s: %s", workspace, schema, redact.New(conn).String(err.Error()))
	}
	return ok, nil
}

func (p *pgPool) query(ctx context.Context, conn, schema, workspace string) (bool, error) {
	db, err := p.get(conn)
	if err != nil {
		return false, err
	}
	var n int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM "+pq.QuoteIdentifier(schema)+".states WHERE name = $1", workspace).Scan(&n)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && (pqErr.Code == "42P01" || pqErr.Code == "3F000") { // undefined_table, invalid_schema_name
		return false, nil
	}
	return n > 0, err
}
