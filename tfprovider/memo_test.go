package tfprovider

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// countingServer is a provider server that counts the requests that reach
// it (a fake: the decisions of the memo, without terraform; the runner's
// tests see it answer a real apply).
type countingServer struct {
	tfprotov6.ProviderServer
	calls     map[string]int
	deferring bool
}

func (c *countingServer) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	c.calls["ConfigureProvider"]++
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (c *countingServer) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	c.calls["ValidateResourceConfig"]++
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (c *countingServer) UpgradeResourceState(context.Context, *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	c.calls["UpgradeResourceState"]++
	return &tfprotov6.UpgradeResourceStateResponse{}, nil
}

func (c *countingServer) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	c.calls["PlanResourceChange"]++
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState}
	if c.deferring {
		resp.Deferred = &tfprotov6.Deferred{Reason: tfprotov6.DeferredReasonProviderConfigUnknown}
	}
	if string(req.Config.MsgPack) == "bad" {
		resp.Diagnostics = []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "bad"}}
	}
	return resp, nil
}

func value(s string) *tfprotov6.DynamicValue { return &tfprotov6.DynamicValue{MsgPack: []byte(s)} }

func planOf(config string, deferral bool) *tfprotov6.PlanResourceChangeRequest {
	return &tfprotov6.PlanResourceChangeRequest{TypeName: "example_load_balancer", Config: value(config),
		PriorState: value("prior"), ProposedNewState: value(config),
		ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: deferral}}
}

func TestMemo(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{EnvRegion: "eu-1"}
	fresh := func() (*memoized, *countingServer, map[string][2]int, *time.Time) {
		next := &countingServer{calls: map[string]int{}}
		seen := map[string][2]int{}
		m := NewMemo(8, time.Minute, func(rpc string, remembered bool) {
			n := seen[rpc]
			if remembered {
				n[0]++
			} else {
				n[1]++
			}
			seen[rpc] = n
		})
		now := time.Unix(0, 0)
		m.now = func() time.Time { return now }
		return &memoized{ProviderServer: next, memo: m, getenv: func(k string) string { return env[k] }}, next, seen, &now
	}
	configure := func(s *memoized, config string) {
		if _, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: value(config)}); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(s *memoized, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
		resp, err := s.PlanResourceChange(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("an apply's second asking is answered from memory", func(t *testing.T) {
		s, next, seen, _ := fresh()
		for range 2 { // the plan process, then the apply process
			configure(s, "provider")
			if _, err := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "example_load_balancer", Config: value("lb")}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: "example_load_balancer", RawState: &tfprotov6.RawState{JSON: []byte(`{}`)}}); err != nil {
				t.Fatal(err)
			}
		}
		first := plan(s, planOf("lb", true))
		again := plan(s, planOf("lb", false)) // terraform allows no deferral at apply
		if again != first {
			t.Fatal("the apply's plan was not the plan's answer")
		}
		for _, rpc := range []string{"ValidateResourceConfig", "UpgradeResourceState", "PlanResourceChange"} {
			if next.calls[rpc] != 1 || seen[rpc] != [2]int{1, 1} {
				t.Errorf("%s: served %d times, remembered/served %v; want once, [1 1]", rpc, next.calls[rpc], seen[rpc])
			}
		}
		if next.calls["ConfigureProvider"] != 2 {
			t.Errorf("configured %d times; every process configures", next.calls["ConfigureProvider"])
		}
	})

	t.Run("another configuration is planned afresh", func(t *testing.T) {
		s, next, _, _ := fresh()
		configure(s, "provider")
		plan(s, planOf("lb", true))
		configure(s, "provider-of-another-endpoint")
		plan(s, planOf("lb", true))
		env[EnvRegion] = "us-1" // the region default, from the environment
		defer func() { env[EnvRegion] = "eu-1" }()
		configure(s, "provider")
		plan(s, planOf("lb", true))
		if next.calls["PlanResourceChange"] != 3 {
			t.Fatalf("planned %d times under three configurations", next.calls["PlanResourceChange"])
		}
	})

	t.Run("no configuration, no memory", func(t *testing.T) {
		s, next, _, _ := fresh()
		plan(s, planOf("lb", true))
		plan(s, planOf("lb", true))
		if next.calls["PlanResourceChange"] != 2 {
			t.Fatalf("planned %d times before ConfigureProvider", next.calls["PlanResourceChange"])
		}
	})

	t.Run("deferred and failed plans are not kept", func(t *testing.T) {
		s, next, _, _ := fresh()
		configure(s, "provider")
		next.deferring = true
		plan(s, planOf("lb", true))
		next.deferring = false
		if plan(s, planOf("lb", false)).Deferred != nil {
			t.Fatal("a deferral answered a request that allows none")
		}
		plan(s, planOf("bad", true))
		plan(s, planOf("bad", true))
		if next.calls["PlanResourceChange"] != 4 {
			t.Fatalf("planned %d times, want 4", next.calls["PlanResourceChange"])
		}
	})

	t.Run("an answer is kept for its time only", func(t *testing.T) {
		s, next, _, now := fresh()
		configure(s, "provider")
		plan(s, planOf("lb", true))
		*now = now.Add(59 * time.Second)
		plan(s, planOf("lb", false))
		*now = now.Add(2 * time.Second)
		plan(s, planOf("lb", false))
		if next.calls["PlanResourceChange"] != 2 {
			t.Fatalf("planned %d times, want 2 (the second from memory, the third after a minute)", next.calls["PlanResourceChange"])
		}
	})

	t.Run("another change is planned", func(t *testing.T) {
		s, next, _, _ := fresh()
		configure(s, "provider")
		plan(s, planOf("lb", true))
		plan(s, planOf("lb-with-one-more-rule", true))
		if next.calls["PlanResourceChange"] != 2 {
			t.Fatalf("planned %d times for two configurations", next.calls["PlanResourceChange"])
		}
	})
}
