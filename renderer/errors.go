package renderer

import (
	"fmt"

	"github.com/example/cloud-provider-example/servicemodel"
)

// The errors of a Service's translation (package servicemodel), under
// the names the renderer's callers know them by.
type (
	// UnsupportedProtocolError is a Service port whose protocol the load
	// balancer cannot carry (only TCP and UDP are).
	UnsupportedProtocolError = servicemodel.UnsupportedProtocolError
	// TooManyListenersError is a Service with more ports than a load
	// balancer may have listeners.
	TooManyListenersError = servicemodel.TooManyListenersError
)

// wrap prefixes a failed rendering's error with what was rendered. The
// exported entry points defer it on their named error result, so every
// error they return names its object without a wrapper function each.
func wrap(err *error, format string, args ...any) {
	if *err != nil {
		*err = fmt.Errorf(format+": %w", append(args, *err)...)
	}
}
