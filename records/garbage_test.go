package records_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/records"
)

// leftover makes a chunk as a crashed writer leaves it: chunk n of the
// record's objects, or with text of its plan text ConfigMaps.
func leftover(ws string, n int, text bool, key string, tag int64) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:      fmt.Sprintf("ccm-plans-%s-%d", ws, n),
		Namespace: ns,
		Labels: map[string]string{
			records.LabelManagedBy: records.ManagedBy, records.LabelWorkspace: ws, records.LabelChunk: fmt.Sprint(n),
		},
		Annotations: map[string]string{
			records.AnnotationWorkspace: ws, records.AnnotationAdded: fmt.Sprintf(`{%q:%d}`, key, tag),
		},
	}
	if text {
		m.Name = fmt.Sprintf("%s-%d", records.TextName(ws), n)
		m.Labels[records.LabelPart] = records.PartText
	}
	return m
}

// unreferenced are the keys of ws's chunk ConfigMaps its index does not
// refer to.
func unreferenced(t *testing.T, client kubernetes.Interface, ws string) []string {
	t.Helper()
	cms, _, _ := objects(t, client, ws)
	refs := map[string]bool{}
	for _, cm := range cms {
		if cm.Labels[records.LabelChunk] != "" {
			continue
		}
		var spilled map[string][]struct{ Key string }
		if v := cm.Annotations[records.AnnotationSpilled]; v != "" {
			if err := json.Unmarshal([]byte(v), &spilled); err != nil {
				t.Fatal(err)
			}
		}
		for _, ps := range spilled {
			for _, p := range ps {
				refs[p.Key] = true
			}
		}
	}
	var out []string
	for _, cm := range cms {
		for k := range cm.Data {
			if cm.Labels[records.LabelChunk] != "" && !refs[k] {
				out = append(out, cm.Name+"/"+k)
			}
		}
	}
	return out
}

// testGarbage: a writer that dies before its commit leaves the record
// as it was, and what it wrote is collected by the next commit.
func testGarbage(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	ws := "garbage"
	s := records.NewStore(client, ns, 0)
	records.SetChunkBudget(s, 1<<10)
	mustUpdate(t, s, ws, func(r *records.Record) error {
		r.Files = map[string]string{"main.tf": strings.Repeat("# spills\n", 200)}
		return prepend(newPlan("plan-000000000001", "one", time.Now()))(r)
	})
	crashed := &corev1.ConfigMap{ObjectMeta: leftover(ws, 9, false, "main.tf.00000000deadbeef", 1), Data: map[string]string{"main.tf.00000000deadbeef": "old"}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, crashed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphanText := &corev1.ConfigMap{ObjectMeta: leftover(ws, 7, true, "plan-00000000ffff.txt.gz", 1000), BinaryData: map[string][]byte{"plan-00000000ffff.txt.gz": {0x1f, 0x8b}}}
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, orphanText, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphan := &corev1.Secret{ObjectMeta: leftover(ws, 7, false, "plan-00000000ffff.tfplan", 1000), Data: map[string][]byte{"plan-00000000ffff.tfplan": []byte("PK")}}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mustUpdate(t, s, ws, prepend(newPlan("plan-000000000002", "two", time.Now())))
	// The commit may have put new pieces into the crashed writer's chunk.
	if cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, crashed.Name, metav1.GetOptions{}); err == nil && cm.Data["main.tf.00000000deadbeef"] != "" {
		t.Error("a crashed writer's piece survived the next commit")
	}
	if _, err := client.CoreV1().Secrets(ns).Get(ctx, orphan.Name, metav1.GetOptions{}); err == nil {
		t.Error("a crashed writer's Secret survived the next commit")
	}
	if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, orphanText.Name, metav1.GetOptions{}); err == nil {
		t.Error("a crashed writer's text ConfigMap survived the next commit")
	}
	if text, err := s.PlanText(ctx, ws, "plan-000000000001"); err != nil || text != "one" {
		t.Errorf("PlanText = %q, %v", text, err)
	}

	// A writer dying before its commit leaves the record as it was.
	before, err := s.Get(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	cms, texts, _ := objects(t, client, ws)
	died := errors.New("died")
	restore := records.FailIndexWrites(s, ws, died)
	if _, err := s.Update(ctx, ws, func(r *records.Record) error {
		r.Files["main.tf"] = strings.Repeat("# new version\n", 200)
		return prepend(newPlan("plan-000000000003", "three", time.Now()))(r)
	}); !errors.Is(err, died) {
		t.Fatalf("Update = %v; want the injected failure", err)
	}
	restore()
	if after, err := s.Get(ctx, ws); err != nil || !reflect.DeepEqual(after, before) {
		t.Errorf("record after a failed commit = %+v, %v; want it unchanged", after, err)
	}
	if cms2, texts2, _ := objects(t, client, ws); len(cms2) <= len(cms) || len(texts2) < len(texts) {
		t.Errorf("the failed commit wrote no chunks first (%d -> %d ConfigMaps)", len(cms), len(cms2))
	}
	mustUpdate(t, s, ws, func(r *records.Record) error { r.Files["main.tf"] = "# small\n"; return nil })
	if extra := unreferenced(t, client, ws); len(extra) > 0 {
		t.Errorf("chunk keys left after the next commit: %v", extra)
	}
	if _, err := s.PlanText(ctx, ws, "plan-000000000003"); !errors.Is(err, records.ErrNotFound) {
		t.Errorf("the failed Update's text survived the next commit: %v", err)
	}

	// A Delete interrupted after the index: the next record collects the
	// rest, whatever generations it carried.
	if err := client.CoreV1().ConfigMaps(ns).Delete(ctx, "ccm-plans-"+ws, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, ws, func(r *records.Record) error { r.Policy = "manual"; return nil })
	cms, texts, secrets := objects(t, client, ws)
	if len(cms) != 1 || len(texts) != 0 || len(secrets) != 0 {
		t.Errorf("after recreating: %d ConfigMaps, %d text ConfigMaps, %d Secrets; want only the index", len(cms), len(texts), len(secrets))
	}
	if r, err := s.Get(ctx, ws); err != nil || r.Policy != "manual" || len(r.Plans) != 0 || len(r.Files) != 0 {
		t.Errorf("recreated record = %+v, %v", r, err)
	}
}
