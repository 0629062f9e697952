package ccm

import (
	"context"
	"fmt"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// newEngine opens the engine of the cloud config, with board as its plan
// store, its reporter of stale locks forced open and its redactor of
// credentials, and tls as its reader of TLS Secrets.
//
// With terraform.encryption, the engine refuses to run terraform until
// keys reads them from their Secrets (it has a client only once
// initialised).
func newEngine(ctx context.Context, cfg *cloudconfig.Config, board *review.Board, tls *tlsSecrets, owns func(objectref.Ref) bool) (*engine.Engine, *exampleapi.Client, *encryptionKeys, error) {
	token, err := cloudconfig.ReadToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api token: %w", err)
	}
	board.Redact(token)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: cfg.API.Endpoint, Token: token})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api client: %w", err)
	}
	// Plan records carry terraform's own rendering of every plan.
	e, err := engine.Open(ctx, cfg,
		engine.Wiring{Token: token, Observe: observeTerraform, OnForceUnlock: board.StaleLockForced, Credentials: board.RedactCredentials},
		engine.Options{Plans: board, PlanText: true, Migrated: board.MoveRecord, FindOrphan: orphanFinder(api, cfg),
			FindCertificates: unusedCertificates(api, cfg), PoolUsers: poolUsers(api, cfg), TLS: tls.read, Owns: owns})
	if err != nil {
		return nil, nil, nil, err
	}
	var keys *encryptionKeys
	if cfg.Terraform.Encryption != nil {
		keys = &encryptionKeys{cfg: cfg.Terraform.Encryption, engine: e, redact: board.RedactFrom}
	}
	return e, api, keys, nil
}
