package review

// Sizes are the entries of the board's in-memory structures, each bounded
// (docs/terraform-workflow.md#memory): the one-time messages remembered
// (saidSize), the workspaces by phase (live ones: a removal forgets its
// workspace), the digests of what was said of each group's members
// (groups that exist), the records a start's List still answers for (for
// warmFor), and the secret values scrubbed from events and the audit log
// (two generations per source).
func (b *Board) Sizes() map[string]int {
	out := map[string]int{"review_said": b.said.Len(), "review_redacted_values": b.redactor.secrets.Len()}
	b.phases.mu.Lock()
	out["review_workspace_phases"] = len(b.phases.m)
	b.phases.mu.Unlock()
	b.members.mu.Lock()
	out["review_group_reports"] = len(b.members.reported)
	b.members.mu.Unlock()
	b.warm.mu.Lock()
	out["review_warm_records"] = len(b.warm.byWS)
	b.warm.mu.Unlock()
	if b.audit != nil {
		out["audit_redacted_values"] = b.audit.Redacted()
	}
	return out
}
