package ccm

import (
	"context"
	"fmt"
	"time"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// newEngine wires the renderer, state backends and terraform runner from
// the cloud config. The API token reaches terraform's provider through
// the environment only (EXAMPLE_TOKEN), never a rendered file.
func newEngine(ctx context.Context, cfg *Config, rv *review) (*engine.Engine, error) {
	token, err := readToken(cfg.API.TokenFile, cfg.API.TokenEnv)
	if err != nil {
		return nil, fmt.Errorf("api token: %w", err)
	}
	if rv.audit != nil {
		rv.audit.Redact(token)
	}
	states, err := state.New(cfg.State, state.Options{})
	if err != nil {
		return nil, err
	}
	tf := cfg.Terraform
	r, err := runner.New(ctx, runner.Config{
		Terraform:      runner.BinaryConfig{Path: tf.Binary, Version: tf.Version, InstallDir: tf.InstallDir},
		WorkDir:        tf.WorkDir,
		CLIConfigFile:  tf.CLIConfig,
		LockFile:       tf.LockFile,
		PluginCacheDir: tf.PluginCacheDir,
		Concurrency:    tf.Concurrency,
		LockTimeout:    tf.LockTimeout.Duration,
		StaleLockAge:   tf.StaleLockAge.Duration,
		KeepPlanText:   tf.KeepPlanText,
		Observe:        observeTerraform,
		Env:            map[string]string{"EXAMPLE_TOKEN": token},
	})
	if err != nil {
		return nil, fmt.Errorf("terraform runner: %w", err)
	}
	r.OnForceUnlock = func(workspace, lockID, holder string, created time.Time) {
		rv.forceUnlocked(subject{ref: records.ObjectRef{Kind: "Workspace", Name: workspace}}, workspace, lockID,
			fmt.Sprintf("stale: held by %q since %s", holder, created.Format(time.RFC3339)))
	}
	e := engine.New(renderConfig(cfg), states, r)
	e.RecordPlanText(true) // plan records carry terraform's own rendering
	return e, nil
}

// renderConfig is the rendering part of the cloud config.
func renderConfig(cfg *Config) renderer.Config {
	return renderer.Config{
		ClusterID:               cfg.ClusterID,
		Region:                  cfg.Region,
		Endpoint:                cfg.API.Endpoint,
		LoadBalancerModule:      cfg.Modules.LoadBalancer,
		RoutesModule:            cfg.Modules.Routes,
		NetworkID:               cfg.Network.ID,
		NetworkName:             cfg.Network.Name,
		DefaultLoadBalancerType: cfg.LoadBalancer.DefaultType,
		DefaultAlgorithm:        cfg.LoadBalancer.DefaultAlgorithm,
	}
}
