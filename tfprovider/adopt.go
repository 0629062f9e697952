package tfprovider

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Values of on_name_conflict (example_load_balancer, and
// example_load_balancer_rule_set's own) and on_destination_conflict
// (example_route): what Create does when the object's unique key is taken
// (for most, the API answers 409). That happens after an apply was killed
// (SIGKILL, OOM, node loss) between the cloud creating the object and
// Terraform recording it in state: every later apply plans a create again
// and hits the same conflict.
const (
	onConflictError            = "error"
	onNameConflictAdopt        = "adopt_if_tags_match"
	onDestinationConflictAdopt = "adopt_if_same_target"
	// onRuleSetConflictAdopt takes over a rule set of the name on the
	// load balancer: a set has no tags to prove whose it is.
	onRuleSetConflictAdopt = "adopt"
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

// namedObject is what the code shared by the named, tagged kinds of object
// (load balancers, target pools, certificates, addresses) reads of one.
type namedObject struct {
	ID, Name, Region string
	Tags             map[string]string
	CreatedAt        time.Time
}

// nameAdoption is one kind's part in a create that the API may refuse
// with a 409 because the name is taken in the region (createOrAdopt).
type nameAdoption[T any] struct {
	kind string // e.g. "load balancer"
	// name, region and tags are the configuration's; ownerKeys its
	// owner_tags.
	name, region string
	tags         map[string]string
	ownerKeys    []string
	// hint ends the error of a conflict that is not adopted (optional).
	hint string
	// create posts the object; list finds the objects named name in
	// region; named reads one.
	create func(context.Context) (*T, error)
	list   func(context.Context) ([]T, error)
	named  func(*T) namedObject
	// immutable, if set, lists what of the object differs from the
	// configuration and cannot change in place, and the attribute to
	// blame.
	immutable func(*T) (path.Path, []string)
	// update puts the configuration's mutable fields on the object of id
	// (an unconditional PUT, as Update does).
	update  func(ctx context.Context, id string) (*T, error)
	resolve fieldResolver
}

// createOrAdopt creates the object (a.create) detached from cancellation
// (createDetached); names being unique per region, after a lost answer the
// one object of the name created since is ours. A 409 for the name is
// resolved by adoptByName under on_name_conflict = "adopt_if_tags_match"
// (onConflict), bounded by timeout like the create. It returns the object
// and what happened to it ("created load balancer"), or nil when diags
// holds why there is none.
func createOrAdopt[T any](ctx context.Context, a nameAdoption[T], onConflict string, timeout time.Duration,
	diags *diag.Diagnostics) (*T, string) {
	obj, err := createDetached(ctx, timeout, a.create, lostNamed(a.kind, "adopting the "+a.kind+" found by name", a.list, a.named))
	switch {
	case exampleapi.IsConflict(err) && onConflict == onNameConflictAdopt:
		// Probably ours from an interrupted apply: adopt it if its tags
		// prove so.
		adoptCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return adoptByName(adoptCtx, a, err, diags), "adopted " + a.kind
	case exampleapi.IsConflict(err):
		diags.AddAttributeError(path.Root("name"), capitalize(a.kind)+" name already in use",
			fmt.Sprintf("%s\n\nA %s named %q already exists in region %s. Choose another name, "+
				"or bring it under Terraform with: terraform import <address> <id>.\n\n"+
				"If an interrupted apply created it (Terraform was killed after the cloud created it but before "+
				"it was recorded in state), set on_name_conflict = %q: the next apply then adopts it if its tags "+
				"contain every configured tag with the same value.%s",
				err, a.kind, a.name, a.region, onNameConflictAdopt, a.hint))
		return nil, ""
	case err != nil:
		addAPIError(diags, "Cannot create "+a.kind, err, a.resolve)
		return nil, ""
	}
	return obj, "created " + a.kind
}

// adoptByName resolves a 409 on create under on_name_conflict =
// "adopt_if_tags_match": it finds the object holding the name and, when
// its tags prove it is this configuration's (no owner tag of ownerKeys
// names another owner, as for imports, and every configured tag has the
// same value) and its immutable fields match, puts the configuration's
// mutable fields on it and returns it. Otherwise it adds an error
// diagnostic and returns nil. Nothing is recorded in state before the PUT
// succeeded, so a failed adoption is simply tried again by the next apply.
func adoptByName[T any](ctx context.Context, a nameAdoption[T], conflict error, diags *diag.Diagnostics) *T {
	summary := capitalize(a.kind) + " name already in use"
	if len(a.tags) == 0 {
		diags.AddAttributeError(path.Root("on_name_conflict"), summary,
			fmt.Sprintf("%s\n\nA %s named %q already exists in region %s. on_name_conflict = %q adopts it "+
				"only when its tags prove it belongs to this configuration, but this configuration sets no tags, "+
				"so nothing can prove ownership and it was not adopted. Set tags that identify the owner (e.g. a "+
				"cluster and object id), or bring it under Terraform with: terraform import <address> <id>.",
				conflict, a.kind, a.name, a.region, onNameConflictAdopt))
		return nil
	}
	found, err := a.list(ctx)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot look up the %s named %q to adopt it", a.kind, a.name), err, nil)
		return nil
	}
	found = slices.DeleteFunc(found, func(o T) bool {
		n := a.named(&o)
		return n.Name != a.name || n.Region != a.region
	})
	if len(found) != 1 {
		diags.AddAttributeError(path.Root("name"), summary,
			fmt.Sprintf("%s\n\nThe API refused the name %q in region %s, but listing finds %d %ss with it "+
				"(deleted or created concurrently?), so none was adopted. Apply again.",
				conflict, a.name, a.region, len(found), a.kind))
		return nil
	}
	existing := a.named(&found[0])
	ctx = tflog.SetField(ctx, idKey(a.kind), existing.ID)

	// refuse reports that the tags forbid adopting the existing object:
	// why for the log (with items under key), detail for the user.
	refuse := func(why, key string, items []string, detail string) *T {
		tflog.Warn(ctx, "name conflict: the existing "+a.kind+"'s "+why+"; not adopting it",
			map[string]any{key: strings.Join(items, "; ")})
		diags.AddAttributeError(path.Root("name"), summary,
			fmt.Sprintf("%s\n\nA %s named %q (%s) already exists in region %s, ", conflict, a.kind, a.name, existing.ID, a.region)+detail)
		return nil
	}
	if owners := exampleapi.OwnerConflicts(a.tags, existing.Tags, a.ownerKeys); len(owners) > 0 {
		return refuse("tags show another owner", "conflicts", owners,
			fmt.Sprintf("and its tags show another owner:\n  - %s\n\nowner_tags lists the tags whose values name the owner; "+
				"on_name_conflict = %q never adopts a %s whose owner tags differ, so it was not adopted and is left "+
				"untouched. Choose another name.", strings.Join(owners, "\n  - "), onNameConflictAdopt, a.kind))
	}
	if mismatch := tagMismatches(a.tags, existing.Tags); len(mismatch) > 0 {
		return refuse("tags do not match", "mismatched_tags", mismatch,
			fmt.Sprintf("but its tags do not match this configuration's, so it was not adopted: on_name_conflict = %q "+
				"adopts only a %s whose tags contain every configured tag with the same value (the proof that an "+
				"interrupted apply of this configuration created it).\n\nMismatched tags: %s.\n\nIt probably belongs "+
				"to someone else: choose another name. If it is yours, correct its tags or bring it under Terraform "+
				"with: terraform import <address> %s.", onNameConflictAdopt, a.kind, strings.Join(mismatch, "; "), existing.ID))
	}

	if a.immutable != nil {
		if at, immutable := a.immutable(&found[0]); len(immutable) > 0 {
			diags.AddAttributeError(at, "Cannot adopt "+a.kind+" "+existing.ID,
				fmt.Sprintf("%s\n\n%s %s (name %q, region %s) has this configuration's tags, so it was probably "+
					"created by an interrupted apply, but it cannot be adopted: %s, and that cannot change in place. "+
					"Either change the configuration to match it, or delete %s (nothing in Terraform state tracks it) "+
					"and apply again to create it afresh.",
					conflict, capitalize(a.kind), existing.ID, a.name, a.region, strings.Join(immutable, "; "), existing.ID))
			return nil
		}
	}

	tflog.Warn(ctx, "name conflict: adopting the existing "+a.kind+" whose tags match (probably created by an interrupted apply)",
		map[string]any{"name": a.name, "region": a.region})
	// Unconditional PUT: the configuration is the desired state, whatever
	// the interrupted apply (or anyone since) left on the object.
	obj, err := a.update(ctx, existing.ID)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot update %s %s to adopt it (name %q, tags match)", a.kind, existing.ID, a.name),
			err, a.resolve)
		return nil
	}
	diags.AddWarning("Adopted existing "+a.kind+" "+existing.ID,
		fmt.Sprintf("Adopted existing %s %s (name %q) whose tags match; it was probably created by an "+
			"interrupted apply. The API refused to create it again (%v); on_name_conflict = %q took the existing "+
			"one over, updated it to this configuration and recorded it in state.",
			a.kind, existing.ID, a.name, conflict, onNameConflictAdopt))
	return obj
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
