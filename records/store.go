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

	"github.com/example/cloud-provider-example/internal/sleep"
)

// ErrNotFound: no such plan text or saved plan.
var ErrNotFound = errors.New("not found")

// ErrSavedPlanMismatch: the saved plan's bytes are not those the record
// names by their hash (the Secret was edited): never apply them.
var ErrSavedPlanMismatch = errors.New("saved plan does not match its recorded sha256")

// readAttempts bounds Get's retries when commits keep overtaking it:
// waits of 10, 20, … 90 ms, 450 ms in all. Five (100 ms) were overtaken
// by fifteen commits back to back on a loaded machine (TestStore's
// consistent reads, once in about thirty runs).
const readAttempts = 10

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
		cms:     configMaps(client.CoreV1().ConfigMaps(namespace)),
		secrets: secrets(client.CoreV1().Secrets(namespace)),
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
		if !sleep.For(ctx, time.Duration(attempt)*10*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
}

func (s *Store) get(ctx context.Context, ws string) (*Record, error) {
	o, err := s.cms.get(ctx, IndexName(ws))
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
		c, err := s.cms.get(ctx, recordSeries.name(ws, n))
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
// ErrNotFound) when the record does not keep it. It reads ConfigMaps only.
func (s *Store) PlanText(ctx context.Context, workspace, planID string) (string, error) {
	if err := validWorkspace(workspace); err != nil {
		return "", err
	}
	key, err := textBlob.key(planID)
	if err != nil {
		return "", err
	}
	gz, err := s.readBlob(ctx, s.cms, textSeries, textBlob, workspace, key)
	if err != nil {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, err)
	}
	text, err := gunzipText(gz)
	if err != nil {
		return "", fmt.Errorf("records: plan text %s of %s: %w", planID, workspace, err)
	}
	return text, nil
}

// SavedPlan returns the saved plan file of a plan of workspace, checked
// against the SHA-256 the record holds; errors.Is(err, ErrNotFound) when
// the record keeps none (the plan is unknown or decided, or none was
// given), errors.Is(err, ErrSavedPlanMismatch) when the bytes are not the
// recorded ones. It reads the record's Secrets.
func (s *Store) SavedPlan(ctx context.Context, workspace, planID string) ([]byte, error) {
	if err := validWorkspace(workspace); err != nil {
		return nil, err
	}
	key, err := savedBlob.key(planID)
	if err != nil {
		return nil, err
	}
	r, err := s.Get(ctx, workspace)
	if err != nil {
		return nil, err
	}
	var p *Plan
	if r != nil {
		p = r.Find(planID)
	}
	if p == nil || p.SavedSHA256 == "" || !keepsSaved(p.Outcome) {
		return nil, fmt.Errorf("records: saved plan %s of %s: %w", planID, workspace, ErrNotFound)
	}
	b, err := s.readBlob(ctx, s.secrets, recordSeries, savedBlob, workspace, key)
	if err != nil {
		return nil, fmt.Errorf("records: saved plan %s of %s: %w", planID, workspace, err)
	}
	if got := sha256Hex(b); got != p.SavedSHA256 {
		return nil, fmt.Errorf("records: saved plan %s of %s: sha256 %s, the record says %s: %w", planID, workspace, got, p.SavedSHA256, ErrSavedPlanMismatch)
	}
	return b, nil
}

// readBlob reads blob key from workspace's objects of series sr: from
// object 0 when it holds it whole (most records), else from a List.
func (s *Store) readBlob(ctx context.Context, api kindAPI, sr series, b blob, ws, key string) ([]byte, error) {
	o, err := api.get(ctx, sr.name(ws, 0))
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	if err == nil && sr.number(o, ws) == 0 {
		if v, ok := o.data[key]; ok {
			return v, nil
		}
	}
	objs, err := api.list(ctx, workspaceSelector(ws), false)
	if err != nil {
		return nil, err
	}
	var datas []map[string][]byte
	for _, o := range objs {
		if sr.number(o, ws) >= 0 {
			datas = append(datas, o.data)
		}
	}
	v, ok := b.join(key, datas)
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

// List returns every record in the namespace, sorted by object.
func (s *Store) List(ctx context.Context) ([]*Record, error) {
	objs, err := s.cms.list(ctx, recordsSelector, false)
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
			c := byName[recordSeries.name(ws, n)]
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
// see no record rather than part of one, then its other ConfigMaps and
// its Secrets.
func (s *Store) Delete(ctx context.Context, workspace string) error {
	if err := validWorkspace(workspace); err != nil {
		return err
	}
	mu := s.lock(workspace)
	mu.Lock()
	defer mu.Unlock()
	type del struct {
		api  kindAPI
		kind string
		o    *obj
	}
	var index, rest []del
	for _, k := range []struct {
		api  kindAPI
		kind string
	}{{s.cms, kindConfigMap}, {s.secrets, kindSecret}} {
		objs, err := k.api.list(ctx, workspaceSelector(workspace), false)
		if err != nil {
			return fmt.Errorf("records: delete %s: %w", workspace, err)
		}
		for _, o := range objs {
			switch {
			case k.kind == kindConfigMap && chunkOf(o, workspace) == 0:
				index = append(index, del{k.api, k.kind, o})
			case recordSeries.number(o, workspace) >= 0 || textSeries.number(o, workspace) >= 0:
				rest = append(rest, del{k.api, k.kind, o})
			}
		}
	}
	for _, d := range append(index, rest...) {
		if err := d.api.delete(ctx, d.o.name, ""); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("records: delete %s %s: %w", d.kind, d.o.name, err)
		}
	}
	return nil
}
