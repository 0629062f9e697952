package simtest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/syncbuf"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// WithRequests hears of finished requests and leaves WithLogger's log whole.
func TestWithRequests(t *testing.T) {
	var log syncbuf.Buffer
	reqs := simtest.NewRequests()
	sim := simtest.Start(t, simtest.WithRequests(reqs), simtest.WithLogger(slog.New(slog.NewJSONHandler(&log, nil))))
	type waited struct {
		r   simtest.Request
		err error
	}
	waiting := make(chan waited, 1)
	go func() {
		r, err := reqs.Wait(t.Context(), func(r simtest.Request) bool { return r.Path == "/v1/regions" })
		waiting <- waited{r, err}
	}()
	req, _ := http.NewRequest(http.MethodGet, sim.URL+"/v1/regions", nil)
	req.Header.Set("Authorization", "Bearer "+sim.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case w := <-waiting:
		if r := w.r; w.err != nil || r != (simtest.Request{Listener: "control", Method: "GET", Path: "/v1/regions", Status: http.StatusOK}) {
			t.Errorf("request %+v, %v", w.r, w.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return the finished request")
	}
	if n := len(reqs.All()); n != 1 {
		t.Errorf("%d requests recorded, want 1", n)
	}
	if !strings.Contains(log.String(), `"path":"/v1/regions"`) {
		t.Errorf("the logger did not get the request line:\n%s", log.String())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := reqs.Wait(ctx, func(r simtest.Request) bool { return r.Method == http.MethodDelete }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait for a request that never comes: %v", err)
	}
}
