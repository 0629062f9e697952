package records

// IndexName is a placeholder until the records branch exports it.
func IndexName(workspace string) string { return objectName(workspace, 0) }
