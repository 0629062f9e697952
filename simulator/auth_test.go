package simulator_test

import (
	"net/http"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestAuth(t *testing.T) {
	sim := simtest.Start(t)
	inst := control(t, sim).createInstance(instanceReq("node-1", "ex-west-1a"))

	tests := []struct {
		name, base, token, method, path string
		want                            int
		code                            string
	}{
		{"control without token", sim.URL, "", "GET", "/v1/instances", http.StatusUnauthorized, exampleapi.CodeUnauthorized},
		{"control wrong token", sim.URL, "nope", "GET", "/v1/instances", http.StatusUnauthorized, exampleapi.CodeUnauthorized},
		{"control read-only token", sim.URL, sim.ReadOnlyToken, "GET", "/v1/instances", http.StatusForbidden, exampleapi.CodeForbidden},
		{"control read-only token write", sim.URL, sim.ReadOnlyToken, "DELETE", "/v1/instances/" + inst.ID, http.StatusForbidden, exampleapi.CodeForbidden},
		{"control read-write token", sim.URL, sim.Token, "GET", "/v1/instances", http.StatusOK, ""},
		{"admin without token", sim.URL, "", "GET", "/admin/v1/faults", http.StatusUnauthorized, exampleapi.CodeUnauthorized},
		{"admin read-only token", sim.URL, sim.ReadOnlyToken, "GET", "/admin/v1/faults", http.StatusForbidden, exampleapi.CodeForbidden},
		{"admin read-write token", sim.URL, sim.Token, "GET", "/admin/v1/faults", http.StatusOK, ""},
		{"metadata without token", sim.MetadataURL, "", "GET", "/v1/instances/" + inst.ID, http.StatusUnauthorized, exampleapi.CodeUnauthorized},
		{"metadata wrong token", sim.MetadataURL, "nope", "GET", "/v1/instances/" + inst.ID, http.StatusUnauthorized, exampleapi.CodeUnauthorized},
		{"metadata read-only token", sim.MetadataURL, sim.ReadOnlyToken, "GET", "/v1/instances/" + inst.ID, http.StatusOK, ""},
		{"metadata read-write token", sim.MetadataURL, sim.Token, "GET", "/v1/instances/" + inst.ID, http.StatusOK, ""},
		{"control healthz without token", sim.URL, "", "GET", "/healthz", http.StatusOK, ""},
		{"metadata healthz without token", sim.MetadataURL, "", "GET", "/healthz", http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := newAPI(t, tc.base, tc.token).do(tc.method, tc.path, nil)
			if resp.status != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.status, tc.want, resp.body)
			}
			if tc.code != "" {
				e := newAPI(t, tc.base, tc.token).apiError(tc.want, tc.method, tc.path, nil)
				if e.Code != tc.code {
					t.Errorf("code %q, want %q", e.Code, tc.code)
				}
			}
		})
	}
}

func TestBearerSchemeRequired(t *testing.T) {
	sim := simtest.Start(t)
	req, _ := http.NewRequest(http.MethodGet, sim.URL+"/v1/regions", nil)
	req.Header.Set("Authorization", sim.Token) // no "Bearer "
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
}
