package engine

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// MigrateState moves o's state from its legacy key (state.LegacyKey, the
// scheme before 64-bit letter suffixes) to the key of to, o's job as
// engine.job builds it. Call it before the first run of each object in a
// process, and do not run to while it fails: its error is retried like a
// run's (a lock in the way, a backend down); runner.ErrStateConflict
// needs a person.
//
// It costs no terraform process when there is no legacy state: the
// backend answers cheaply (state.Location.Exists). A found state is moved
// with terraform by runner.MoveState (crash-safe, idempotent; see
// docs/state.md, "Migration"). moved reports whether a state was moved.
func (e *Engine) MigrateState(ctx context.Context, o state.Object, to runner.Job) (moved bool, err error) {
	legacy, err := e.states.LegacyLocation(o)
	if err != nil {
		return false, fmt.Errorf("migrate state of %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	if legacy.Key == to.Key {
		return false, nil
	}
	if legacy.Exists != nil {
		ok, err := legacy.Exists(ctx)
		if err != nil {
			return false, fmt.Errorf("migrate state of %s %s/%s: look for legacy state %s: %w", o.Kind, o.Namespace, o.Name, legacy.Key, err)
		}
		if !ok {
			return false, nil
		}
	}
	moved, err = e.runner.MoveState(ctx, legacyJob(legacy), to)
	if err != nil {
		return false, fmt.Errorf("migrate state of %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return moved, nil
}

// legacyJob is the job of a legacy state location, as job() builds one,
// with a root module holding only its backend block: that is all
// runner.MoveState reads, and no object is needed to render it.
func legacyJob(tg *state.Location) runner.Job {
	b := BackendBlock(tg.Block)
	f := hclwrite.NewEmptyFile()
	body := f.Body().AppendNewBlock("terraform", nil).Body().AppendNewBlock("backend", []string{b.Type}).Body()
	for _, a := range b.Attrs {
		body.SetAttributeValue(a.Name, a.Value)
	}
	return runner.Job{
		Key:          tg.Key,
		Files:        map[string][]byte{renderer.MainFile: hclwrite.Format(f.Bytes())},
		Env:          tg.Env,
		CLIWorkspace: tg.CLIWorkspace,
		DeleteState:  tg.Delete,
		Unlock:       tg.Unlock,
	}
}
