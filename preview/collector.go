package preview

import "sync"

// Collector keeps the warnings the API server returns to a client (a
// client-go rest.WarningHandler): where a preview arrives.
type Collector struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (c *Collector) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, text)
}

// Take returns the warnings since the last Take.
func (c *Collector) Take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.list
	c.list = nil
	return out
}
