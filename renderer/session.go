package renderer

import (
	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/exampleapi"
)

// sessionValue is a rule's session_persistence as the module takes it:
// what is unset (the cloud's defaults) left out.
func sessionValue(s exampleapi.SessionPersistence) cty.Value {
	attrs := map[string]cty.Value{}
	for name, v := range map[string]string{"type": s.Type, "name": s.Name, "lifetime": s.Lifetime} {
		if v != "" {
			attrs[name] = cty.StringVal(v)
		}
	}
	if s.AbsoluteTimeoutSeconds != 0 {
		attrs["absolute_timeout_seconds"] = cty.NumberIntVal(int64(s.AbsoluteTimeoutSeconds))
	}
	return cty.ObjectVal(attrs)
}
