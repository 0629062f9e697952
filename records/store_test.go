package records_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/records"
)

// ns is the controller's namespace, where records live.
const ns = "example-ccm"

// TestStore shares one control plane between its (parallel) subtests;
// each uses its own workspaces.
func TestStore(t *testing.T) {
	c := testcluster.Start(t)
	if _, err := c.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*testing.T, kubernetes.Interface){
		"lifecycle":      testLifecycle,
		"plan text":      testPlanText,
		"concurrent":     testConcurrent,
		"large record":   testLarge,
		"consistent":     testConsistentReads,
		"list":           testList,
		"garbage":        testGarbage,
		"invalid inputs": testInvalid,
		"applied files":  testAppliedFiles,
		"saved plans":    testSaved,
		"large saved":    testLargeSaved,
		"legacy texts":   testLegacyTexts,
		"inert texts":    testInert,
		"reviewer":       func(t *testing.T, client kubernetes.Interface) { testReviewer(t, c, client) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, unthrottled(t, c.Admin))
		})
	}
}

// unthrottled is a client without client-go's rate limit, which the
// subtests would otherwise share and wait for.
func unthrottled(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	return unthrottledFrom(t, cfg)
}

func unthrottledFrom(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS = -1
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// objects are a workspace's record ConfigMaps (index and chunks), its
// plan text ConfigMaps and its Secrets.
func objects(t *testing.T, client kubernetes.Interface, ws string) (cms, texts []corev1.ConfigMap, secrets []corev1.Secret) {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: records.LabelWorkspace + "=" + ws}
	all, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range all.Items {
		if cm.Labels[records.LabelPart] == records.PartText {
			texts = append(texts, cm)
		} else {
			cms = append(cms, cm)
		}
	}
	sl, err := client.CoreV1().Secrets(ns).List(t.Context(), sel)
	if err != nil {
		t.Fatal(err)
	}
	return cms, texts, sl.Items
}

// keys are the data and binaryData keys of cm, sorted.
func keys(cm corev1.ConfigMap) []string {
	out := slices.Collect(maps.Keys(cm.Data))
	out = append(out, slices.Collect(maps.Keys(cm.BinaryData))...)
	slices.Sort(out)
	return out
}

