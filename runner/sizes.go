package runner

// Sizes are the entries of the runner's in-memory structures, each
// bounded (docs/terraform-workflow.md#memory): its workspaces and preview
// directories (those of live objects, previews unused for previewIdle
// removed), its tombstones (the deletions of the last tombstoneAge), the
// locks of others it is timing, and the secret values scrubbed process-
// wide (those of live workspaces).
func (r *Runner) Sizes() map[string]int {
	r.mu.Lock()
	out := map[string]int{
		"runner_workspaces": len(r.ws),
		"runner_previews":   len(r.previews),
		"runner_tombstones": len(r.tombstones),
	}
	r.mu.Unlock()
	r.lockMu.Lock()
	out["runner_lock_sightings"] = len(r.lockSeen)
	r.lockMu.Unlock()
	out["runner_redacted_values"] = known.Len()
	return out
}
