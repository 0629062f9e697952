package renderer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// TargetPoolsModuleName is the module call in the cluster's target pools
// root module.
const TargetPoolsModuleName = "target_pools"

// TagNodeSelector, on a target pool, is the node selection it stands for.
const TagNodeSelector = "k8s.example.com/node-selector"

var targetPoolsOutputs = []output{
	{"ids", "Pool id (tp-...) by key: what each load balancer's target_pool_id takes."},
	{"selectors", "The node selection each pool stands for, by key."},
	{"targets", "The instances each pool forwards to, by key: what the controller decides the next wave from."},
}

// Selection is the canonical node selection of svc's load balancer ("" for
// every node), and whether it can have a target pool.
func Selection(in *annotations.Service) (string, bool, error) {
	ann := in.LB
	if in.Err != nil {
		return "", false, in.Err
	}
	if ann.Pods() {
		return "", false, nil // it forwards to its pods: no node pool
	}
	sel := ""
	if ann.NodeSelector != nil && !ann.NodeSelector.Empty() {
		sel = ann.NodeSelector.String()
	}
	return sel, len(sel) <= lbmodel.MaxSelection, nil
}

// PoolKey names the pool of a selection, stable for its life: "all" for
// every node, else "sel-" and 16 hex digits of its hash.
func PoolKey(selection string) string {
	if selection == "" {
		return "all"
	}
	return objectref.HashedName("sel-", 16, selection)
}

// PoolTargets are the instances of nodes that a selection picks (the same
// rule as a load balancer's own targets), with warnings.
func PoolTargets(nodes []*corev1.Node, selection, region string) ([]string, []string, error) {
	picked, warnings, err := PoolNodes(nodes, selection, region)
	if err != nil {
		return nil, nil, err
	}
	ids, warnings := lbmodel.InstanceIDs(picked, warnings)
	return ids, warnings, nil
}

// PoolNodes are the nodes a selection picks with their instances, by
// name, excluded ones too: which of them are targets is the node
// lifecycle's decision (package deregistration), with warnings.
func PoolNodes(nodes []*corev1.Node, selection, region string) ([]lbmodel.NodeInstance, []string, error) {
	var sel labels.Selector
	if selection != "" {
		var err error
		if sel, err = labels.Parse(selection); err != nil {
			return nil, nil, fmt.Errorf("node selection %q: %w", selection, err)
		}
	}
	picked, warnings := lbmodel.PickNodes(nodes, sel, region)
	return picked, warnings, nil
}

// poolNamePrefix makes pool names unique per cluster within a region.
func poolNamePrefix(clusterID string) string {
	return objectref.HashedName("k8s-", 12, clusterID) + "-"
}

// TargetPools renders the root module of the cluster's target pools: one
// pool per node selection in use, so a node joining or leaving is one
// apply of this module, whatever the number of load balancers.
func TargetPools(pools []lbmodel.Pool, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render target pools")
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := lbmodel.CheckDelay(cfg.DeregistrationDelay); err != nil {
		return nil, err
	}
	byKey := map[string]cty.Value{}
	var notes []string
	for _, p := range pools {
		key := PoolKey(p.Selection)
		if err := p.Validate(); err != nil {
			return nil, err
		}
		if _, dup := byKey[key]; dup {
			return nil, &lbmodel.InputError{Field: "selection", Value: p.Selection, Reason: "is given twice"}
		}
		targets := slices.Sorted(slices.Values(p.Targets))
		attrs := map[string]cty.Value{
			"targets": stringSet(targets),
			"tags":    stringMap(PoolTags(p.Selection, cfg)),
		}
		// Only a delay other than the module-wide one is the pool's own;
		// null takes the module's.
		attrs["deregistration_delay_seconds"] = cty.NullVal(cty.Number)
		if d := p.Delay; d != nil && *d != cfg.DeregistrationDelay {
			attrs["deregistration_delay_seconds"] = cty.NumberIntVal(int64(*d / time.Second))
			if len(p.AskedBy) > 0 {
				notes = append(notes, fmt.Sprintf("Pool %s drains for %s, asked by %s.", key, d, strings.Join(slices.Sorted(slices.Values(p.AskedBy)), ", ")))
			}
		}
		byKey[key] = cty.ObjectVal(attrs)
	}
	r, err := newModuleRoot(cfg, cfg.TargetPoolsModule, DefaultTargetPoolsModuleSource, heading{
		about:   "the target pools of cluster " + cfg.ClusterID,
		notes:   slices.Sorted(slices.Values(notes)),
		rewrite: "the nodes, or the node selections of the Services, change",
	})
	if err != nil {
		return nil, err
	}
	pv := cty.MapValEmpty(cty.Object(map[string]cty.Type{"targets": cty.Set(cty.String), "tags": cty.Map(cty.String), "deregistration_delay_seconds": cty.Number}))
	if len(byKey) > 0 {
		pv = cty.MapVal(byKey)
	}
	return r.targetPools(cfg, pv, targetPoolsOutputs)
}

// targetPools ends root r with its call of the targetpools module for
// pools (a map of them by key), the cluster's name prefix and delay, and
// outs.
func (r *root) targetPools(cfg Config, pools cty.Value, outs []output) (*Module, error) {
	inputs := []input{
		{name: "name_prefix", value: cty.StringVal(poolNamePrefix(cfg.ClusterID))},
		{name: "region", value: cty.StringVal(cfg.Region)},
		{name: "pools", value: pools},
	}
	if d := cfg.DeregistrationDelay; d > 0 {
		inputs = append(inputs, input{name: "deregistration_delay_seconds", value: cty.NumberIntVal(int64(d / time.Second))})
	}
	if err := r.moduleCall(TargetPoolsModuleName, cfg.TargetPoolsModule, inputs); err != nil {
		return nil, err
	}
	r.outputs(TargetPoolsModuleName, outs)
	return newModule(r.bytes(), nil), nil
}

// stringSet is ss as a set (stringList's elements).
func stringSet(ss []string) cty.Value {
	if len(ss) == 0 {
		return cty.SetValEmpty(cty.String)
	}
	return cty.SetVal(stringList(ss).AsValueSlice())
}

// PoolTags are the tags of the cluster's pool of node selection sel: what
// finds it in the cloud.
func PoolTags(sel string, cfg Config) map[string]string {
	return map[string]string{lbmodel.TagManagedBy: generator, lbmodel.TagClusterID: cfg.ClusterID, TagNodeSelector: sel}
}
