package tfprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure      = (*loadBalancerResource)(nil)
	_ resource.ResourceWithImportState    = (*loadBalancerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*loadBalancerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*loadBalancerResource)(nil)
)

const (
	defaultLBCreateTimeout = 10 * time.Minute
	defaultLBUpdateTimeout = 10 * time.Minute
	defaultLBDeleteTimeout = 5 * time.Minute
)

type loadBalancerResource struct {
	resourceBase
}

// NewLoadBalancerResource is the example_load_balancer resource.
func NewLoadBalancerResource() resource.Resource {
	return &loadBalancerResource{resourceBase{name: "load_balancer"}}
}

func (r *loadBalancerResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan loadBalancerModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan)) {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultLBCreateTimeout)
	resp.Diagnostics.Append(diags...)
	spec, diags := plan.toSpec(ctx)
	resp.Diagnostics.Append(diags...)
	ownerKeys, diags := plan.ownerKeys(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	lb, what := createOrAdopt(ctx, r.adoption(spec, ownerKeys), plan.OnNameConflict.ValueString(), timeout, &resp.Diagnostics)
	if lb == nil {
		return
	}
	ctx = tflog.SetField(ctx, "load_balancer_id", lb.ID)
	tflog.Info(ctx, what+"; waiting until it is active")

	// Track the object before waiting: if the wait fails or Terraform is
	// interrupted, the state returned with the error keeps it (tainted)
	// instead of orphaning it.
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, lb, plan, lbFromAPI(ctx))

	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready, err := waitLoadBalancerReady(waitCtx, r.data.client, lb.ID)
	if errors.Is(err, errGone) {
		resp.State.RemoveResource(ctx)
	}
	if ready != nil {
		setFromAPI(ctx, &resp.State, &resp.Diagnostics, ready, plan, lbFromAPI(ctx))
	}
	if err != nil {
		addWaitError(&resp.Diagnostics, "Load balancer did not become active", lb.ID, err, true)
	}
}

// lbFromAPI is loadBalancerFromAPI in ctx, as refresh and setFromAPI take
// it.
func lbFromAPI(ctx context.Context) func(*exampleapi.LoadBalancer, loadBalancerModel) (loadBalancerModel, diag.Diagnostics) {
	return func(lb *exampleapi.LoadBalancer, prior loadBalancerModel) (loadBalancerModel, diag.Diagnostics) {
		return loadBalancerFromAPI(ctx, lb, prior)
	}
}

func (r *loadBalancerResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, r.data, req, resp, "load balancer", (*exampleapi.Client).GetLoadBalancer, lbFromAPI(ctx))
}

