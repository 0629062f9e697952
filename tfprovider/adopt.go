package tfprovider

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Values of on_name_conflict (example_load_balancer) and
// on_destination_conflict (example_route): what Create does when the API
// answers 409 because the object's unique key is taken. That happens after
// an apply was killed (SIGKILL, OOM, node loss) between the cloud creating
// the object and Terraform recording it in state: every later apply plans
// a create again and hits the same 409.
const (
	onConflictError            = "error"
	onNameConflictAdopt        = "adopt_if_tags_match"
	onDestinationConflictAdopt = "adopt_if_same_target"
)

// lbAdoptAnnotation is the CCM's Service annotation that imports an
// existing load balancer, named in conflict errors for CCM users.
const lbAdoptAnnotation = "loadbalancer.example.com/adopt-id"

// stateOnly carries a configuration-only argument (like timeouts) from the
// prior plan or state into a model built from the API; null or unknown
// (after an import, or state written by an older provider) becomes def.
func stateOnly(prior types.String, def string) types.String {
	if prior.IsNull() || prior.IsUnknown() {
		return types.StringValue(def)
	}
	return prior
}

// addLBNameConflictError is the diagnostic of a 409 on create that is not
// (or cannot be) resolved by adoption.
func addLBNameConflictError(diags *diag.Diagnostics, err error, spec exampleapi.LoadBalancerSpec) {
	diags.AddAttributeError(path.Root("name"), "Load balancer name already in use",
		fmt.Sprintf("%s\n\nA load balancer named %q already exists in region %s. Choose another name, "+
			"or bring it under Terraform with: terraform import <address> <id>.\n\n"+
			"If an interrupted apply created it (Terraform was killed after the cloud created it but before "+
			"it was recorded in state), set on_name_conflict = %q: the next apply then adopts it if its tags "+
			"contain every configured tag with the same value. For a Kubernetes Service, the annotation %s "+
			"imports an existing load balancer by id.",
			err, spec.Name, spec.Region, onNameConflictAdopt, lbAdoptAnnotation))
}

