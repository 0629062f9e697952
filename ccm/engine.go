package ccm

import (
	"context"
	"fmt"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// newEngine wires the renderer, state backends and terraform runner from
// the cloud config, with board as its plan store and its reporter of
// stale locks forced open, and tls as its reader of TLS Secrets. The API token reaches terraform's provider through
// the environment only (EXAMPLE_TOKEN), never a rendered file.
//
// With terraform.encryption, the runner refuses to run until keys reads
// them from their Secrets (it has a client only once initialised).
func newEngine(ctx context.Context, cfg *cloudconfig.Config, board *review.Board, tls *tlsSecrets) (*engine.Engine, *exampleapi.Client, *encryptionKeys, error) {
	token, err := cloudconfig.ReadToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api token: %w", err)
	}
	board.Redact(token)
	states, err := state.New(cfg.State, state.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	board.RedactCredentials(states.Credentials)
	tf := cfg.Terraform
	r, err := runner.New(ctx, runner.Config{
		Terraform:      runner.BinaryConfig{Distribution: runner.Distribution(tf.Distribution), Path: tf.Binary, Version: tf.Version, InstallDir: tf.InstallDir},
		WorkDir:        tf.WorkDir,
		CLIConfigFile:  tf.CLIConfig,
		LockFile:       tf.LockFile,
		PluginCacheDir: tf.PluginCacheDir,
		Concurrency:    tf.Concurrency,
		LockTimeout:    tf.LockTimeout.Duration,
		StaleLockAge:   tf.StaleLockAge.Duration,
		KeepPlanText:   tf.KeepPlanText,
		Provider:       runner.ProviderMode(tf.Provider),
		Observe:        observeTerraform,
		Env:            map[string]string{"EXAMPLE_TOKEN": token},
		// The keys are read from Secrets once there is a client.
		EncryptionLater: tf.Encryption != nil,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("terraform runner: %w", err)
	}
	var keys *encryptionKeys
	if tf.Encryption != nil {
		keys = &encryptionKeys{cfg: tf.Encryption, runner: r, redact: board.RedactFrom}
	}
	r.OnForceUnlock = board.StaleLockForced
	api, err := exampleapi.New(exampleapi.Options{Endpoint: cfg.API.Endpoint, Token: token})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("api client: %w", err)
	}
	// Plan records carry terraform's own rendering of every plan.
	e := engine.New(cfg.Render(), states, r, engine.Options{Rules: cfg.Rules(), Plans: board, PlanText: true,
		Migrated: board.MoveRecord, FindOrphan: orphanFinder(api, cfg),
		FindCertificates: unusedCertificates(api, cfg), TLS: tls.read})
	return e, api, keys, nil
}
