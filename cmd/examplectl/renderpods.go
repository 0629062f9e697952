package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
)

// podPoolIDs are the pod pools a Service of target type ip forwards to,
// by --pod-pool PORT/PROTOCOL=ID; a port without one gets a placeholder
// id (tp-pods-PORT-protocol), said on stderr: the controller names each
// pool once it exists (its id is the pod pool's workspace output,
// examplectl plan pods:NS/SERVICE-PORT-PROTOCOL).
func podPoolIDs(in *annotations.Service, flags []string, stderr io.Writer) (map[lbmodel.ServicePort]string, error) {
	given := map[string]string{}
	for _, f := range flags {
		port, id, ok := strings.Cut(f, "=")
		if !ok || !strings.HasPrefix(id, "tp-") || !strings.Contains(port, "/") {
			return nil, fmt.Errorf("--pod-pool %q: want PORT/PROTOCOL=tp-..., e.g. 80/TCP=tp-0123456789abcdef", f)
		}
		given[strings.ToUpper(port)] = id
	}
	ports, err := engine.PodPorts(in)
	if err != nil {
		return nil, err
	}
	ids := map[lbmodel.ServicePort]string{}
	for _, sp := range ports {
		key := fmt.Sprintf("%d/%s", sp.Port, sp.Protocol)
		id, ok := given[key]
		if !ok {
			id = "tp-" + strings.ToLower(strings.ReplaceAll("pods-"+key, "/", "-"))
			fmt.Fprintf(stderr, "warning: %s forwards to its pods: pod pool id %s is a placeholder; pass --pod-pool %s=ID (examplectl plan %s) for the exact module\n",
				sp, id, key, sp.Ref().Arg())
		}
		delete(given, key)
		ids[sp] = id
	}
	for key := range given {
		return nil, fmt.Errorf("--pod-pool %s: the Service forwards to no pod pool of that port", key)
	}
	return ids, nil
}