// adopt resolves a 409 on create under on_name_conflict =
// "adopt_if_tags_match": it finds the load balancer holding the name and,
// when its tags prove it is this configuration's (no owner tag of
// ownerKeys names another owner, as for imports, and every configured tag
// has the same value) and its immutable fields match, puts the
// configuration's mutable fields on it (an unconditional PUT, as Update
// does) and returns it. Otherwise it adds an error diagnostic and returns
// nil. Nothing is recorded in state before the PUT succeeded, so a failed
// adoption is simply tried again by the next apply.
func (r *loadBalancerResource) adopt(ctx context.Context, spec exampleapi.LoadBalancerSpec, ownerKeys []string, conflict error, diags *diag.Diagnostics) *exampleapi.LoadBalancer {
	if len(spec.Tags) == 0 {
		diags.AddAttributeError(path.Root("on_name_conflict"), "Load balancer name already in use",
			fmt.Sprintf("%s\n\nA load balancer named %q already exists in region %s. on_name_conflict = %q adopts it "+
				"only when its tags prove it belongs to this configuration, but this configuration sets no tags, "+
				"so nothing can prove ownership and it was not adopted. Set tags that identify the owner (e.g. a "+
				"cluster and object id), or bring it under Terraform with: terraform import <address> <id>.",
				conflict, spec.Name, spec.Region, onNameConflictAdopt))
		return nil
	}
	found, err := r.data.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: spec.Name, Region: spec.Region})
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot look up the load balancer named %q to adopt it", spec.Name), err, nil)
		return nil
	}
	found = slices.DeleteFunc(found, func(lb exampleapi.LoadBalancer) bool {
		return lb.Name != spec.Name || lb.Region != spec.Region
	})
	if len(found) != 1 {
		diags.AddAttributeError(path.Root("name"), "Load balancer name already in use",
			fmt.Sprintf("%s\n\nThe API refused the name %q in region %s, but listing finds %d load balancers with it "+
				"(deleted or created concurrently?), so none was adopted. Apply again.",
				conflict, spec.Name, spec.Region, len(found)))
		return nil
	}
	existing := &found[0]
	ctx = tflog.SetField(ctx, "load_balancer_id", existing.ID)

	if owners := exampleapi.OwnerConflicts(spec.Tags, existing.Tags, ownerKeys); len(owners) > 0 {
		tflog.Warn(ctx, "name conflict: the existing load balancer's tags show another owner; not adopting it",
			map[string]any{"conflicts": strings.Join(owners, "; ")})
		diags.AddAttributeError(path.Root("name"), "Load balancer name already in use",
			fmt.Sprintf("%s\n\nA load balancer named %q (%s) already exists in region %s, and its tags show another "+
				"owner:\n  - %s\n\nowner_tags lists the tags whose values name the owner; on_name_conflict = %q never "+
				"adopts a load balancer whose owner tags differ, so it was not adopted and is left untouched. "+
				"Choose another name.",
				conflict, spec.Name, existing.ID, spec.Region, strings.Join(owners, "\n  - "), onNameConflictAdopt))
		return nil
	}

	if mismatch := tagMismatches(spec.Tags, existing.Tags); len(mismatch) > 0 {
		tflog.Warn(ctx, "name conflict: the existing load balancer's tags do not match; not adopting it",
			map[string]any{"mismatched_tags": strings.Join(mismatch, "; ")})
		diags.AddAttributeError(path.Root("name"), "Load balancer name already in use",
			fmt.Sprintf("%s\n\nA load balancer named %q (%s) already exists in region %s, but its tags do not match "+
				"this configuration's, so it was not adopted: on_name_conflict = %q adopts only a load balancer whose "+
				"tags contain every configured tag with the same value (the proof that an interrupted apply of this "+
				"configuration created it).\n\nMismatched tags: %s.\n\nIt probably belongs to someone else: choose "+
				"another name. If it is yours, correct its tags or bring it under Terraform with: "+
				"terraform import <address> %s.",
				conflict, spec.Name, existing.ID, spec.Region, onNameConflictAdopt, strings.Join(mismatch, "; "), existing.ID))
		return nil
	}

	var immutable []string
	var at path.Path
	if existing.IPFamily != spec.IPFamily {
		immutable = append(immutable, fmt.Sprintf("ip_family is %q, the configuration wants %q", existing.IPFamily, spec.IPFamily))
		at = path.Root("ip_family")
	}
	if existing.Internal != spec.Internal {
		immutable = append(immutable, fmt.Sprintf("internal is %t, the configuration wants %t", existing.Internal, spec.Internal))
		at = path.Root("internal")
	}
	if len(immutable) > 0 {
		diags.AddAttributeError(at, "Cannot adopt load balancer "+existing.ID,
			fmt.Sprintf("%s\n\nLoad balancer %s (name %q, region %s) has this configuration's tags, so it was probably "+
				"created by an interrupted apply, but it cannot be adopted: %s, and that cannot change in place. "+
				"Either change the configuration to match it, or delete %s (nothing in Terraform state tracks it) "+
				"and apply again to create it afresh.",
				conflict, existing.ID, spec.Name, spec.Region, strings.Join(immutable, "; "), existing.ID))
		return nil
	}

	tflog.Warn(ctx, "name conflict: adopting the existing load balancer whose tags match (probably created by an interrupted apply)",
		map[string]any{"name": spec.Name, "region": spec.Region, "status": existing.Status})
	// Unconditional PUT: the configuration is the desired state, whatever
	// the interrupted apply (or anyone since) left on the object.
	lb, err := r.data.client.UpdateLoadBalancer(ctx, existing.ID, exampleapi.UpdateLoadBalancerRequest{
		Type: spec.Type, Algorithm: spec.Algorithm, Listeners: spec.Listeners, HealthCheck: spec.HealthCheck,
		AllowedSourceCIDRs: spec.AllowedSourceCIDRs, Targets: spec.Targets, TargetPoolID: spec.TargetPoolID, Tags: spec.Tags,
	}, 0)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot update load balancer %s to adopt it (name %q, tags match)", existing.ID, spec.Name),
			err, lbFieldResolver(spec))
		return nil
	}
	diags.AddWarning("Adopted existing load balancer "+existing.ID,
		fmt.Sprintf("Adopted existing load balancer %s (name %q) whose tags match; it was probably created by an "+
			"interrupted apply. The API refused to create it again (%v); on_name_conflict = %q took the existing "+
			"one over, updated it to this configuration and recorded it in state.",
			existing.ID, spec.Name, conflict, onNameConflictAdopt))
	return lb
}

