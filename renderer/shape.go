package renderer

import "github.com/example/cloud-provider-example/servicemodel"

// Shape is what a reviewer reads of a Service's load balancer
// (servicemodel.Shape), ListenerShape one of its listeners.
type (
	Shape         = servicemodel.Shape
	ListenerShape = servicemodel.ListenerShape
)
