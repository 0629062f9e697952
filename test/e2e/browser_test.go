package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// browser is a headless Chromium (Debian's, installed by hack/chromium.sh
// and named by EXAMPLE_CHROMIUM), driven over a pipe by chromedp.
type browser struct {
	ctx context.Context
	log bytes.Buffer
}

// newBrowser starts Chromium for the test; it is closed at its end.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	bin := os.Getenv("EXAMPLE_CHROMIUM")
	if bin == "" {
		t.Fatal("EXAMPLE_CHROMIUM is not set: run the tests with make test, or set it to the path hack/chromium.sh prints")
	}
	b := &browser{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("log-level", "3"), chromedp.CombinedOutput(&b.log),
		// The machine's network is closed: no component updates, no sync.
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		if t.Failed() {
			t.Logf("chromium's output:\n%s", b.log.String())
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v\n%s", bin, err, b.log.String())
	}
	b.ctx = ctx
	return b
}

// tab is a new tab of b, closed at the test's end.
func (b *browser) tab(t testing.TB) context.Context {
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// do runs steps with a minute's bound, failing the test with what.
func do(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// text is the text of the element sel selects.
func text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	s, err := textOf(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// textOf is text for a page that changes while it is read: the page
// replaces an element it updates, and a read between finding the node
// and reading it fails ("No node with given id found"), so a loop that
// waits for a change retries on the error.
func textOf(ctx context.Context, sel string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		return "", fmt.Errorf("text of %s: %w", sel, err)
	}
	return s, nil
}

// screenshot saves the page as name in $EXAMPLE_SCREENSHOTS (docs/ when
// the docs are refreshed) or in the test's directory.
func screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("EXAMPLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	testkit.Must(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
}

// reviewPage is examplectl review --web running as u; url is what it
// printed (with the token).
type reviewPage struct {
	url  string
	base string
}

// startReviewPage starts examplectl review --web as u and reads its URL.
func (e *env) startReviewPage(t testing.TB, u *user) *reviewPage {
	t.Helper()
	cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), "review", "--web", "--kubeconfig", u.kubeconfig, "--namespace", namespace)
	out, err := cmd.StdoutPipe()
	testkit.Must(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	testkit.Must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("examplectl review --web as %s:\n%s", u.name, stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if s := strings.TrimSpace(sc.Text()); strings.HasPrefix(s, "http://127.0.0.1:") {
				found <- s
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case url := <-found:
		return &reviewPage{url: url, base: url[:strings.Index(url, "/?")]}
	case <-time.After(time.Minute):
		t.Fatalf("examplectl review --web printed no URL in a minute:\n%s", stderr.String())
	}
	return nil
}

func (p *reviewPage) String() string { return fmt.Sprintf("review page %s", p.base) }
