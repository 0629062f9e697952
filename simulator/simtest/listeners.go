package simtest

import (
	"fmt"
	"slices"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Listeners are lb's listeners as "protocol/port->target port", sorted:
// what tests compare a load balancer's listeners by.
func Listeners(lb *exampleapi.LoadBalancer) []string {
	out := make([]string, 0, len(lb.Listeners))
	for _, l := range lb.Listeners {
		out = append(out, fmt.Sprintf("%s/%d->%d", l.Protocol, l.Port, l.TargetPort))
	}
	slices.Sort(out)
	return out
}