func (r *loadBalancerResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state loadBalancerModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan), get(req.State, &state)) {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultLBUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	upd, diags := plan.toUpdate(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	ctx = tflog.SetField(ctx, "load_balancer_id", id)
	// An import's ownership was checked by the plan being applied.
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	if current, _ := state.toUpdate(ctx); sameRequest(current, upd) {
		// Only state-only arguments (timeouts, on_name_conflict,
		// owner_tags) changed, or an empty list became null or back (as
		// after an import): nothing to send.
		state.Timeouts = plan.Timeouts
		state.OnNameConflict = plan.OnNameConflict
		state.OwnerTags = plan.OwnerTags
		state.AllowedSourceCIDRs, state.Targets = plan.AllowedSourceCIDRs, plan.Targets
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lb := putUpdate(ctx, r.data.client, "load balancer", id, (*exampleapi.Client).UpdateLoadBalancer, upd,
		lbFieldResolver(exampleapi.LoadBalancerSpec{LoadBalancerSettings: upd}), &resp.Diagnostics)
	if lb == nil {
		return
	}
	tflog.Info(ctx, "updated load balancer")
	if lb.Status != exampleapi.LBStatusActive {
		ready, err := waitLoadBalancerReady(ctx, r.data.client, id)
		if err != nil {
			addWaitError(&resp.Diagnostics, "Load balancer did not become active after the update", id, err, false)
			if ready == nil {
				return
			}
		}
		lb = ready
	}
	m, diags := loadBalancerFromAPI(ctx, lb, plan)
	resp.Diagnostics.Append(diags...)
	m.IPv4, m.IPv6 = promised(plan.IPv4, m.IPv4), promised(plan.IPv6, m.IPv6)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// promised is the address an update ends with: the one the plan promised
// (the state's) when it knew one. A reserved address (example_address)
// attached or moved away since the refresh, in this apply or another
// workspace's, changes the load balancer's IPs without a change of its
// own; Terraform refuses an apply whose result differs from a known
// planned value, and the next refresh shows the new IP.
func promised(planned, got types.String) types.String {
	if planned.IsUnknown() || planned.IsNull() {
		return got
	}
	return planned
}

func (r *loadBalancerResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var t timeouts.Value
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("timeouts"), &t)...)
	timeout, diags := t.Delete(ctx, defaultLBDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	deleteByID(ctx, r.data, req, resp, deletion{kind: "load balancer", timeout: timeout,
		del: (*exampleapi.Client).DeleteLoadBalancer, gone: waitLoadBalancerGone,
		inUse: "A load balancer with rule sets cannot be deleted: destroy its example_load_balancer_rule_set resources " +
			"first (Terraform does, in a configuration whose sets refer to it by load_balancer_id; sets of other " +
			"workspaces, such as a Gateway's routes', must be destroyed there)."})
}

// adoption is how a create makes the load balancer, or adopts the one
// holding its name: ip_family and internal cannot change in place,
// everything else is put on it.
func (r *loadBalancerResource) adoption(spec exampleapi.LoadBalancerSpec, ownerKeys []string) nameAdoption[exampleapi.LoadBalancer] {
	return nameAdoption[exampleapi.LoadBalancer]{
		kind: "load balancer", name: spec.Name, region: spec.Region, tags: spec.Tags, ownerKeys: ownerKeys,
		hint: " For a Kubernetes Service, the annotation " + lbAdoptAnnotation + " imports an existing load balancer by id.",
		create: func(ctx context.Context) (*exampleapi.LoadBalancer, error) {
			return r.data.client.CreateLoadBalancer(ctx, spec)
		},
		list: func(ctx context.Context) ([]exampleapi.LoadBalancer, error) {
			return r.data.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: spec.Name, Region: spec.Region})
		},
		named: lbNamed,
		immutable: func(lb *exampleapi.LoadBalancer) (at path.Path, immutable []string) {
			if lb.IPFamily != spec.IPFamily {
				immutable = append(immutable, fmt.Sprintf("ip_family is %q, the configuration wants %q", lb.IPFamily, spec.IPFamily))
				at = path.Root("ip_family")
			}
			if lb.Internal != spec.Internal {
				immutable = append(immutable, fmt.Sprintf("internal is %t, the configuration wants %t", lb.Internal, spec.Internal))
				at = path.Root("internal")
			}
			return at, immutable
		},
		update: func(ctx context.Context, id string) (*exampleapi.LoadBalancer, error) {
			return r.data.client.UpdateLoadBalancer(ctx, id, spec.LoadBalancerSettings, 0)
		},
		resolve: lbFieldResolver(spec),
	}
}

func lbNamed(lb *exampleapi.LoadBalancer) namedObject {
	return namedObject{ID: lb.ID, Name: lb.Name, Region: lb.Region, Tags: lb.Tags, CreatedAt: lb.CreatedAt}
}

// lbFieldResolver maps API field errors onto the load balancer's
// attributes; set elements are named by the value that was sent, listeners
// and rules by the key of the one that was sent.
func lbFieldResolver(spec exampleapi.LoadBalancerSpec) fieldResolver {
	roots := map[string]bool{"name": true, "region": true, "type": true, "internal": true, "ip_family": true,
		"algorithm": true, "listeners": true, "health_check": true, "allowed_source_cidrs": true, "targets": true,
		"target_pool_id": true, "rules": true, "tags": true}
	resolve := listFieldResolver(roots, func(name string, i int) (path.Path, bool) {
		var vals []string
		switch name {
		case "listeners":
			if i >= len(spec.Listeners) {
				return path.Root(name), true
			}
			l := spec.Listeners[i]
			return path.Root(name).AtMapKey(listenerKey(l.Protocol, int64(l.Port))), true
		case "rules":
			return ruleAt(spec.Rules, i), true
		case "allowed_source_cidrs":
			vals = spec.AllowedSourceCIDRs
		case "targets":
			vals = spec.Targets
		default:
			return path.Empty(), false
		}
		if i >= len(vals) {
			return path.Root(name), true
		}
		return path.Root(name).AtSetValue(types.StringValue(vals[i])), true
	})
	return onRule(resolve)
}

// ruleAt is the path of rules[i] of the request's rules, sent: the rule's
// key, or the whole attribute for an index past them.
func ruleAt(rules []exampleapi.Rule, i int) path.Path {
	if i >= len(rules) {
		return path.Root("rules")
	}
	return path.Root("rules").AtMapKey(rules[i].Name)
}

// onRule is resolve with a field inside a rule landing on the rule:
// Terraform finds the source of a path into a nested attribute by its
// last name in the resource block, so rules["x"].backends[0].target_pool_id
// would point at the load balancer's own target_pool_id. The message names
// the field.
func onRule(resolve fieldResolver) fieldResolver {
	return func(field string) (path.Path, bool) {
		if rule, _, nested := strings.Cut(field, "."); nested && strings.HasPrefix(rule, "rules[") {
			field = rule
		}
		return resolve(field)
	}
}

// sameRequest tells whether a and b would send the same request body: the
// API does not tell an empty list from an absent one.
func sameRequest(a, b exampleapi.UpdateLoadBalancerRequest) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
