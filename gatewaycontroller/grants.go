package gatewaycontroller

import (
	"github.com/example/cloud-provider-example/referencegrants"
)

// newGrants are the ReferenceGrants the references of routes and Gateways
// read consent from, watched as the Services' are (package
// referencegrants): while they cannot be read (before the first list, as
// read before it, at once; after a failed list or watch) no namespace
// consents; changed is told of every change of them or of their
// readability.
func newGrants(changed func()) *referencegrants.Watch {
	w := referencegrants.New(referencegrants.Options{Name: "gateway-referencegrants", Consents: "Gateways' and routes' references"})
	w.OnChange(func(string) { changed() })
	return w
}
