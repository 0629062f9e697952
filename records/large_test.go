package records_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

const mib = 1 << 20

// sizes checks every object of ws against the 1 MiB limit and returns
// how many there are: record ConfigMaps, text ConfigMaps, Secrets.
func sizes(t *testing.T, client kubernetes.Interface, ws string) (cms, texts, secrets int) {
	t.Helper()
	cmList, textList, secretList := objects(t, client, ws)
	for _, cm := range append(slices.Clone(cmList), textList...) {
		payload := 0
		for k, v := range cm.Data {
			payload += len(k) + len(v)
		}
		for k, v := range cm.BinaryData {
			payload += len(k) + len(v)
		}
		t.Logf("ConfigMap %s: data %d bytes, object %d bytes (protobuf)", cm.Name, payload, cm.Size())
		if payload >= mib || cm.Size() >= mib {
			t.Errorf("ConfigMap %s is over 1 MiB", cm.Name)
		}
	}
	for _, s := range secretList {
		payload := 0
		for k, v := range s.Data {
			payload += len(k) + len(v)
		}
		t.Logf("Secret %s: data %d bytes, object %d bytes (protobuf)", s.Name, payload, s.Size())
		if payload >= mib || s.Size() >= mib {
			t.Errorf("Secret %s is over 1 MiB", s.Name)
		}
	}
	return len(cmList), len(textList), len(secretList)
}

// fill records keep plans of a Service with the most ports a load balancer
// may have (100) on 100 nodes.
func fill(t *testing.T, s *records.Store, ws string) (main string, texts map[string]string) {
	svc, nodes := bigService(100, 100)
	main = renderMain(t, svc, nodes)
	texts = map[string]string{}
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 12 {
		id := fmt.Sprintf("plan-%012x", 0xbeef00+i)
		texts[id] = planText(svc, nodes, i)
		p := newPlan(id, texts[id], at.Add(time.Duration(i)*time.Minute))
		mustUpdate(t, s, ws, func(r *records.Record) error {
			r.Files = map[string]string{"main.tf": main}
			return prepend(p)(r)
		})
	}
	return main, texts
}

func testLarge(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	whole := records.NewStore(client, ns, 10)
	main, texts := fill(t, whole, "large-whole")
	t.Logf("main.tf %d bytes; plan text %d bytes", len(main), len(texts["plan-000000beef00"]))
	if cms, texts, secrets := sizes(t, client, "large-whole"); cms != 1 || texts != 1 || secrets != 0 {
		t.Errorf("%d ConfigMaps, %d text ConfigMaps, %d Secrets; want 1, 1 and none at the default budget", cms, texts, secrets)
	}
	want, err := whole.Get(ctx, "large-whole")
	if err != nil || len(want.Plans) != 10 || want.Files["main.tf"] != main {
		t.Fatalf("Get = %v, %v", want, err)
	}

	// The same record with a 4 KiB budget: every item spills, plan texts too.
	chunked := records.NewStore(client, ns, 10)
	records.SetChunkBudget(chunked, 4<<10)
	fill(t, chunked, "large-chunked")
	cms, textCMs, _ := sizes(t, client, "large-chunked")
	t.Logf("4 KiB budget: %d ConfigMaps, %d text ConfigMaps", cms, textCMs)
	if cms < 3 || textCMs < 3 {
		t.Errorf("%d ConfigMaps, %d text ConfigMaps; want several of each", cms, textCMs)
	}
	if extra := unreferenced(t, client, "large-chunked"); len(extra) > 0 {
		t.Errorf("chunk keys no index refers to: %v", extra)
	}
	got, err := chunked.Get(ctx, "large-chunked")
	if err != nil {
		t.Fatal(err)
	}
	got.Workspace, got.UpdatedAt = want.Workspace, want.UpdatedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chunked record reads back different:\n got %+v\nwant %+v", got, want)
	}
	for _, p := range want.Plans {
		if text, err := chunked.PlanText(ctx, "large-chunked", p.ID); err != nil || text != texts[p.ID] {
			t.Errorf("PlanText(%s) = %d bytes, %v; want %d", p.ID, len(text), err, len(texts[p.ID]))
		}
	}

	// Shrinking removes the chunks it no longer needs.
	mustUpdate(t, chunked, "large-chunked", func(r *records.Record) error {
		r.Files = map[string]string{"main.tf": "# small\n"}
		r.Plans = r.Plans[:1]
		return nil
	})
	if cms, textCMs, secrets := sizes(t, client, "large-chunked"); cms != 1 || textCMs != 1 || secrets != 0 {
		t.Errorf("after shrinking: %d ConfigMaps, %d text ConfigMaps, %d Secrets; want 1, 1 and none", cms, textCMs, secrets)
	}
	if extra := unreferenced(t, client, "large-chunked"); len(extra) > 0 {
		t.Errorf("chunk keys no index refers to: %v", extra)
	}
	if r, err := chunked.Get(ctx, "large-chunked"); err != nil || r.Files["main.tf"] != "# small\n" || len(r.Plans) != 1 {
		t.Errorf("Get after shrinking = %+v, %v", r, err)
	}
	if text, err := chunked.PlanText(ctx, "large-chunked", want.Plans[0].ID); err != nil || text != texts[want.Plans[0].ID] {
		t.Errorf("PlanText after shrinking: %v", err)
	}
	if err := chunked.Delete(ctx, "large-chunked"); err != nil {
		t.Fatal(err)
	}
	if cms, textCMs, secrets := objects(t, client, "large-chunked"); len(cms)+len(textCMs)+len(secrets) != 0 {
		t.Errorf("Delete left %d objects", len(cms)+len(textCMs)+len(secrets))
	}
}

