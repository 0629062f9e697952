package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/runner"
)

// memo remembers, per object, which rendered module its last inputs gave.
// Rendering is deterministic, so equal inputs mean an equal module: an
// unchanged Service is answered from the runner's record without
// rendering (hclwrite formatting dominates the cost of a no-op).
type memo struct {
	mu sync.Mutex
	m  map[string]memoEntry // object key -> entry
}

type memoEntry struct {
	inputs  string
	module  string
	workKey string
	// job is the rendered job, for drift checks.
	job runner.Job
}

func (c *memo) get(obj, inputs string) (memoEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[obj]
	return e, ok && e.inputs == inputs
}

func (c *memo) put(obj string, e memoEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]memoEntry{}
	}
	c.m[obj] = e
}

func (c *memo) forget(obj string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, obj)
}

// serviceInputs digests everything of a Service and its nodes that the
// renderer reads; node order does not matter.
func serviceInputs(svc *corev1.Service, nodes []*corev1.Node) string {
	type nodeIn struct {
		Name       string            `json:"n"`
		ProviderID string            `json:"p"`
		Labels     map[string]string `json:"l,omitempty"`
	}
	ns := make([]nodeIn, 0, len(nodes))
	for _, n := range nodes {
		ns = append(ns, nodeIn{n.Name, n.Spec.ProviderID, n.Labels})
	}
	slices.SortFunc(ns, func(a, b nodeIn) int { return strings.Compare(a.Name+"\x00"+a.ProviderID, b.Name+"\x00"+b.ProviderID) })
	data, err := json.Marshal(struct {
		Name, Namespace, UID string
		Annotations          map[string]string
		Spec                 corev1.ServiceSpec
		Nodes                []nodeIn
	}{svc.Name, svc.Namespace, string(svc.UID), svc.Annotations, svc.Spec, ns})
	if err != nil {
		return "" // never matches: render
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