func mustUpdate(t *testing.T, s *records.Store, ws string, fn func(*records.Record) error) *records.Record {
	t.Helper()
	r, err := s.Update(t.Context(), ws, fn)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(r *records.Record) []string {
	var out []string
	for _, p := range r.Plans {
		out = append(out, p.ID)
	}
	return out
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func testLifecycle(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 3)
	ws := "prod-eu-service-media-rtp-relay-1a2b3c4d"
	if r, err := s.Get(ctx, ws); r != nil || err != nil {
		t.Fatalf("Get of a missing record = %v, %v; want nil, nil", r, err)
	}

	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	got := mustUpdate(t, s, ws, func(r *records.Record) error {
		r.Files = map[string]string{"main.tf": "# v1\n"}
		return prepend(newPlan("plan-000000000001", "text 1", at))(r)
	})
	if got.Plans[0].Text != "" || got.Workspace != ws || got.UpdatedAt.IsZero() {
		t.Errorf("Update returned %+v; want the stored record, plans without text", got)
	}
	r, err := s.Get(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if r.Object.Name != "rtp-relay" || r.Policy != "auto" || r.Files["main.tf"] != "# v1\n" || len(r.Plans) != 1 ||
		r.Plans[0].Text != "" || !r.Plans[0].PlannedAt.Equal(at) || r.Plans[0].Summary.Add != 1 {
		t.Errorf("Get = %+v", r)
	}

	cms, texts, secrets := objects(t, client, ws)
	if len(cms) != 1 || len(texts) != 1 || len(secrets) != 0 {
		t.Fatalf("%d ConfigMaps, %d text ConfigMaps, %d Secrets; want 1, 1 and none", len(cms), len(texts), len(secrets))
	}
	cm := cms[0]
	if cm.Name != "ccm-plans-"+ws || cm.Name != records.IndexName(ws) || cm.Labels[records.LabelManagedBy] != records.ManagedBy ||
		cm.Annotations[records.AnnotationObjectKind] != "Service" || cm.Annotations[records.AnnotationObjectNamespace] != "media" ||
		cm.Annotations[records.AnnotationObjectName] != "rtp-relay" {
		t.Errorf("ConfigMap meta = %s %v %v", cm.Name, cm.Labels, cm.Annotations)
	}
	if cm.Data["main.tf"] != "# v1\n" || !strings.Contains(cm.Data[records.RecordKey], `"plan-000000000001"`) ||
		strings.Contains(cm.Data[records.RecordKey], "text 1") || strings.Contains(cm.Data[records.RecordKey], "# v1") {
		t.Errorf("ConfigMap data = %v", cm.Data)
	}
	// The text is in a ConfigMap reviewers may read, gzipped.
	if tc := texts[0]; tc.Name != records.TextName(ws) || tc.Name != "ccm-plans-"+ws+"-text" ||
		tc.Labels[records.LabelWorkspace] != ws || tc.Annotations[records.AnnotationObjectName] != "rtp-relay" ||
		gunzip(t, tc.BinaryData["plan-000000000001.txt.gz"]) != "text 1" {
		t.Errorf("text ConfigMap = %s %v %v %v", tc.Name, tc.Labels, tc.Annotations, keys(tc))
	}

	// Trim to keep 3, newest first; dropped texts go.
	for i := 2; i <= 5; i++ {
		mustUpdate(t, s, ws, prepend(newPlan(fmt.Sprintf("plan-00000000000%d", i), fmt.Sprintf("text %d", i), at.Add(time.Duration(i)*time.Minute))))
	}
	r, _ = s.Get(ctx, ws)
	if want := []string{"plan-000000000005", "plan-000000000004", "plan-000000000003"}; !slices.Equal(ids(r), want) {
		t.Errorf("plans = %v; want %v", ids(r), want)
	}
	_, texts, _ = objects(t, client, ws)
	if want := []string{"plan-000000000003.txt.gz", "plan-000000000004.txt.gz", "plan-000000000005.txt.gz"}; len(texts) != 1 || !slices.Equal(keys(texts[0]), want) {
		t.Errorf("text ConfigMaps %v; want one with keys %v", texts, want)
	}
	if _, err := s.PlanText(ctx, ws, "plan-000000000001"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("PlanText of a trimmed plan: %v; want ErrNotFound", err)
	}

	// An Update that changes nothing writes nothing.
	cms, _, _ = objects(t, client, ws)
	same := mustUpdate(t, s, ws, func(r *records.Record) error { r.Policy = "auto"; return nil })
	after, _, _ := objects(t, client, ws)
	if after[0].ResourceVersion != cms[0].ResourceVersion || !same.UpdatedAt.Equal(r.UpdatedAt) {
		t.Errorf("no-op Update wrote: resourceVersion %s -> %s", cms[0].ResourceVersion, after[0].ResourceVersion)
	}
	// fn's error aborts.
	boom := errors.New("boom")
	if _, err := s.Update(ctx, ws, func(r *records.Record) error { r.Policy = "x"; return boom }); !errors.Is(err, boom) {
		t.Errorf("Update = %v; want fn's error", err)
	}

	if err := s.Delete(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if cms, texts, secrets := objects(t, client, ws); len(cms)+len(texts)+len(secrets) != 0 {
		t.Errorf("after Delete: %d ConfigMaps, %d text ConfigMaps, %d Secrets", len(cms), len(texts), len(secrets))
	}
	if r, err := s.Get(ctx, ws); r != nil || err != nil {
		t.Errorf("Get after Delete = %v, %v", r, err)
	}
	if err := s.Delete(ctx, ws); err != nil {
		t.Errorf("Delete of a missing record: %v", err)
	}
}

func testPlanText(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	ws := "plantext-5e6f7a8b"
	svc, nodes := bigService(200, 50)
	// Kept as it is but for its escape sequences, stored inert (testInert).
	text := planText(svc, nodes, 0) + "Ünïcödé ✓ \x1b[1mbold\x1b[0m\n"
	mustUpdate(t, s, ws, prepend(newPlan("plan-a1b2c3d4e5f6", text, time.Now())))
	text = planText(svc, nodes, 0) + `Ünïcödé ✓ \x1b[1mbold\x1b[0m` + "\n"
	got, err := s.PlanText(ctx, ws, "plan-a1b2c3d4e5f6")
	if err != nil || got != text {
		t.Fatalf("PlanText = %d bytes, %v; want the %d stored", len(got), err, len(text))
	}
	// A later Update without Text keeps it; with a new Text replaces it.
	mustUpdate(t, s, ws, func(r *records.Record) error { r.Plans[0].Outcome = records.Superseded; return nil })
	if got, _ := s.PlanText(ctx, ws, "plan-a1b2c3d4e5f6"); got != text {
		t.Error("an Update without Text lost the stored text")
	}
	mustUpdate(t, s, ws, func(r *records.Record) error { r.Plans[0].Text = "shorter"; return nil })
	if got, _ := s.PlanText(ctx, ws, "plan-a1b2c3d4e5f6"); got != "shorter" {
		t.Errorf("PlanText = %q; want the replaced text", got)
	}
	if _, err := s.PlanText(ctx, ws, "plan-000000000000"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("PlanText of an unknown plan: %v", err)
	}

	// A text bigger than an object is cut into pieces, and a rewrite
	// leaves none behind.
	small := records.NewStore(client, ns, 0)
	records.SetChunkBudget(small, 1<<10)
	noise := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 3000)
	_, _ = noise.Read(buf) // never fails
	text = fmt.Sprintf("%x", buf)
	mustUpdate(t, small, "plantext-split", prepend(newPlan("plan-0123456789ab", text, time.Now())))
	if got, err := small.PlanText(ctx, "plantext-split", "plan-0123456789ab"); err != nil || got != text {
		t.Errorf("split PlanText = %d bytes, %v; want %d", len(got), err, len(text))
	}
	_, texts, _ := objects(t, client, "plantext-split")
	t.Logf("a %d-byte text in %d ConfigMaps of 1 KiB", len(text), len(texts))
	if len(texts) < 3 {
		t.Errorf("%d text ConfigMaps; want the text cut into several", len(texts))
	}
	mustUpdate(t, small, "plantext-split", func(r *records.Record) error { r.Plans[0].Text = "whole"; return nil })
	_, texts, _ = objects(t, client, "plantext-split")
	if got, err := small.PlanText(ctx, "plantext-split", "plan-0123456789ab"); err != nil || got != "whole" || len(texts) != 1 || len(keys(texts[0])) != 1 {
		t.Errorf("rewritten PlanText = %q, %v, in %d ConfigMaps", got, err, len(texts))
	}
	if _, err := s.PlanText(ctx, "no-such-record", "plan-000000000000"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("PlanText of an unknown record: %v", err)
	}
}

// testConcurrent: ten goroutines appending plans through one Store lose
// none, nor do writers with a Store each (processes during a leader
// handover), which conflict and retry.
func testConcurrent(t *testing.T, client kubernetes.Interface) {
	for _, c := range []struct {
		stores, writers int
	}{{1, 10}, {10, 10}} {
		ws := fmt.Sprintf("concurrent-%d-stores", c.stores)
		var stores []*records.Store
		for range c.stores {
			stores = append(stores, records.NewStore(client, ns, 100))
		}
		var updates errgroup.Group
		start := time.Now()
		for g := range c.writers {
			s := stores[g%c.stores]
			updates.Go(func() error {
				for i := range 5 {
					id := fmt.Sprintf("plan-g%d-%d", g, i)
					p := newPlan(id, "text of "+id, time.Now())
					p.Outcome, p.DecidedAt, p.Saved = records.AwaitingApproval, nil, []byte("saved "+id)
					if _, err := s.Update(t.Context(), ws, prepend(p)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		err := updates.Wait()
		t.Logf("%d stores, %d writers: %d updates in %s", c.stores, c.writers, c.writers*5, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%s: %v", ws, err)
		}
		r, err := stores[0].Get(t.Context(), ws)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(r)
		slices.Sort(got)
		if len(slices.Compact(got)) != c.writers*5 {
			t.Errorf("%s: %d distinct plans; want %d", ws, len(got), c.writers*5)
		}
		for _, id := range got {
			if text, err := stores[0].PlanText(t.Context(), ws, id); err != nil || text != "text of "+id {
				t.Errorf("%s: PlanText(%s) = %q, %v", ws, id, text, err)
			}
			if saved, err := stores[0].SavedPlan(t.Context(), ws, id); err != nil || string(saved) != "saved "+id {
				t.Errorf("%s: SavedPlan(%s) = %q, %v", ws, id, saved, err)
			}
		}
	}
}

// testInvalid: inputs that cannot name objects or keys are refused.
func testInvalid(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	for _, ws := range []string{"", "Upper", "-dash", "dash-", strings.Repeat("a", 81), "a_b"} {
		if _, err := s.Get(ctx, ws); err == nil {
			t.Errorf("Get(%q) succeeded", ws)
		}
	}
	if _, err := s.Update(ctx, "invalid-1", prepend(newPlan("plan/../x", "t", time.Now()))); err == nil {
		t.Error("a plan id that is no Secret key was accepted")
	}
	if _, err := s.Update(ctx, "invalid-2", func(r *records.Record) error {
		r.Files = map[string]string{"record.json": "{}"}
		return nil
	}); err == nil {
		t.Error("a file named record.json was accepted")
	}
	if _, err := s.Update(ctx, "invalid-3", func(r *records.Record) error {
		r.Files = map[string]string{records.AppliedPrefix + "main.tf": "x"}
		return nil
	}); err == nil {
		t.Error("a file named like an applied file was accepted")
	}
	// Workspace keys up to 80 characters: the label holds a hash.
	long := strings.Repeat("l", 70) + "-1a2b3c4d"
	mustUpdate(t, s, long, prepend(newPlan("plan-000000000001", "t", time.Now())))
	if r, err := s.Get(ctx, long); err != nil || r == nil || r.Workspace != long {
		t.Errorf("Get(long) = %v, %v", r, err)
	}
	if text, err := s.PlanText(ctx, long, "plan-000000000001"); err != nil || text != "t" {
		t.Errorf("PlanText(long) = %q, %v", text, err)
	}
	if err := s.Delete(ctx, long); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get(ctx, long); r != nil {
		t.Error("long record still there after Delete")
	}
}

// testAppliedFiles: the applied rendering is kept beside the current one,
// each read back as its own, also when it spills into a chunk.
func testAppliedFiles(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	s := records.NewStore(client, ns, 0)
	ws := "prod-eu-service-media-applied-1a2b3c4d"
	big := strings.Repeat("# applied\n", 100_000) // over one object's budget
	mustUpdate(t, s, ws, func(r *records.Record) error {
		r.Files = map[string]string{"main.tf": "# v2\n"}
		r.AppliedFiles = map[string]string{"main.tf": big}
		return prepend(newPlan("plan-000000000001", "t", time.Now()))(r)
	})
	r, err := s.Get(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 1 || r.Files["main.tf"] != "# v2\n" || len(r.AppliedFiles) != 1 || r.AppliedFiles["main.tf"] != big {
		t.Errorf("files %d %q, applied %d (%d bytes); want the current and the applied main.tf apart", len(r.Files), r.Files["main.tf"], len(r.AppliedFiles), len(r.AppliedFiles["main.tf"]))
	}
	all, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		if l.Workspace == ws && l.AppliedFiles["main.tf"] != big {
			t.Error("List lost the applied files")
		}
	}
	mustUpdate(t, s, ws, func(r *records.Record) error { r.AppliedFiles = nil; return nil })
	if r, err = s.Get(ctx, ws); err != nil || len(r.AppliedFiles) != 0 || r.Files["main.tf"] != "# v2\n" {
		t.Errorf("after dropping the applied files: %v, applied %d, files %v", err, len(r.AppliedFiles), r.Files)
	}
}
