package records

import "context"

// SetChunkBudget makes tests spill into chunks without megabytes of data.
func SetChunkBudget(s *Store, bytes int) { s.budget = max(bytes, minChunkBudget) }

// FailIndexWrites makes s's writes of workspace's index ConfigMap fail
// with err, as if the process died just before its commit.
func FailIndexWrites(s *Store, workspace string, err error) (restore func()) {
	orig := s.cms
	s.cms = failIndex{orig, IndexName(workspace), err}
	return func() { s.cms = orig }
}

type failIndex struct {
	kindAPI
	name string
	err  error
}

func (f failIndex) create(ctx context.Context, o *obj) (*obj, error) {
	if o.name == f.name {
		return nil, f.err
	}
	return f.kindAPI.create(ctx, o)
}

func (f failIndex) update(ctx context.Context, o *obj) (*obj, error) {
	if o.name == f.name {
		return nil, f.err
	}
	return f.kindAPI.update(ctx, o)
}
