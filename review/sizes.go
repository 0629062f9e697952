package review

// Sizes are the entries of the board's in-memory structures, each bounded
// (docs/terraform-workflow.md#memory): the one-time messages remembered
// (saidSize), the workspaces by phase (live ones: a removal forgets its
// workspace), the digests of what was said of each group's members
// (groups that exist), the records a start's List still answers for (for
// warmFor), and the secret values scrubbed from events and the audit log
// (two generations per source).
func (b *Board) Sizes() map[string]int {
	out := map[string]int{
		"review_said":             b.said.Len(),
		"review_redacted_values":  b.redactor.secrets.Len(),
		"review_workspace_phases": b.phases.len(),
		"review_group_reports":    b.members.len(),
		"review_warm_records":     b.warm.len(),
	}
	if b.audit != nil {
		out["audit_redacted_values"] = b.audit.Redacted()
	}
	return out
}
