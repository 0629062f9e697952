package tfprovider

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A target pool's targets are what its target_type says: instance ids, or
// IP:port pairs. Both are checked at plan time where known; whether an IP
// is routed, and whether an instance exists, is the cloud's to say at
// apply (a 400 on targets[i], mapped back to the target).

// instanceIDRE is idValidator("i-")'s rule.
var instanceIDRE = regexp.MustCompile(`^i-[A-Za-z0-9._-]+$`)

// checkPoolTarget checks target t of a pool of target type typ.
func checkPoolTarget(typ, t string) error {
	if typ == exampleapi.TargetTypeIP {
		if _, err := exampleapi.ParseIPTarget(t); err != nil {
			hint := ""
			if instanceIDRE.MatchString(t) {
				hint = "; instances go in a pool of target_type \"instance\""
			}
			return fmt.Errorf("%w: target_type is \"ip\", whose targets are IP:port pairs%s.", err, hint) //nolint:staticcheck // diagnostics are sentences
		}
		return nil
	}
	if !instanceIDRE.MatchString(t) {
		hint := ""
		if _, err := exampleapi.ParseIPTarget(t); err == nil {
			hint = "; IP:port targets go in a pool of target_type \"ip\""
		}
		return fmt.Errorf("%q must be an id starting with \"i-\": target_type is \"instance\", whose targets are instance ids%s.", t, hint) //nolint:staticcheck // diagnostics are sentences
	}
	return nil
}

// validatePoolTargets checks each known target against the pool's
// target_type (instance when unset); an unknown or invalid type (which
// its own validator reports) checks nothing.
func validatePoolTargets(typ types.String, targets types.Set, resp *resource.ValidateConfigResponse) {
	t := typ.ValueString()
	if typ.IsNull() {
		t = exampleapi.TargetTypeInstance
	}
	if typ.IsUnknown() || !slices.Contains(exampleapi.TargetTypes, t) || !isKnown(targets) {
		return
	}
	for _, v := range targets.Elements() {
		s, ok := v.(types.String)
		if !ok || !isKnown(s) {
			continue
		}
		if err := checkPoolTarget(t, s.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("targets").AtSetValue(s), "Invalid target", err.Error())
		}
	}
}
