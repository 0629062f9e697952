package tfprovider

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/utils/lru"
)

// Memo answers again the requests terraform repeats byte for byte. Every
// change is two terraform processes, plan and apply, and the apply
// validates the configuration, upgrades the state and plans each
// resource again with exactly the plan's inputs, so that it can check the
// plan still holds. For a load balancer with many rules those three are
// most of the provider's work (terraform-plugin-framework walks every
// value of the resource several times per request, ADR 26); an
// in-process provider serves both processes, so it can answer the
// second asking from memory.
//
// Only requests whose answer is a function of the request are kept:
// ValidateResourceConfig and UpgradeResourceState, and PlanResourceChange
// under the same provider configuration (its region default is the
// configuration's). Terraform's own contract makes a provider's plan of
// the same inputs the same plan; an answer is kept for ttl, enough for
// the apply that follows its plan at once (a plan approved later is
// planned afresh at its apply). One Memo serves all of a process's servers: the
// plan and the apply of a workspace may run in different slots.
type Memo struct {
	cache   *lru.Cache
	ttl     time.Duration
	now     func() time.Time
	observe func(rpc string, remembered bool)
}

// NewMemo keeps at most size answers, each for ttl; observe, if set,
// hears of each request it could answer, and whether it did.
func NewMemo(size int, ttl time.Duration, observe func(rpc string, remembered bool)) *Memo {
	if observe == nil {
		observe = func(string, bool) {}
	}
	return &Memo{cache: lru.New(size), ttl: ttl, now: time.Now, observe: observe}
}

type memoEntry struct {
	answer  any
	expires time.Time
}

// memoKey is the hash of what decides the answer: the RPC, the scope
// (the provider configuration, where it matters) and the whole request.
type memoKey [sha256.Size]byte

func keyOf(rpc string, scope []byte, req any) (memoKey, bool) {
	data, err := json.Marshal(req)
	if err != nil {
		return memoKey{}, false
	}
	h := sha256.New()
	h.Write([]byte(rpc))
	h.Write([]byte{0})
	h.Write(scope)
	h.Write([]byte{0})
	h.Write(data)
	var k memoKey
	h.Sum(k[:0])
	return k, true
}

// recall answers req from memory by the key of asked (req, or what of it
// decides the answer) under scope, or by call; an answer without an
// error that keep accepts is kept.
func recall[Req, Resp any](m *Memo, rpc string, scope []byte, asked any, ctx context.Context, req *Req, call func(context.Context, *Req) (*Resp, error), keep func(*Resp) bool) (*Resp, error) {
	key, ok := keyOf(rpc, scope, asked)
	if !ok {
		return call(ctx, req)
	}
	if v, found := m.cache.Get(key); found {
		if e := v.(memoEntry); m.now().Before(e.expires) {
			m.observe(rpc, true)
			return e.answer.(*Resp), nil
		}
		m.cache.Remove(key)
	}
	m.observe(rpc, false)
	resp, err := call(ctx, req)
	if err == nil && resp != nil && keep(resp) {
		m.cache.Add(key, memoEntry{answer: resp, expires: m.now().Add(m.ttl)})
	}
	return resp, err
}

func always[Resp any](*Resp) bool { return true }

// memoized is a provider server whose repeated requests a Memo answers.
// One server serves one terraform process at a time (a runner slot), so
// the configuration it was last given is the one its plans are made
// under.
type memoized struct {
	tfprotov6.ProviderServer
	memo   *Memo
	getenv func(string) string
	// scope fingerprints the configuration: the provider block's values
	// and the environment fallbacks it reads. Nil until configured.
	scope atomic.Pointer[[]byte]
}

func (s *memoized) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	s.scope.Store(nil)
	resp, err := s.ProviderServer.ConfigureProvider(ctx, req)
	if err == nil && resp != nil && !hasError(resp.Diagnostics) {
		fp := configurationPrint(req, s.getenv)
		s.scope.Store(&fp)
	}
	return resp, err
}

func (s *memoized) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return recall(s.memo, "ValidateResourceConfig", nil, req, ctx, req, s.ProviderServer.ValidateResourceConfig, always)
}

func (s *memoized) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return recall(s.memo, "UpgradeResourceState", nil, req, ctx, req, s.ProviderServer.UpgradeResourceState, always)
}

// PlanResourceChange is keyed without the client's capabilities:
// terraform allows deferrals when it plans and not when it plans again
// at apply, and an answer that defers nothing is the same answer either
// way (one that defers is not kept).
func (s *memoized) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	scope := s.scope.Load()
	if scope == nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	asked := *req
	asked.ClientCapabilities = nil
	return recall(s.memo, "PlanResourceChange", *scope, &asked, ctx, req, s.ProviderServer.PlanResourceChange,
		func(r *tfprotov6.PlanResourceChangeResponse) bool {
			return r.Deferred == nil && !hasError(r.Diagnostics)
		})
}

// configurationPrint is a hash of a provider configuration: the provider
// block and the environment fallbacks of the fields it leaves unset.
func configurationPrint(req *tfprotov6.ConfigureProviderRequest, getenv func(string) string) []byte {
	h := sha256.New()
	if req.Config != nil {
		h.Write(req.Config.MsgPack)
		h.Write(req.Config.JSON)
	}
	for _, name := range []string{EnvEndpoint, EnvRegion, EnvToken} {
		h.Write([]byte{0})
		if getenv != nil {
			h.Write([]byte(getenv(name)))
		}
	}
	return h.Sum(nil)
}

func hasError(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d != nil && d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}
