package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Attributes several resources declare alike; each passes its own
// description.

// computedStable is a computed string that keeps its value across plans
// (ids, creation times, addresses).
func computedStable(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Computed:      true,
		Description:   desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// nameAttribute is a required name that replaces the object when changed.
func nameAttribute(desc string) schema.StringAttribute {
	return immutableString(desc, nameValidators()...)
}

// immutableString is a required string the cloud cannot change: a new
// value replaces the object.
func immutableString(desc string, validators ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{
		Required:      true,
		Description:   desc,
		Validators:    validators,
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}

// regionAttribute is the object's region; ModifyPlan defaults it to the
// provider's and replaces the object when it changes.
func regionAttribute(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional:    true,
		Computed:    true,
		Description: desc,
		Validators:  []validator.String{stringvalidator.LengthAtLeast(1)},
	}
}

// targetsValidators bound a set of target instance ids.
func targetsValidators() []validator.Set {
	return []validator.Set{
		setvalidator.SizeAtMost(exampleapi.MaxTargets),
		setvalidator.ValueStringsAre(idValidator("i-")),
	}
}

// tagsAttribute is the object's key/value tags, checked as the API does.
func tagsAttribute(desc string) schema.MapAttribute {
	return schema.MapAttribute{
		Optional:    true,
		ElementType: stringType,
		Description: desc,
		Validators: []validator.Map{
			mapvalidator.SizeAtMost(exampleapi.MaxTags),
			mapvalidator.KeysAre(tagKeyValidators()...),
			mapvalidator.ValueStringsAre(stringvalidator.LengthAtMost(256)),
		},
	}
}

// defaultTagsDescription is tags' description where they change in place.
var defaultTagsDescription = fmt.Sprintf("Key/value tags (at most %d).", exampleapi.MaxTags)

// ownerTagsAttribute is owner_tags: keys of tags whose values name the
// owner, checked on imports and adoptions (see ownership.go).
func ownerTagsAttribute(desc string) schema.SetAttribute {
	return schema.SetAttribute{
		Optional:    true,
		ElementType: stringType,
		Description: desc,
		Validators: []validator.Set{
			setvalidator.SizeAtMost(exampleapi.MaxTags),
			setvalidator.ValueStringsAre(tagKeyValidators()...),
		},
	}
}

// tagKeyValidators mirror the API's rule for tag keys.
func tagKeyValidators() []validator.String {
	return []validator.String{stringvalidator.LengthBetween(1, 128),
		stringvalidator.RegexMatches(noEqualsRE, "must not contain '='")}
}

// choiceAttribute is a configuration-only choice of what a create does in
// a conflict, one of choices, the first being the default.
func choiceAttribute(desc string, choices ...string) schema.StringAttribute {
	return defaultedChoice(choices[0], choices, desc)
}

// defaultedChoice is an optional string, one of choices, def when unset:
// the provider states the default so plans show real values.
func defaultedChoice(def string, choices []string, desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Optional:    true,
		Computed:    true,
		Default:     stringdefault.StaticString(def),
		Description: desc,
		Validators:  []validator.String{stringvalidator.OneOf(choices...)},
	}
}

// replacedChoice is a defaultedChoice the cloud fixes at creation: another
// value replaces the object. A state written before the attribute existed
// holds null, which stands for def: planning def there only records it.
func replacedChoice(def string, choices []string, desc string) schema.StringAttribute {
	a := defaultedChoice(def, choices, desc)
	a.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplaceIf(
		func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = !req.StateValue.IsNull() || req.PlanValue.ValueString() != def
		},
		"Changing it replaces the object.", "Changing it replaces the object.")}
	return a
}

// replacedTags is tagsAttribute for objects the cloud cannot change: new
// tags replace the object.
func replacedTags(desc string) schema.MapAttribute {
	a := tagsAttribute(desc)
	a.PlanModifiers = []planmodifier.Map{mapplanmodifier.RequiresReplace()}
	return a
}
