package ccmmetrics

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Every in-memory structure the controller keeps per object, plan,
// process or event has a bound (docs/terraform-workflow.md#memory) and
// its size on /metrics: example_ccm_memory_entries{structure}, read when
// scraped.

var entriesDesc = metrics.NewDesc(namespace+"_memory_entries",
	"Entries of each bounded in-memory structure kept per object, plan, process or event (docs/terraform-workflow.md#memory).",
	[]string{"structure"}, nil, metrics.ALPHA, "")

type entries struct {
	metrics.BaseStableCollector
	mu      sync.Mutex
	sources map[string]func() map[string]int
}

var sizes = &entries{sources: map[string]func() map[string]int{}}

var registerEntries sync.Once

// Track reports the sizes of source's structures, by structure, as sizes
// tells them. The latest call for a source wins: one controller per
// process (a test making another replaces the last).
func Track(source string, sizesOf func() map[string]int) {
	registerEntries.Do(func() { legacyregistry.CustomMustRegister(sizes) })
	sizes.mu.Lock()
	defer sizes.mu.Unlock()
	sizes.sources[source] = sizesOf
}

// Entries are the sizes tracked now, by structure (for tests and the soak).
func Entries() map[string]int {
	sizes.mu.Lock()
	fns := slices.Collect(maps.Values(sizes.sources))
	sizes.mu.Unlock()
	out := map[string]int{}
	for _, f := range fns {
		maps.Copy(out, f())
	}
	return out
}

func (e *entries) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- entriesDesc }

func (e *entries) CollectWithStability(ch chan<- metrics.Metric) {
	got := Entries()
	for _, k := range slices.Sorted(maps.Keys(got)) {
		ch <- metrics.NewLazyConstMetric(entriesDesc, metrics.GaugeValue, float64(got[k]), k)
	}
}
