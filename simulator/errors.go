package simulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/example/cloud-provider-example/exampleapi"
)

// APIError is an error with an HTTP status and the contract's error body.
// Operations return it for everything the caller did wrong; any other error
// is reported as 500 internal.
type APIError struct {
	Status  int
	Code    string
	Message string
	Field   string
	// RetryAfter, in seconds, is sent as the Retry-After header when > 0.
	RetryAfter int
}

func (e *APIError) Error() string { return e.Message }

// invalid reports a validation failure of one request field. The message
// starts with the field so it reads well on its own.
func invalid(field, format string, args ...any) *APIError {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return &APIError{Status: http.StatusBadRequest, Code: exampleapi.CodeInvalid, Message: msg, Field: field}
}

func notFound(kind, id string) *APIError {
	return &APIError{Status: http.StatusNotFound, Code: exampleapi.CodeNotFound, Message: fmt.Sprintf("%s %q not found", kind, id)}
}

func conflict(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusConflict, Code: exampleapi.CodeConflict, Message: fmt.Sprintf(format, args...)}
}

func preconditionFailed(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusPreconditionFailed, Code: exampleapi.CodePreconditionFailed, Message: fmt.Sprintf(format, args...)}
}

var (
	errUnauthorized = &APIError{Status: http.StatusUnauthorized, Code: exampleapi.CodeUnauthorized, Message: "missing or invalid bearer token"}
	errForbidden    = &APIError{Status: http.StatusForbidden, Code: exampleapi.CodeForbidden, Message: "the read-only token is only valid on the metadata API"}
)

// writeJSON answers status with v as the JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, nil, fmt.Errorf("encoding response: %w", err))
		return
	}
	writeRawJSON(w, status, body)
}

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// writeObject answers a single object with its version as the ETag.
func writeObject(w http.ResponseWriter, status int, v any, version int64) {
	w.Header().Set("ETag", etag(version))
	writeJSON(w, status, v)
}

// writeError answers err in the contract's error format. Errors that are not
// *APIError are internal: they are logged, and the client gets a generic
// message so no implementation detail leaks.
func writeError(w http.ResponseWriter, logger *slog.Logger, err error) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		if logger != nil {
			logger.Error("internal error", "error", err)
		}
		apiErr = &APIError{Status: http.StatusInternalServerError, Code: exampleapi.CodeInternal, Message: "internal error"}
	}
	if apiErr.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(apiErr.RetryAfter))
	}
	writeJSON(w, apiErr.Status, exampleapi.ErrorResponse{Error: exampleapi.ErrorBody{
		Code: apiErr.Code, Message: apiErr.Message, Field: apiErr.Field,
	}})
}

func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }
