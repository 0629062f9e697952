package records

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// ErrNotFound: no such plan text.
var ErrNotFound = errors.New("not found")

// readAttempts bounds Get's retries when commits keep overtaking it.
const readAttempts = 5

// Store keeps records in a namespace (see the package documentation and
// chunks.go for the layout). It is safe for concurrent use, also by
// several processes (a leader handing over), and Updates of one
// workspace from one Store queue instead of racing.
type Store struct {
	cms     kindAPI
	secrets kindAPI
	keep    int
	budget  int
	now     func() time.Time
	locks   [64]sync.Mutex
}

// NewStore keeps records in namespace, at most keep plans each (0: 10).
func NewStore(client kubernetes.Interface, namespace string, keep int) *Store {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return &Store{
		cms:     configMaps{client.CoreV1().ConfigMaps(namespace)},
		secrets: secrets{client.CoreV1().Secrets(namespace)},
		keep:    keep,
		budget:  DefaultChunkBudget,
		now:     time.Now,
	}
}

func (s *Store) lock(ws string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(ws))
	return &s.locks[h.Sum32()%uint32(len(s.locks))]
}

// Get returns the record of workspace, its plans without Text, or nil and
// no error when there is none.
func (s *Store) Get(ctx context.Context, workspace string) (*Record, error) {
	if err := validWorkspace(workspace); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		r, err := s.get(ctx, workspace)
		if !errors.Is(err, errMissingPiece) || attempt == readAttempts {
			return r, err
		}
		// A newer commit collected what the index read refers to: read
		// the newer index.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt) * 10 * time.Millisecond):
		}
	}
}

func (s *Store) get(ctx context.Context, ws string) (*Record, error) {
	o, err := s.cms.get(ctx, objectName(ws, 0))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("records: get %s: %w", ws, err)
	}
	if chunkOf(o, ws) != 0 {
		return nil, fmt.Errorf("records: ConfigMap %s is not the record of workspace %s", o.name, ws)
	}
	ix, err := parseIndex(o)
	if err != nil {
		return nil, err
	}
	fetched := map[int]map[string][]byte{}
	return ix.decode(func(n int) (map[string][]byte, error) {
		if d, ok := fetched[n]; ok {
			return d, nil
		}
		c, err := s.cms.get(ctx, objectName(ws, n))
		if apierrors.IsNotFound(err) || (err == nil && chunkOf(c, ws) != n) {
			return nil, errMissingPiece
		}
		if err != nil {
			return nil, fmt.Errorf("records: get %s: %w", ws, err)
		}
		fetched[n] = c.data
		return c.data, nil
	})
}

// PlanText returns the text of a plan of workspace; errors.Is(err,
// ErrNotFound) when the record does not keep it.
func (s *Store) PlanText(ctx context.Context, workspace, planID string) (string, error) {
	if err := validWorkspace(workspace); err != nil {
		return "", err
	}
	key, err := textKey(planID)
	if err != nil {
		return "", err
	}
	// Most records have one Secret: try it before listing.
	o, err := s.secrets.get(ctx, objectName(workspace, 0))
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, err)
	}
	if err == nil && chunkOf(o, workspace) == 0 {
		if gz, ok := o.data[key]; ok {
			return gunzipText(gz)
		}
	}
	objs, err := s.secrets.list(ctx, workspaceSelector(workspace), false)
	if err != nil {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, err)
	}
	var datas []map[string][]byte
	for _, o := range objs {
		if chunkOf(o, workspace) >= 0 {
			datas = append(datas, o.data)
		}
	}
	gz, ok := joinText(key, datas)
	if !ok {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, ErrNotFound)
	}
	text, err := gunzipText(gz)
	if err != nil {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, err)
	}
	return text, nil
}

// List returns every record in the namespace, sorted by object.
func (s *Store) List(ctx context.Context) ([]*Record, error) {
	objs, err := s.cms.list(ctx, allSelector, false)
	if err != nil {
		return nil, fmt.Errorf("records: list: %w", err)
	}
	// One List is one snapshot: an index and its chunks agree.
	byName := map[string]*obj{}
	for _, o := range objs {
		byName[o.name] = o
	}
	var out []*Record
	for _, o := range objs {
		ws := o.annotations[AnnotationWorkspace]
		if validWorkspace(ws) != nil || chunkOf(o, ws) != 0 {
			continue
		}
		ix, err := parseIndex(o)
		if err != nil {
			return nil, err
		}
		r, err := ix.decode(func(n int) (map[string][]byte, error) {
			c := byName[objectName(ws, n)]
			if c == nil || chunkOf(c, ws) != n {
				return nil, errMissingPiece
			}
			return c.data, nil
		})
		if errors.Is(err, errMissingPiece) {
			// Only if someone edited the objects: read it on its own.
			r, err = s.Get(ctx, ws)
		}
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Record) int {
		return cmp.Or(
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Workspace, b.Workspace))
	})
	return out, nil
}

// Delete removes the record of workspace: the index first, so readers
// see no record rather than part of one, then its chunks and Secrets.
func (s *Store) Delete(ctx context.Context, workspace string) error {
	if err := validWorkspace(workspace); err != nil {
		return err
	}
	mu := s.lock(workspace)
	mu.Lock()
	defer mu.Unlock()
	for _, api := range []kindAPI{s.cms, s.secrets} {
		objs, err := api.list(ctx, workspaceSelector(workspace), false)
		if err != nil {
			return fmt.Errorf("records: delete %s: %w", workspace, err)
		}
		// The index sorts first (chunk 0).
		slices.SortFunc(objs, func(a, b *obj) int { return chunkOf(a, workspace) - chunkOf(b, workspace) })
		for _, o := range objs {
			if chunkOf(o, workspace) < 0 {
				continue
			}
			if err := api.delete(ctx, o.name, ""); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("records: delete %s: %w", o.name, err)
			}
		}
	}
	return nil
}
