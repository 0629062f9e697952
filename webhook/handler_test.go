package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/types"
)

const reviewJSON = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"4b1c-uid","kind":{"group":"","version":"v1","kind":"Service"},"resource":{"group":"","version":"v1","resource":"services"},"namespace":"ns","name":"web","operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"}}}}`

func post(t *testing.T, h http.Handler, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func decodeResponse(t *testing.T, w *httptest.ResponseRecorder) *admissionv1.AdmissionReview {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil || out.Request != nil {
		t.Fatalf("response review: %s", w.Body)
	}
	return &out
}

func TestHandlerRoundTrip(t *testing.T) {
	var got *admissionv1.AdmissionRequest
	shared := &admissionv1.AdmissionResponse{Allowed: true}
	h := Handler("test", func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		got = req
		if ctx == nil {
			t.Error("no context")
		}
		if err := SetPatch(shared, AnnotationOp(nil, "review.example.com/author", "alice")); err != nil {
			t.Fatal(err)
		}
		return shared
	})
	out := decodeResponse(t, post(t, h, "application/json; charset=utf-8", reviewJSON))
	if got == nil || got.Name != "web" || got.UserInfo.Username != "alice" || !strings.Contains(string(got.Object.Raw), `"web"`) {
		t.Fatalf("request seen by admit: %+v", got)
	}
	r := out.Response
	if r.UID != types.UID("4b1c-uid") || !r.Allowed || r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("response: %+v", r)
	}
	if want := `[{"op":"add","path":"/metadata/annotations","value":{"review.example.com/author":"alice"}}]`; string(r.Patch) != want {
		t.Fatalf("patch %s, want %s", r.Patch, want)
	}
	if shared.UID != "" {
		t.Fatal("handler modified the response admit returned")
	}
}

func TestHandlerNilResponseAllows(t *testing.T) {
	h := Handler("test", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse { return nil })
	r := decodeResponse(t, post(t, h, "application/json", reviewJSON)).Response
	if !r.Allowed || r.UID != "4b1c-uid" || r.Patch != nil || r.Warnings != nil {
		t.Fatalf("response: %+v", r)
	}
}

func TestHandlerPanicFailsOpen(t *testing.T) {
	h := Handler("test", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		panic("boom")
	})
	r := decodeResponse(t, post(t, h, "application/json", reviewJSON)).Response
	if !r.Allowed || r.UID != "4b1c-uid" || len(r.Warnings) != 1 || r.Warnings[0] != InternalErrorWarning {
		t.Fatalf("response: %+v", r)
	}
}

func TestHandlerBadRequests(t *testing.T) {
	called := false
	h := Handler("test", func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
		called = true
		return nil
	})
	huge := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"` + strings.Repeat("x", MaxRequestBytes) + `"}}`
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"no content type", "", reviewJSON, http.StatusBadRequest},
		{"wrong content type", "text/plain", reviewJSON, http.StatusBadRequest},
		{"yaml", "application/yaml", reviewJSON, http.StatusBadRequest},
		{"oversized", "application/json", huge, http.StatusRequestEntityTooLarge},
		{"not JSON", "application/json", "{", http.StatusBadRequest},
		{"v1beta1", "application/json", strings.Replace(reviewJSON, "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1), http.StatusBadRequest},
		{"wrong kind", "application/json", strings.Replace(reviewJSON, `"kind":"AdmissionReview"`, `"kind":"Service"`, 1), http.StatusBadRequest},
		{"no request", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := post(t, h, tc.contentType, tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if w.Body.Len() > 200 {
				t.Fatalf("error message is not short: %d bytes", w.Body.Len())
			}
		})
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/mutate", nil))
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
		t.Fatalf("GET: status %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if called {
		t.Fatal("admit called for a bad request")
	}
}
