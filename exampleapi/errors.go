package exampleapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Sentinel errors; match them with errors.Is. The concrete error is *APIError.
var (
	ErrInvalid            = errors.New("invalid argument")
	ErrUnauthorized       = errors.New("unauthorized")
	ErrForbidden          = errors.New("forbidden")
	ErrNotFound           = errors.New("not found")
	ErrConflict           = errors.New("conflict")
	ErrPreconditionFailed = errors.New("precondition failed")
	ErrRateLimited        = errors.New("rate limited")
	ErrUnavailable        = errors.New("unavailable")
)

// APIError is a non-2xx answer of the Example API. It never carries
// credentials: only the operation, status and the server's error body.
type APIError struct {
	Op         string
	StatusCode int
	Code       string
	Message    string
	Field      string
	RequestID  string
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	s := fmt.Sprintf("example api %s: %d %s", e.Op, e.StatusCode, msg)
	if e.RequestID != "" {
		s += " (request " + e.RequestID + ")"
	}
	return s
}

// Is maps the HTTP status to the sentinel errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrInvalid:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrPreconditionFailed:
		return e.StatusCode == http.StatusPreconditionFailed
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrUnavailable:
		return e.StatusCode >= 500
	}
	return false
}

// IsNotFound reports whether err is a 404 from the API.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a 409 from the API.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsPreconditionFailed reports whether err is a 412 (stale If-Match).
func IsPreconditionFailed(err error) bool { return errors.Is(err, ErrPreconditionFailed) }
