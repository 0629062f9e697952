package ccm

import (
	"github.com/example/cloud-provider-example/internal/ccmmetrics"
)

// The sizes of the controller's in-memory structures kept per object,
// plan, process or event, each bounded (docs/terraform-workflow.md#memory),
// on /metrics as example_ccm_memory_entries{structure}.

func trackMemory(c *Cloud) {
	ccmmetrics.Track("engine", c.engine.Sizes)
	ccmmetrics.Track("review", c.board.Sizes)
	ccmmetrics.Track("ccm", c.lbs.Sizes)
	ccmmetrics.Track("instances", func() map[string]int {
		return map[string]int{"metadata_cache": c.instances.cache.size()}
	})
}
