package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/deploy"
)

// throughput is what the shipped chart (with its default values) sets for
// how fast the controller works: the flags below and the cloud config's
// terraform.concurrency. Benchmarks and the soak run with exactly these,
// so their figures are the ones a default install gets.
type throughput struct {
	// args are the Deployment's --concurrent-service-syncs, --kube-api-qps
	// and --kube-api-burst.
	args []string
	// concurrency is terraform.concurrency.
	concurrency int
	// sharding is the cloud config's sharding block (shards, lease).
	sharding map[string]any
}

var throughputFlags = []string{"--concurrent-service-syncs=", "--kube-api-qps=", "--kube-api-burst="}

// shippedThroughput renders deploy/chart once per test process.
var shippedThroughput = sync.OnceValues(func() (throughput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := deploy.ChartObjects(ctx, os.Getenv("EXAMPLE_HELM"), nil)
	if err != nil {
		return throughput{}, err
	}
	var out throughput
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.Deployment:
			for _, c := range o.Spec.Template.Spec.Containers {
				for _, a := range c.Args {
					for _, f := range throughputFlags {
						if strings.HasPrefix(a, f) {
							out.args = append(out.args, a)
						}
					}
				}
			}
		case *corev1.ConfigMap:
			data, ok := o.Data["cloud-config.yaml"]
			if !ok {
				continue
			}
			var cfg struct {
				Terraform struct {
					Concurrency int `json:"concurrency"`
				} `json:"terraform"`
				Sharding map[string]any `json:"sharding"`
			}
			if err := yaml.Unmarshal([]byte(data), &cfg); err != nil {
				return throughput{}, fmt.Errorf("chart cloud config: %w", err)
			}
			out.concurrency, out.sharding = cfg.Terraform.Concurrency, cfg.Sharding
		}
	}
	if len(out.args) != len(throughputFlags) || out.concurrency == 0 || out.sharding["leaseDuration"] == nil {
		return throughput{}, fmt.Errorf("chart defaults: found %q, terraform.concurrency %d and sharding %v; want %q, a concurrency and a sharding lease", out.args, out.concurrency, out.sharding, throughputFlags)
	}
	return out, nil
})