// tagMismatches lists, sorted, every wanted tag that got lacks or has with
// another value.
func tagMismatches(want, got map[string]string) []string {
	var out []string
	for k, v := range want {
		switch g, ok := got[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("%q is missing (want %q)", k, v))
		case g != v:
			out = append(out, fmt.Sprintf("%q is %q (want %q)", k, g, v))
		}
	}
	slices.Sort(out)
	return out
}

// addRouteConflictError is the diagnostic of a 409 on route create that is
// not resolved by adoption.
func addRouteConflictError(diags *diag.Diagnostics, err error, netID string, in exampleapi.CreateRouteRequest, existing *exampleapi.Route) {
	var detail string
	if existing == nil {
		detail = fmt.Sprintf("%s\n\nThe route table of %s already has a route for %s. Remove it, or import it with: "+
			"terraform import <address> %s/<route id>.\n\n"+
			"If an interrupted apply created it (Terraform was killed after the cloud created it but before it was "+
			"recorded in state), set on_destination_conflict = %q: the next apply then adopts it if it sends traffic "+
			"to the same instance.",
			err, netID, in.DestinationCIDR, netID, onDestinationConflictAdopt)
	} else {
		detail = fmt.Sprintf("%s\n\nThe route table of %s already has a route for %s. It is %s and sends traffic to %s, "+
			"not to %s, so it was not adopted: on_destination_conflict = %q adopts only a route with the same target. "+
			"Remove it, or import it with: terraform import <address> %s/%s.",
			err, netID, in.DestinationCIDR, existing.ID, existing.TargetInstanceID, in.TargetInstanceID,
			onDestinationConflictAdopt, netID, existing.ID)
	}
	diags.AddAttributeError(path.Root("destination_cidr"), "Route already exists", detail)
}

// adopt resolves a 409 on route create under on_destination_conflict =
// "adopt_if_same_target": the route holding the destination is adopted
// when it sends traffic to the configured instance. Otherwise it adds an
// error diagnostic and returns nil.
func (r *routeResource) adopt(ctx context.Context, netID string, in exampleapi.CreateRouteRequest, conflict error, diags *diag.Diagnostics) *exampleapi.Route {
	routes, err := r.data.client.ListRoutes(ctx, netID)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot list the routes of %s to adopt the route for %s", netID, in.DestinationCIDR), err, nil)
		return nil
	}
	want, perr := netip.ParsePrefix(in.DestinationCIDR)
	var existing *exampleapi.Route
	for i := range routes {
		got, err := netip.ParsePrefix(routes[i].DestinationCIDR)
		if routes[i].DestinationCIDR == in.DestinationCIDR || (perr == nil && err == nil && got.Masked() == want.Masked()) {
			existing = &routes[i]
			break
		}
	}
	if existing == nil {
		diags.AddAttributeError(path.Root("destination_cidr"), "Route already exists",
			fmt.Sprintf("%s\n\nThe API refused the destination %s, but the route table of %s has no route for it "+
				"(deleted concurrently?), so none was adopted. Apply again.", conflict, in.DestinationCIDR, netID))
		return nil
	}
	if existing.TargetInstanceID != in.TargetInstanceID {
		tflog.Warn(ctx, "destination conflict: the existing route has another target; not adopting it",
			map[string]any{"route_id": existing.ID, "target_instance_id": existing.TargetInstanceID})
		addRouteConflictError(diags, conflict, netID, in, existing)
		return nil
	}
	tflog.Warn(ctx, "destination conflict: adopting the existing route with the same target (probably created by an interrupted apply)",
		map[string]any{"route_id": existing.ID, "network_id": netID, "destination_cidr": in.DestinationCIDR})
	diags.AddWarning("Adopted existing route "+existing.ID,
		fmt.Sprintf("Adopted existing route %s (%s to %s in %s) whose target matches; it was probably created by an "+
			"interrupted apply. The API refused to create it again (%v); on_destination_conflict = %q took the "+
			"existing one over and recorded it in state.",
			existing.ID, existing.DestinationCIDR, existing.TargetInstanceID, netID, conflict, onDestinationConflictAdopt))
	return existing
}
