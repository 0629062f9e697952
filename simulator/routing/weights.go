package routing

import (
	"strconv"

	"github.com/example/cloud-provider-example/exampleapi"
)

// WRR is smooth weighted round robin over one set of weights (nginx's):
// 100 picks at 80/20 are exactly 80 and 20, and interleaved. The zero
// value is ready; it is not safe for concurrent use.
type WRR struct {
	current []int
}

// Next is the index of weights picked next. The weights must keep their
// length between calls (a new set of weights takes a new WRR).
func (w *WRR) Next(weights []int) int {
	if len(w.current) != len(weights) {
		w.current = make([]int, len(weights))
	}
	total, best := 0, 0
	for i, wt := range weights {
		total += wt
		w.current[i] += wt
		if w.current[i] > w.current[best] {
			best = i
		}
	}
	w.current[best] -= total
	return best
}

// Pick is the backend of bs picked next, by their weights.
func (w *WRR) Pick(bs []exampleapi.RuleBackend) exampleapi.RuleBackend {
	weights := make([]int, len(bs))
	for i, b := range bs {
		weights[i] = b.Weight
	}
	return bs[w.Next(weights)]
}

// Share deals n requests over backends by weight, by "pool:port".
func Share(backends []exampleapi.RuleBackend, n int) map[string]int {
	var w WRR
	out := map[string]int{}
	for range n {
		b := w.Pick(backends)
		out[b.TargetPoolID+":"+strconv.Itoa(b.Port)]++
	}
	return out
}
