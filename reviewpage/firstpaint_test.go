package reviewpage

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/runner"
)

// BenchmarkFirstPaint is the review page's first paint with 1,000 plan
// records in a real API server (100 of them awaiting approval), in
// headless Chromium: from navigation to the first contentful paint, as
// the browser reports it (ms/first-paint, target under 1,000), the queue
// page's server time (ms/queue-response) and the server's start, which
// reads every record once (ms/load).
func BenchmarkFirstPaint(b *testing.B) {
	const n, waiting = 1000, 100
	c := testcluster.Start(b)
	cfg := rest.CopyConfig(c.Admin)
	cfg.QPS, cfg.Burst = -1, 0
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := "example-ccm"
	if _, err := client.CoreV1().Namespaces().Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	store := records.NewStore(client, ns, 0)
	fill(b, store, n, waiting)

	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	srv, err := Listen(ctx, Config{Client: client, Dynamic: dynamic.NewForConfigOrDie(cfg), Store: store, Namespace: ns, User: "bench"}, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	if got := len(srv.cache.all()); got != n {
		b.Fatalf("the page read %d records; want %d", got, n)
	}
	go func() { _ = srv.Serve(ctx) }()

	bin := os.Getenv("EXAMPLE_CHROMIUM")
	if bin == "" {
		b.Fatal("EXAMPLE_CHROMIUM is not set: run make bench, or set it to the path hack/chromium.sh prints")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.WindowSize(1280, 900), chromedp.Flag("log-level", "3"),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true))...)
	b.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	b.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		b.Fatal(err)
	}
	// The token becomes a cookie once; each round then loads the queue.
	if err := chromedp.Do(browser, chromedp.Navigate(srv.URL())); err != nil {
		b.Fatal(err)
	}
	base := srv.URL()[:strings.Index(srv.URL(), "/?")]
	var paint, response float64
	b.ResetTimer()
	for b.Loop() {
		if err := chromedp.Do(browser, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("table.list"))); err != nil {
			b.Fatal(err)
		}
		// The paint entry is queued just after the paint: poll briefly.
		var fcp float64
		for range 50 {
			fcp, err = chromedp.Run(browser, chromedp.Evaluate[float64](`(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: 0}).startTime`))
			if err != nil {
				b.Fatal(err)
			}
			if fcp > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		resp, err := chromedp.Run(browser, chromedp.Evaluate[float64](`(() => { const n = performance.getEntriesByType('navigation')[0]; return n.responseEnd - n.requestStart })()`))
		if err != nil {
			b.Fatal(err)
		}
		paint += fcp
		response += resp
	}
	b.ReportMetric(paint/float64(b.N), "ms/first-paint")
	b.ReportMetric(response/float64(b.N), "ms/queue-response")
	b.ReportMetric(float64(load.Milliseconds()), "ms/load")
}

// fill writes n records of Services, waiting of them with a plan awaiting
// approval, each with a rendering, its applied one and ten plans.
func fill(b *testing.B, store *records.Store, n, waiting int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				ws := fmt.Sprintf("bench-service-shop-web-%04d-%08x", i, i)
				_, err := store.Update(context.Background(), ws, func(r *records.Record) error {
					r.Object = objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: fmt.Sprintf("web-%04d", i), UID: fmt.Sprintf("uid-%d", i)}
					r.Workspace, r.Policy, r.UpdatedAt = ws, "manual", time.Now()
					r.Files, r.AppliedFiles = map[string]string{"main.tf": mainV2}, map[string]string{"main.tf": mainV1}
					for k := range records.DefaultKeep {
						p := records.Plan{ID: fmt.Sprintf("plan-%06x%06x", i, k), Kind: records.KindChange, Outcome: records.Applied,
							PlannedAt: time.Now().Add(-time.Duration(k) * time.Hour), Policy: "manual", Text: replaceText,
							Summary:      runner.PlanSummary{Add: 1, Remove: 1, Resources: []runner.ResourceChange{{Address: "module.load_balancer.example_load_balancer.this", Action: "replace"}}},
							Contributors: records.Contributors{Authors: []string{"system:serviceaccount:shop:dev"}}}
						if k == 0 && i < waiting {
							p.Outcome = records.AwaitingApproval
						}
						r.Plans = append(r.Plans, p)
					}
					return nil
				})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
