package engine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/servicemodel"
	"github.com/example/cloud-provider-example/state"
)

// Wiring is what the controller hands the engine it opens beyond the
// cloud config: the API token and its hooks.
type Wiring struct {
	// Token is the Example API token. It reaches terraform's provider
	// through the environment only (EXAMPLE_TOKEN), never a rendered file.
	Token string
	// Observe hears of every terraform operation and how long it took.
	Observe func(op string, err error, d time.Duration)
	// ObserveRemembered hears of each request the attached provider could
	// answer from memory, and whether it did (runner.Config).
	ObserveRemembered func(rpc string, remembered bool)
	// OnForceUnlock hears of every stale state lock forced open.
	OnForceUnlock func(workspace, lockID, holder string, created time.Time)
	// Credentials hears of how to read the state backend's credentials,
	// so they can be kept out of what people read.
	Credentials func(read func() []string)
}

// Open builds the engine a controller runs from its cloud config: the
// state backends and the terraform runner. With terraform.encryption the
// runner refuses to run until SetEncryption gives it the keys (they live
// in Secrets, read once there is a client).
func Open(ctx context.Context, cfg *cloudconfig.Config, w Wiring, o Options) (*Engine, error) {
	states, err := state.New(cfg.State, state.Options{})
	if err != nil {
		return nil, err
	}
	if w.Credentials != nil {
		w.Credentials(states.Credentials)
	}
	tf := cfg.Terraform
	env := map[string]string{}
	if w.Token != "" {
		env["EXAMPLE_TOKEN"] = w.Token
	}
	gcLimit, err := tf.ProcessMemoryLimitBytes()
	if err != nil {
		return nil, fmt.Errorf("terraform.processMemoryLimit: %w", err)
	}
	r, err := runner.New(ctx, runner.Config{
		Terraform:          runner.BinaryConfig{Distribution: runner.Distribution(tf.Distribution), Path: tf.Binary, Version: tf.Version, InstallDir: tf.InstallDir},
		WorkDir:            tf.WorkDir,
		CLIConfigFile:      tf.CLIConfig,
		LockFile:           tf.LockFile,
		PluginCacheDir:     tf.PluginCacheDir,
		Concurrency:        tf.Concurrency,
		LockTimeout:        tf.LockTimeout.Duration,
		StaleLockAge:       tf.StaleLockAge.Duration,
		KeepPlanText:       tf.KeepPlanText,
		Provider:           runner.ProviderMode(tf.Provider),
		Observe:            w.Observe,
		ObserveRemembered:  w.ObserveRemembered,
		Env:                env,
		EncryptionLater:    tf.Encryption != nil,
		ProcessMemoryLimit: gcLimit,
	})
	if err != nil {
		return nil, fmt.Errorf("terraform runner: %w", err)
	}
	r.OnForceUnlock = w.OnForceUnlock
	if o.Rules == nil {
		o.Rules = cfg.Rules()
	}
	return New(cfg.Render(), states, r, o), nil
}

// SetEncryption gives the runner OpenTofu's encryption keys.
func (e *Engine) SetEncryption(enc *Encryption) error { return e.runner.SetEncryption(enc) }

// ForceUnlock forces open the state lock lockID of job's workspace.
func (e *Engine) ForceUnlock(ctx context.Context, job Job, lockID string) error {
	return e.runner.ForceUnlock(ctx, job, lockID)
}

// Processes counts the terraform processes run, by operation.
func (e *Engine) Processes() map[string]int64 { return e.runner.Processes() }

// CheckService refuses a Service whose load balancer cannot be described
// (servicemodel.Check), naming the field at fault.
func (e *Engine) CheckService(in *annotations.Service) error {
	return servicemodel.Check(in, e.render.Service())
}

// LoadBalancerShape is what svc's load balancer would be: what decides a
// replacement, for previews.
func (e *Engine) LoadBalancerShape(in *annotations.Service) (Shape, error) {
	return servicemodel.LoadBalancerShape(in, e.render.Service())
}

// GroupPrimary is the member whose settings a group's load balancer takes.
func (e *Engine) GroupPrimary(g lbmodel.Group) *corev1.Service {
	return renderer.GroupPrimary(g, e.render)
}

// ReservedAddressName is the cloud name of the address reserved for svc
// (address-keep naming none): renderer.ReservedAddressName.
func (e *Engine) ReservedAddressName(svc *corev1.Service) string {
	return renderer.ReservedAddressName(svc, e.render.ClusterID)
}

// LoadBalancerName is svc's load balancer's cloud name
// (servicemodel.CloudName); a Service whose annotations do not parse has
// the generated one.
func (e *Engine) LoadBalancerName(in *annotations.Service) string {
	return servicemodel.CloudName(in.Service, in.LB, e.render.ClusterID)
}
