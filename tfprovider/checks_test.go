package tfprovider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// The acceptance tests' checks of planned and applied values, one line
// each: stateIs(lbAddr, "listeners.tcp/80.port", 80). An attribute is named
// by its dotted path, as in Terraform's flatmap: map keys and object
// attributes are parts, a number is a list index. A wanted value is a
// string, int, bool, nil (null), object, mapOf, or any knownvalue.Check
// (listOf, setOf, notNull, matching, the *Len sizes).

// stateChecks is a step's ConfigStateChecks.
type stateChecks = []statecheck.StateCheck

// stateIs checks attr of addr in the state after the step's apply.
func stateIs(addr, attr string, want any) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(addr, attrPath(attr), known(want))
}

// planIs checks attr of addr in the planned values.
func planIs(addr, attr string, want any) plancheck.PlanCheck {
	return plancheck.ExpectKnownValue(addr, attrPath(attr), known(want))
}

// planUnknown checks that attr of addr is known only after apply.
func planUnknown(addr, attr string) plancheck.PlanCheck {
	return plancheck.ExpectUnknownValue(addr, attrPath(attr))
}

// sameInEachStep and newInEachStep compare one value across steps: each
// returns a function giving the state check to put in every step
// involved, e.g. sameID(lbAddr, "id").
func sameInEachStep() func(addr, attr string) statecheck.StateCheck {
	return stepComparison(compare.ValuesSame())
}

func newInEachStep() func(addr, attr string) statecheck.StateCheck {
	return stepComparison(compare.ValuesDiffer())
}

func stepComparison(c compare.ValueComparer) func(addr, attr string) statecheck.StateCheck {
	values := statecheck.CompareValue(c)
	return func(addr, attr string) statecheck.StateCheck { return values.AddStateValue(addr, attrPath(attr)) }
}

// stateSame checks that two attributes hold the same value in the state,
// e.g. a pool's id and the target_pool_id of a load balancer using it.
func stateSame(addrA, attrA, addrB, attrB string) statecheck.StateCheck {
	return statecheck.CompareValuePairs(addrA, attrPath(attrA), addrB, attrPath(attrB), compare.ValuesSame())
}

// attrPath is the path of a dotted attribute name.
func attrPath(attr string) tfjsonpath.Path {
	parts := strings.Split(attr, ".")
	p := tfjsonpath.New(parts[0])
	for _, part := range parts[1:] {
		if i, err := strconv.Atoi(part); err == nil {
			p = p.AtSliceIndex(i)
		} else {
			p = p.AtMapKey(part)
		}
	}
	return p
}

type (
	// object is an object value with every attribute given.
	object map[string]any
	// mapOf is a map value with every element given.
	mapOf map[string]any
)

var notNull = knownvalue.NotNull()

func listOf(elems ...any) knownvalue.Check { return knownvalue.ListExact(knownAll(elems)) }
func setOf(elems ...any) knownvalue.Check  { return knownvalue.SetExact(knownAll(elems)) }
func listLen(n int) knownvalue.Check       { return knownvalue.ListSizeExact(n) }
func setLen(n int) knownvalue.Check        { return knownvalue.SetSizeExact(n) }
func mapLen(n int) knownvalue.Check        { return knownvalue.MapSizeExact(n) }

// matching is a string matching the regular expression re.
func matching(re string) knownvalue.Check { return knownvalue.StringRegexp(regexp.MustCompile(re)) }

// known is the check of a wanted value (see stateIs); another type is a
// mistake in the test, which panics naming it.
func known(want any) knownvalue.Check {
	switch w := want.(type) {
	case nil:
		return knownvalue.Null()
	case knownvalue.Check:
		return w
	case string:
		return knownvalue.StringExact(w)
	case int:
		return knownvalue.Int64Exact(int64(w))
	case int64:
		return knownvalue.Int64Exact(w)
	case bool:
		return knownvalue.Bool(w)
	case object:
		return knownvalue.ObjectExact(knownEach(w))
	case mapOf:
		return knownvalue.MapExact(knownEach(w))
	}
	panic(fmt.Sprintf("known: no check for a %T (%v)", want, want))
}

func knownAll(elems []any) []knownvalue.Check {
	out := make([]knownvalue.Check, len(elems))
	for i, e := range elems {
		out[i] = known(e)
	}
	return out
}

func knownEach(m map[string]any) map[string]knownvalue.Check {
	out := make(map[string]knownvalue.Check, len(m))
	for k, v := range m {
		out[k] = known(v)
	}
	return out
}

// beforeApply is a step's ConfigPlanChecks: checks of the plan it applies.
func beforeApply(checks ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: checks}
}

// The action planned for addr.
func planCreate(addr string) plancheck.PlanCheck {
	return planAction(addr, plancheck.ResourceActionCreate)
}
func planUpdate(addr string) plancheck.PlanCheck {
	return planAction(addr, plancheck.ResourceActionUpdate)
}
func planNoop(addr string) plancheck.PlanCheck { return planAction(addr, plancheck.ResourceActionNoop) }
func planDestroy(addr string) plancheck.PlanCheck {
	return planAction(addr, plancheck.ResourceActionDestroy)
}

// planReplace is a replacement, destroying first unless createFirst
// (lifecycle create_before_destroy).
func planReplace(addr string, createFirst bool) plancheck.PlanCheck {
	if createFirst {
		return planAction(addr, plancheck.ResourceActionCreateBeforeDestroy)
	}
	return planAction(addr, plancheck.ResourceActionDestroyBeforeCreate)
}

func planAction(addr string, a plancheck.ResourceActionType) plancheck.PlanCheck {
	return plancheck.ExpectResourceAction(addr, a)
}

func TestAttrPath(t *testing.T) {
	want := tfjsonpath.New("listeners").AtMapKey("https/443").AtMapKey("certificate_ids").AtSliceIndex(0)
	if got := attrPath("listeners.https/443.certificate_ids.0"); got.String() != want.String() {
		t.Errorf("attrPath = %s, want %s", got, want)
	}
}

func TestKnown(t *testing.T) {
	for _, c := range []struct {
		want any
		is   string
	}{
		{"a", "a"}, {3, "3"}, {false, "false"}, {nil, "null"},
		{object{"port": 80}, `map[port:80]`}, {setOf("x"), "[x]"},
	} {
		if got := known(c.want).String(); got != c.is {
			t.Errorf("known(%#v) = %s, want %s", c.want, got, c.is)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("known(1.5) did not panic")
		}
	}()
	known(1.5)
}
