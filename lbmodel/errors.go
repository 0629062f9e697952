package lbmodel

import (
	"fmt"

	"github.com/example/cloud-provider-example/termsafe"
)

// InputError is an input that cannot become a valid load balancer (or
// address, pool, route): a field of the description, of the Service it
// comes from, of a node or of the config, named in Field. Its text
// reaches events, plan records, logs and terminals: what a tenant wrote
// in it is quoted or escaped, never shown raw.
type InputError struct {
	Field  string
	Value  string
	Reason string
}

// Error quotes Value (Go syntax: controls escaped) and escapes the
// controls of Field and Reason, which may name what the tenant wrote.
func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("%s: %s", termsafe.Line(e.Field), termsafe.Line(e.Reason))
	}
	return fmt.Sprintf("%s: %q %s", termsafe.Line(e.Field), e.Value, termsafe.Line(e.Reason))
}
