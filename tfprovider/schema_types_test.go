package tfprovider

import (
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// Every nested attribute of the load balancer's schema carries its type,
// built once, and it is the type the framework builds from the
// attributes: values read and written are the same as without it (an
// attribute with a type of its own, the timeouts', keeps it).
func TestLoadBalancerSchemaTypesBuiltOnce(t *testing.T) {
	if n := checkTypesBuiltOnce(t, &loadBalancerResource{}); n < 10 {
		t.Errorf("%d nested attributes checked; the load balancer has more", n)
	}
}

// TestRuleSetSchemaTypesBuiltOnce: so are the rule set's, its rules those
// of the load balancer but for their order.
func TestRuleSetSchemaTypesBuiltOnce(t *testing.T) {
	if n := checkTypesBuiltOnce(t, &ruleSetResource{}); n < 10 {
		t.Errorf("%d nested attributes checked; the rule set has more", n)
	}
}

// checkTypesBuiltOnce checks r's schema as TestLoadBalancerSchemaTypesBuiltOnce
// says; it returns how many nested attributes it checked.
func checkTypesBuiltOnce(t *testing.T, r fwresource.Resource) int {
	t.Helper()
	var sr fwresource.SchemaResponse
	r.Schema(t.Context(), fwresource.SchemaRequest{}, &sr)
	nested := 0
	var check func(path string, attrs map[string]schema.Attribute)
	object := func(path string, o schema.NestedAttributeObject) {
		nested++
		check(path, o.Attributes)
		if _, plain := o.CustomType.(basetypes.ObjectType); o.CustomType != nil && !plain {
			return // a type of its own (the timeouts')
		}
		if o.CustomType == nil || !o.CustomType.Equal(schema.NestedAttributeObject{Attributes: o.Attributes}.Type()) {
			t.Errorf("%s: type %v, want the one its attributes give", path, o.CustomType)
		}
	}
	check = func(path string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			switch a := a.(type) {
			case schema.SingleNestedAttribute:
				object(path+name, schema.NestedAttributeObject{Attributes: a.Attributes, CustomType: a.CustomType})
			case schema.ListNestedAttribute:
				object(path+name+"[]", a.NestedObject)
			case schema.MapNestedAttribute:
				object(path+name+"{}", a.NestedObject)
			case schema.SetNestedAttribute:
				object(path+name+"[]", a.NestedObject)
			}
		}
	}
	check("", sr.Schema.Attributes)
	return nested
}
