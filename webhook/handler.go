package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime/debug"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/klog/v2"
)

// MaxRequestBytes bounds a review's body: the API server's own request
// limit is 3 MiB, so no legitimate review is larger.
const MaxRequestBytes = 3 << 20

// InternalErrorWarning is the warning returned when an AdmitFunc panics.
const InternalErrorWarning = "example-cloud-controller-manager: preview unavailable (internal error)"

// AdmitFunc decides on one admission request. A nil response allows the
// request unchanged.
type AdmitFunc func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// Handler serves admit as an admission.k8s.io/v1 AdmissionReview endpoint;
// name labels its logs.
func Handler(name string, admit AdmitFunc) http.Handler {
	return &handler{name: name, admit: admit}
}

type handler struct {
	name  string
	admit AdmitFunc
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "only POST is allowed", http.StatusMethodNotAllowed)
		return
	}
	review, status, err := decodeReview(w, r)
	if err != nil {
		klog.V(2).InfoS("Rejected admission review", "webhook", h.name, "status", status, "err", err)
		http.Error(w, err.Error(), status)
		return
	}
	req := review.Request
	start := time.Now()
	resp := *h.call(r.Context(), req) // a copy: admit may return a shared value
	resp.UID = req.UID
	klog.V(4).InfoS("Admission review", "webhook", h.name, "uid", req.UID, "kind", req.Kind.Kind,
		"namespace", req.Namespace, "name", req.Name, "operation", req.Operation,
		"allowed", resp.Allowed, "patched", len(resp.Patch) > 0, "duration", time.Since(start))

	out, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: &resp})
	if err != nil {
		klog.ErrorS(err, "Encoding admission response", "webhook", h.name, "uid", req.UID)
		http.Error(w, "encoding the response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(out); err != nil {
		klog.V(2).InfoS("Writing admission response", "webhook", h.name, "uid", req.UID, "err", err)
	}
}

// decodeReview reads a v1 AdmissionReview, returning the HTTP status to
// answer with when it cannot.
func decodeReview(w http.ResponseWriter, r *http.Request) (*admissionv1.AdmissionReview, int, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, http.StatusBadRequest, fmt.Errorf("content type %q is not application/json", r.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body exceeds %d bytes", MaxRequestBytes)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("reading body: %w", err)
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("decoding AdmissionReview: %w", err)
	}
	if gvk := review.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		return nil, http.StatusBadRequest, fmt.Errorf("expected admission.k8s.io/v1 AdmissionReview, got %q %q", review.APIVersion, review.Kind)
	}
	if review.Request == nil {
		return nil, http.StatusBadRequest, errors.New("AdmissionReview has no request")
	}
	return review, 0, nil
}

// call runs admit, turning a nil answer into "allowed" and a panic into
// "allowed with a warning": the webhooks fail open by design.
func (h *handler) call(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse) {
	defer func() {
		if p := recover(); p != nil {
			klog.ErrorS(fmt.Errorf("panic: %v", p), "Admission webhook panicked; allowing the request",
				"webhook", h.name, "uid", req.UID, "kind", req.Kind.Kind, "namespace", req.Namespace,
				"name", req.Name, "stack", string(debug.Stack()))
			resp = &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{InternalErrorWarning}}
		}
	}()
	if resp = h.admit(ctx, req); resp == nil {
		resp = &admissionv1.AdmissionResponse{Allowed: true}
	}
	return resp
}
