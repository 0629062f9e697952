package exampleapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
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

// Unstamped is err's text without the request ids of the cloud's
// answers in it (APIError.RequestID): one failure, met again at every
// try, reads the same each time.
func Unstamped(err error) string {
	s := err.Error()
	var walk func(error)
	walk = func(err error) {
		if api, ok := err.(*APIError); ok && api.RequestID != "" { //nolint:errorlint // the walk unwraps, one link at a time
			s = strings.ReplaceAll(s, " (request "+api.RequestID+")", "")
		}
		switch u := err.(type) { //nolint:errorlint // the walk unwraps, one link at a time
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return s
}

// sentinelStatus is the HTTP status each sentinel error stands for, but
// ErrUnavailable, which is any 5xx.
var sentinelStatus = map[error]int{
	ErrInvalid:            http.StatusBadRequest,
	ErrUnauthorized:       http.StatusUnauthorized,
	ErrForbidden:          http.StatusForbidden,
	ErrNotFound:           http.StatusNotFound,
	ErrConflict:           http.StatusConflict,
	ErrPreconditionFailed: http.StatusPreconditionFailed,
	ErrRateLimited:        http.StatusTooManyRequests,
}

// Is maps the HTTP status to the sentinel errors.
func (e *APIError) Is(target error) bool {
	if target == ErrUnavailable {
		return e.StatusCode >= 500
	}
	code, ok := sentinelStatus[target]
	return ok && e.StatusCode == code
}

// IsNotFound reports whether err is a 404 from the API.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsConflict reports whether err is a 409 from the API.
func IsConflict(err error) bool { return errors.Is(err, ErrConflict) }

// IsPreconditionFailed reports whether err is a 412 (stale If-Match).
func IsPreconditionFailed(err error) bool { return errors.Is(err, ErrPreconditionFailed) }