// testConsistentReads: while a chunked record changes, Get and List only
// ever return one version of it, never main.tf of one and record.json of
// another.
func testConsistentReads(t *testing.T, client kubernetes.Interface) {
	ws := "consistent-reads"
	s := records.NewStore(client, ns, 3)
	records.SetChunkBudget(s, 2<<10)
	svc, nodes := bigService(40, 5)
	base := renderMain(t, svc, nodes)
	version := func(v int) func(*records.Record) error {
		return func(r *records.Record) error {
			_ = prepend(newPlan(fmt.Sprintf("plan-%012d", v), fmt.Sprint("text ", v), time.Now()))(r)
			r.Policy = fmt.Sprint("v", v)
			r.Files = map[string]string{"main.tf": fmt.Sprintf("# v%d\n%s", v, strings.Repeat(base, 1+v%3))}
			return nil
		}
	}
	mustUpdate(t, s, ws, version(0))

	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	check := func(r *records.Record) {
		var v int
		if _, err := fmt.Sscanf(r.Policy, "v%d", &v); err != nil {
			t.Errorf("policy %q", r.Policy)
			return
		}
		if want := fmt.Sprintf("# v%d\n%s", v, strings.Repeat(base, 1+v%3)); r.Files["main.tf"] != want {
			t.Errorf("record v%d with main.tf of %d bytes starting %.8q: torn read", v, len(r.Files["main.tf"]), r.Files["main.tf"])
		}
		reads.Add(1)
	}
	for range 2 {
		wg.Go(func() {
			reader := records.NewStore(client, ns, 3)
			for i := 0; !done.Load(); i++ {
				r, err := reader.Get(t.Context(), ws)
				if err != nil {
					t.Error(err)
					return
				}
				check(r)
				if i%4 != 0 {
					continue
				}
				all, err := reader.List(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				for _, r := range all {
					if r.Workspace == ws {
						check(r)
					}
				}
			}
		})
	}
	for v := 1; v <= 15; v++ {
		mustUpdate(t, s, ws, version(v))
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d consistent reads during 15 updates", reads.Load())
}

func testList(t *testing.T, client kubernetes.Interface) {
	s := records.NewStore(client, ns, 0)
	records.SetChunkBudget(s, 1<<10)
	for _, o := range []objectref.Ref{
		{Kind: "Service", Namespace: "list-b", Name: "web"},
		{Kind: "RouteSet", Name: "cluster"},
		{Kind: "Service", Namespace: "list-a", Name: "web"},
	} {
		ws := strings.ToLower(fmt.Sprintf("list-%s-%s-%s", o.Kind, o.Namespace, o.Name))
		mustUpdate(t, s, ws, func(r *records.Record) error {
			r.Object = o
			r.Files = map[string]string{"main.tf": strings.Repeat("# padding to spill\n", 100)}
			return nil
		})
	}
	all, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range all {
		if strings.HasPrefix(r.Workspace, "list-") {
			got = append(got, fmt.Sprintf("%s %s/%s %d", r.Object.Kind, r.Object.Namespace, r.Object.Name, len(r.Files["main.tf"])))
		}
	}
	want := []string{"RouteSet /cluster 1900", "Service list-a/web 1900", "Service list-b/web 1900"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %q; want %q", got, want)
	}
}
