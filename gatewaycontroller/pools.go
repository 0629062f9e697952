package gatewaycontroller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Where a Gateway's rules forward: a backend Service port's pods through
// its pod pool (gatewayAPI.targetType ip, the default), or its node port
// on the target pool of every node.

// poolWanter is the pools' Use without waiting (a *podpools.Pools'
// Want): a new pool goes to the pools' worker. A preview's pools
// (podpools.Recorded) have none, and keep Use.
type poolWanter interface {
	Want(user string, ports []lbmodel.ServicePort)
}

// poolsTeller tells when a pool is first applied (a *podpools.Pools').
type poolsTeller interface {
	OnApplied(f func(users []string))
}

// lookWhenPoolsApplied has a Gateway looked at again as soon as a pod
// pool it waits for is applied (its routes forwarding there are held
// meanwhile, resolvePools), rather than at its next retry.
func (c *Controller) lookWhenPoolsApplied() {
	t, ok := c.cloud.Pods.(poolsTeller)
	if !ok {
		return
	}
	t.OnApplied(func(users []string) {
		for _, u := range users {
			if ref, err := objectref.Parse(u, "", ""); err == nil && ref.Kind == objectref.KindGateway {
				c.queue.Add(key{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}})
			}
		}
	})
}

// podPoolIDs says that gw forwards to ports, and to no other, and returns
// the ids of those whose pools are applied. It does not wait for a new
// pool's first apply: that may await approval or fail for as long as its
// Service's team leaves it, and only the rules forwarding to it wait
// (resolvePools), not the other teams' routes on the Gateway.
func (c *Controller) podPoolIDs(ctx context.Context, gw *gatewayv1.Gateway, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	if !c.cloud.PodTargets || c.cloud.Pods == nil {
		return nil, nil
	}
	user := objectref.Gateway(gw.Namespace, gw.Name, "").Key()
	w, ok := c.cloud.Pods.(poolWanter)
	if !ok {
		return c.cloud.Pods.Use(ctx, user, ports)
	}
	w.Want(user, ports)
	if len(ports) == 0 {
		return nil, nil
	}
	return c.cloud.Pods.Known(ctx, ports)
}

// resolvePools gives every backend of lb and of its routes' sets its
// target pool: each Service port's pod pool from ids, the pool of every
// node for node ports. A set forwarding to a pod pool not applied yet is
// held back (held: what its route is told), as last applied. The load
// balancer's own rules, and those it keeps of sets (moves.go), cannot be:
// dropped, they would stop serving, so a pool of theirs not applied yet
// (new, awaiting approval, failed) holds the Gateway, and msg and err say
// so, or which pool failed.
func (c *Controller) resolvePools(ctx context.Context, gw *gatewayv1.Gateway, lb *gateway.LoadBalancer, sets []lbmodel.RuleSet,
	kept map[objectref.Ref]bool, ids map[lbmodel.ServicePort]string) (held map[objectref.Ref]ruleState, msg string, err error) {
	var node string
	if !c.cloud.PodTargets {
		// Node targets: the pool of every node is made with the Gateway,
		// before any route needs it.
		if node, err = c.pool(ctx, gw); err != nil {
			return nil, "target pool of every node", err
		}
	}
	// resolve sets rules' pools, and returns the pod pools they lack.
	resolve := func(rules []lbmodel.Rule) (missing []lbmodel.ServicePort, err error) {
		for i := range rules {
			for j := range rules[i].Backends {
				b := &rules[i].Backends[j]
				if b.Pods != nil {
					if b.TargetPoolID, b.Port = ids[*b.Pods], 0; b.TargetPoolID == "" && !slices.Contains(missing, *b.Pods) {
						missing = append(missing, *b.Pods)
					}
					continue
				}
				if node == "" {
					if node, err = c.pool(ctx, gw); err != nil {
						return nil, err
					}
				}
				b.TargetPoolID = node
			}
		}
		return missing, nil
	}
	missing, err := resolve(lb.Rules) // with the kept sets' rules, which it shares
	if err != nil {
		return nil, "target pool of every node", err
	}
	if len(missing) > 0 {
		return nil, "pod pools", fmt.Errorf("the pod pool of %s is not applied yet (its plan may await approval, or have failed: the Service's events say)", describePorts(missing))
	}
	for i := range sets {
		if kept[sets[i].Ref()] {
			continue
		}
		missing, err := resolve(sets[i].Rules)
		if err != nil {
			return nil, "target pool of every node", err
		}
		if len(missing) > 0 {
			if held == nil {
				held = map[objectref.Ref]ruleState{}
			}
			held[sets[i].Ref()] = rulesAwaitingPools(describePorts(missing))
		}
	}
	return held, "", nil
}

// describePorts names ports, as their Services.
func describePorts(ports []lbmodel.ServicePort) string {
	var out []string
	for _, p := range ports {
		out = append(out, p.String())
	}
	return strings.Join(out, ", ")
}

// previewPools is resolvePools for a preview, which makes nothing: "" when
// a pool lb needs does not exist yet, with why.
func (c *Controller) previewPools(ctx context.Context, lb *gateway.LoadBalancer) (string, error) {
	var known map[lbmodel.ServicePort]string
	if ports := lb.PodPorts(); len(ports) > 0 && c.cloud.Pods != nil {
		var err error
		if known, err = c.cloud.Pods.Known(ctx, ports); err != nil {
			return "", fmt.Errorf("pod pools: %w", err)
		}
	}
	var node string
	for i := range lb.Rules {
		for j := range lb.Rules[i].Backends {
			b := &lb.Rules[i].Backends[j]
			if b.Pods != nil {
				if b.TargetPoolID = known[*b.Pods]; b.TargetPoolID == "" {
					return fmt.Sprintf("the pod pool of %s does not exist yet (the Gateway's first plan that forwards to it creates it)", b.Pods), nil
				}
				continue
			}
			if node == "" {
				id, err := c.cloud.Infra.ExistingPool(ctx)
				switch {
				case err != nil:
					return "", fmt.Errorf("target pool of every node: %w", err)
				case id == "":
					return "the target pool of every node does not exist yet (the controller creates it with the first plan of a Service, or of a Gateway under the auto policy, that needs it)", nil
				}
				node = id
			}
			b.TargetPoolID = node
		}
	}
	return "", nil
}
