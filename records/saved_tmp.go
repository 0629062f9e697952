package records

import "context"

// SavedPlan is a placeholder until saved plans are stored (records branch).
func (s *Store) SavedPlan(ctx context.Context, workspace, planID string) ([]byte, error) {
	return nil, ErrNotFound
}
