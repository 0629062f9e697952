package simulator_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/syncbuf"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestRequestLogNeverContainsTokens(t *testing.T) {
	var buf syncbuf.Buffer
	sim := simtest.Start(t, simtest.WithLogger(slog.New(slog.NewJSONHandler(&buf, nil))))
	c := control(t, sim)
	resp := c.must(http.StatusCreated, "POST", "/v1/instances", instanceReq("n1", "ex-west-1a"), nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/instances/i-nope?token="+"x", nil)
	metadata(t, sim).must(http.StatusOK, "GET", "/healthz", nil, nil)
	newAPI(t, sim.URL, "wrong-"+sim.Token).apiError(http.StatusUnauthorized, "GET", "/v1/regions", nil)
	sim.Stop()

	log := buf.String()
	for _, secret := range []string{sim.Token, sim.ReadOnlyToken, "Bearer", "Authorization"} {
		if strings.Contains(log, secret) {
			t.Errorf("log contains %q:\n%s", secret, log)
		}
	}
	var found bool
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if line["request_id"] == resp.header.Get("X-Request-Id") {
			found = true
			if line["method"] != "POST" || line["path"] != "/v1/instances" || line["status"] != float64(201) || line["duration_ms"] == nil {
				t.Errorf("log line %v", line)
			}
		}
	}
	if !found {
		t.Errorf("no log line with request id %s:\n%s", resp.header.Get("X-Request-Id"), log)
	}
}
