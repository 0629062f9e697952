package ccm

import (
	"context"
	"fmt"
	"time"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// newEngine wires the renderer, state backends and terraform runner from
// the cloud config. The API token reaches terraform's provider through
// the environment only (EXAMPLE_TOKEN), never a rendered file.
func newEngine(ctx context.Context, cfg *cloudconfig.Config, rv *review) (*engine.Engine, *exampleapi.Client, error) {
	token, err := cloudconfig.ReadToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	if err != nil {
		return nil, nil, fmt.Errorf("api token: %w", err)
	}
	rv.redact(token)
	states, err := state.New(cfg.State, state.Options{})
	if err != nil {
		return nil, nil, err
	}
	rv.credentials = states.Credentials
	rv.redactCredentials()
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
	})
	if err != nil {
		return nil, nil, fmt.Errorf("terraform runner: %w", err)
	}
	r.OnForceUnlock = func(workspace, lockID, holder string, created time.Time) {
		rv.forceUnlocked(subject{ref: objectref.Workspace(workspace)}, workspace, lockID, rv.self,
			fmt.Sprintf("stale: held by %q since %s", holder, created.Format(time.RFC3339)))
	}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: cfg.API.Endpoint, Token: token})
	if err != nil {
		return nil, nil, fmt.Errorf("api client: %w", err)
	}
	// Plan records carry terraform's own rendering of every plan.
	e := engine.New(cfg.Render(), states, r, engine.Options{Rules: cfg.Rules(), Plans: rv, PlanText: true,
		Migrated: rv.moveRecord, FindOrphan: orphanFinder(api, cfg), TLS: (&tlsSecrets{cfg: cfg, review: rv}).read})
	return e, api, nil
}
