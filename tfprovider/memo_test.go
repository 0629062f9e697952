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

// step is one thing a terraform process does to the server in TestMemo.
type step struct {
	configure string // ConfigureProvider with this provider block
	region    string // the environment's EXAMPLE_REGION from here on
	plan      *tfprotov6.PlanResourceChangeRequest
	deferring bool          // the provider defers this plan
	wait      time.Duration // time passes
}

func TestMemo(t *testing.T) {
	ctx := context.Background()
	lb, lbAtApply := planOf("lb", true), planOf("lb", false) // terraform allows no deferral at apply
	for _, c := range []struct {
		name   string
		steps  []step
		served int // plans that reached the provider
	}{
		{"the apply's plan is answered from memory", []step{{configure: "p"}, {plan: lb}, {configure: "p"}, {plan: lbAtApply}}, 1},
		{"another configuration is planned afresh", []step{{configure: "p"}, {plan: lb}, {configure: "another endpoint"}, {plan: lb}}, 2},
		{"another region from the environment too", []step{{configure: "p"}, {plan: lb}, {region: "us-1", configure: "p"}, {plan: lb}}, 2},
		{"no configuration, no memory", []step{{plan: lb}, {plan: lb}}, 2},
		{"a deferral is not kept", []step{{configure: "p"}, {plan: lb, deferring: true}, {plan: lbAtApply}}, 2},
		{"a failure is not kept", []step{{configure: "p"}, {plan: planOf("bad", true)}, {plan: planOf("bad", true)}}, 2},
		{"an answer is kept for its time", []step{{configure: "p"}, {plan: lb}, {wait: 59 * time.Second}, {plan: lb}, {wait: 2 * time.Second}, {plan: lb}}, 2},
		{"another change is planned", []step{{configure: "p"}, {plan: lb}, {plan: planOf("lb with one more rule", true)}}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			next := &countingServer{calls: map[string]int{}}
			env := map[string]string{EnvRegion: "eu-1"}
			m := NewMemo(8, time.Minute, nil)
			now := time.Unix(0, 0)
			m.now = func() time.Time { return now }
			s := &memoized{ProviderServer: next, memo: m, getenv: func(k string) string { return env[k] }}
			for _, st := range c.steps {
				now = now.Add(st.wait)
				if st.region != "" {
					env[EnvRegion] = st.region
				}
				if st.configure != "" {
					if _, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: value(st.configure)}); err != nil {
						t.Fatal(err)
					}
				}
				if st.plan != nil {
					next.deferring = st.deferring
					resp, err := s.PlanResourceChange(ctx, st.plan)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Deferred != nil && !st.plan.ClientCapabilities.DeferralAllowed {
						t.Fatal("a deferral answered a request that allows none")
					}
				}
			}
			if next.calls["PlanResourceChange"] != c.served {
				t.Fatalf("the provider planned %d times, want %d", next.calls["PlanResourceChange"], c.served)
			}
		})
	}
}

// The apply validates the configuration and upgrades the state as its
// plan did: both answered from memory, and said so.
func TestMemoValidationAndUpgrade(t *testing.T) {
	ctx := context.Background()
	next := &countingServer{calls: map[string]int{}}
	remembered := map[string]int{}
	s := &memoized{ProviderServer: next, getenv: func(string) string { return "" },
		memo: NewMemo(8, time.Minute, func(rpc string, r bool) {
			if r {
				remembered[rpc]++
			}
		})}
	for range 2 { // the plan process, then the apply process
		if _, err := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "example_load_balancer", Config: value("lb")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: "example_load_balancer", RawState: &tfprotov6.RawState{JSON: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, rpc := range []string{"ValidateResourceConfig", "UpgradeResourceState"} {
		if next.calls[rpc] != 1 || remembered[rpc] != 1 {
			t.Errorf("%s: served %d, remembered %d; want 1 and 1", rpc, next.calls[rpc], remembered[rpc])
		}
	}
}
