package renderer

import (
	"fmt"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// TagServicePort, on a pod pool, is the Service port it stands for
// ("80/TCP").
const TagServicePort = lbmodel.TagServicePort

var podPoolOutputs = []output{
	{"ids", "Pool id (tp-...) by key: what the load balancers' rules forward to, with port 0."},
	{"targets", "The pods' IP:port the pool forwards to, by key."},
}

// PodPoolKey is the key of pod pool ref in its root module, also the end
// of its cloud name: a hash, so the name tells nobody whose it is.
func PodPoolKey(ref objectref.Ref) string {
	return objectref.HashedName("pods-", 16, ref.Key())
}

// PodPoolRoot renders the root module of one pod pool (ADR 24): the
// targetpools module with one pool of target type ip, so a rollout is an
// apply of this workspace alone.
func PodPoolRoot(p lbmodel.PodPool, cfg Config) (_ *Module, err error) {
	ref := p.Ref()
	defer wrap(&err, "render %s", ref.Describe())
	if cfg, err = cfg.validFor(p); err != nil {
		return nil, err
	}
	r, err := newModuleRoot(cfg, cfg.TargetPoolsModule, DefaultTargetPoolsModuleSource, heading{
		about:   fmt.Sprintf("the pods of port %s of Service %s/%s", p.Tag(), p.Namespace, p.Service),
		notes:   []string{fmt.Sprintf("It forwards to %d pod(s).", len(p.Targets))},
		rewrite: "the Service's ready endpoints change",
	})
	if err != nil {
		return nil, err
	}
	attrs := map[string]cty.Value{
		"target_type": cty.StringVal(exampleapi.TargetTypeIP),
		"targets":     stringSet(p.Targets),
		"tags":        stringMap(PodPoolTags(p, cfg)),
	}
	if d := p.Delay; d != nil {
		attrs["deregistration_delay_seconds"] = cty.NumberIntVal(int64(*d / time.Second)) // the Service's own
	}
	pool := cty.ObjectVal(attrs)
	return r.targetPools(cfg, cty.MapVal(map[string]cty.Value{PodPoolKey(ref): pool}), podPoolOutputs)
}

// PodPoolTags are pod pool p's tags: its cluster, and the Service port
// it stands for.
func PodPoolTags(p lbmodel.PodPool, cfg Config) map[string]string {
	return map[string]string{
		lbmodel.TagManagedBy: generator, lbmodel.TagClusterID: cfg.ClusterID,
		lbmodel.TagServiceNamespace: p.Namespace, lbmodel.TagServiceName: p.Service,
		TagServicePort: p.Tag(),
	}
}
