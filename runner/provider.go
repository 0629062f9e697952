package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/tfprovider"
)

// ProviderMode says where terraform gets the Example provider from.
type ProviderMode string

const (
	// ProviderAttached (the default) serves the provider inside this
	// process, one server per concurrency slot, and attaches terraform to
	// it (TF_REATTACH_PROVIDERS): no provider process per terraform
	// command, no provider installation, no lock file. The provider is
	// the one built into this binary.
	ProviderAttached ProviderMode = "attached"
	// ProviderSpawned lets terraform start the provider binary that init
	// installed from the CLI config's mirror, pinned by LockFile: for a
	// provider build other than the controller's own.
	ProviderSpawned ProviderMode = "spawned"
)

// slot is one concurrency slot. Every terraform process runs in the slot
// its operation holds, attached to the slot's provider server: terraform
// configures the provider once per process, so two processes that may run
// at once must not share a server.
type slot struct {
	idx int
	srv *tfprovider.InProcess // started on first use; replaced when unusable
	// env is the environment of the terraform process the slot runs: the
	// provider's environment fallbacks (EXAMPLE_TOKEN, ...) read it, as a
	// spawned provider reads the environment terraform gives it.
	env atomic.Pointer[map[string]string]
}

func (s *slot) getenv(k string) string {
	if m := s.env.Load(); m != nil {
		return (*m)[k]
	}
	return ""
}

func (s *slot) setEnv(env map[string]string) { s.env.Store(&env) }

// idle ends the slot's operation: its terraform processes have exited,
// and the provider server lets go of their requests (see
// tfprovider.InProcess.Idle). Without it the controller's memory grows
// with every terraform command it runs.
func (s *slot) idle() {
	if s.srv != nil {
		s.srv.Idle()
	}
}

// memoSize and memoTTL bound the attached provider's memory of answers:
// a few workspaces' plans at once (an answer is about the size of the
// resource's state), each until its apply, which follows at once unless
// the plan is held for review, and then plans afresh.
const (
	memoSize = 32
	memoTTL  = 2 * time.Minute
)

// noReattach leaves terraform to start its providers (spawned mode).
var noReattach = tfexec.Reattach(nil)

// attach readies the slot for a terraform process: in attached mode it
// starts the slot's provider server, or a new one if the last stopped or
// panicked, and returns the option that attaches terraform commands to it.
func (r *Runner) attach(s *slot) (*tfexec.ReattachOption, error) {
	if r.cfg.Provider == ProviderSpawned {
		return noReattach, nil
	}
	if s.srv != nil && !s.srv.Usable() {
		klog.InfoS("replacing the in-process provider server", "slot", s.idx)
		s.srv.Close()
		s.srv = nil
	}
	if s.srv == nil {
		srv, err := tfprovider.ServeInProcess(tfprovider.InProcessOptions{
			Name:   fmt.Sprintf("slot-%d", s.idx),
			Getenv: s.getenv,
			Memo:   r.memo,
			OnPanic: func(rpc string, v any, stack []byte) {
				klog.ErrorS(nil, "the in-process Example provider panicked; the terraform command fails and the server is replaced",
					"slot", s.idx, "rpc", rpc, "panic", known.String(fmt.Sprint(v)), "stack", string(stack))
			},
		})
		if err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
		s.srv = srv
	}
	addr := s.srv.Addr()
	return tfexec.Reattach(tfexec.ReattachInfo{tfprovider.Address: {
		Protocol: "grpc", ProtocolVersion: 6, Pid: s.srv.Pid(),
		// Test: terraform neither checks the plugin handshake nor stops
		// the server when it exits (go-plugin leaves a test server alone).
		Test: true,
		Addr: tfexec.ReattachConfigAddr{Network: addr.Network(), String: addr.String()},
	}}), nil
}

// Close stops the in-process provider servers, waiting for the
// operations running to finish. A later operation starts its slot's
// server again.
func (r *Runner) Close() {
	held := make([]*slot, 0, r.slots.size)
	for range r.slots.size {
		s, _ := r.slots.get(context.Background(), ClusterShare) // no error: never cancelled
		if s.srv != nil {
			s.srv.Close()
			s.srv = nil
		}
		held = append(held, s)
	}
	for _, s := range held {
		r.slots.put(s)
	}
}

// workspaceLock is the lock file a workspace gets: none in attached mode,
// where terraform installs nothing and checks no checksum for an attached
// provider (and a lock entry would make the commands terraform-exec
// cannot attach, output, state push and force-unlock, demand an installed
// provider).
func (r *Runner) workspaceLock() []byte {
	if r.cfg.Provider == ProviderSpawned {
		return r.lockFile
	}
	return nil
}

// checkProviderConfigs refuses, in attached mode, a root module with more
// than one configuration of the Example provider: terraform would
// configure both on the slot's one server at once.
func (r *Runner) checkProviderConfigs(key string, files map[string][]byte) error {
	if r.cfg.Provider == ProviderSpawned {
		return nil
	}
	n := 0
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".tf") {
			continue
		}
		f, diags := hclsyntax.ParseConfig(files[name], name, hcl.InitialPos)
		if diags.HasErrors() {
			continue // terraform reports it, with its position
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			if b.Type == "provider" && len(b.Labels) == 1 && b.Labels[0] == "example" {
				n++
			}
		}
	}
	if n > 1 {
		return fmt.Errorf("workspace %s: %d provider \"example\" configurations: the attached provider serves one per terraform command; use provider mode %q",
			key, n, ProviderSpawned)
	}
	return nil
}

// removeLockFile drops a lock file left by spawned mode.
func removeLockFile(dir string) error {
	if err := os.Remove(dir + "/.terraform.lock.hcl"); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
