package gatewaycontroller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// toldOnce is what each Gateway (by uid) was last told of one matter,
// so that it is told once per change, not at every look; the workers of
// different Gateways share it.
type toldOnce struct {
	mu sync.Mutex
	m  map[types.UID]string
}

// tell says whether v is news to Gateway uid, and keeps it: "" is
// nothing to tell, and forgets what was.
func (t *toldOnce) tell(uid types.UID, v string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v == "" {
		delete(t.m, uid)
		return false
	}
	if said, ok := t.m[uid]; ok && said == v {
		return false
	}
	if t.m == nil {
		t.m = map[types.UID]string{}
	}
	t.m[uid] = v
	return true
}

// forget drops what Gateway uid was told: it is gone.
func (t *toldOnce) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, uid)
}
