package tfprovider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// withTypes gives every nested attribute of attrs (and theirs) its object
// type once, as its CustomType: the framework otherwise builds the type
// of a nested attribute anew, maps and all, at every step of every value's
// path it converts (fwschema.NestedAttributeObjectType), for each value of
// every request: at a load balancer's 2,000 rules, most of a plan's work.
// The type is the one the framework would build: values are unchanged.
func withTypes(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for name, a := range attrs {
		switch a := a.(type) {
		case schema.SingleNestedAttribute:
			a.Attributes = withTypes(a.Attributes)
			if a.CustomType == nil {
				a.CustomType = schema.NestedAttributeObject{Attributes: a.Attributes}.Type()
			}
			attrs[name] = a
		case schema.ListNestedAttribute:
			a.NestedObject = typedObject(a.NestedObject)
			attrs[name] = a
		case schema.MapNestedAttribute:
			a.NestedObject = typedObject(a.NestedObject)
			attrs[name] = a
		case schema.SetNestedAttribute:
			a.NestedObject = typedObject(a.NestedObject)
			attrs[name] = a
		}
	}
	return attrs
}

// typedObject is o with its type built once (withTypes).
func typedObject(o schema.NestedAttributeObject) schema.NestedAttributeObject {
	o.Attributes = withTypes(o.Attributes)
	if o.CustomType == nil {
		o.CustomType = o.Type()
	}
	return o
}

// objectType is the object type of nested attribute a (of its elements,
// for a list, map or set of objects), as the schema builds it: the one
// source of the types the models' values are made with.
func objectType(a schema.Attribute) types.ObjectType {
	var t attr.Type
	switch a := a.(type) {
	case schema.ListNestedAttribute:
		t = a.NestedObject.Type()
	case schema.MapNestedAttribute:
		t = a.NestedObject.Type()
	case schema.SetNestedAttribute:
		t = a.NestedObject.Type()
	default:
		t = a.GetType()
	}
	return t.(types.ObjectType)
}
