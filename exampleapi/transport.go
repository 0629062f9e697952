package exampleapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"k8s.io/klog/v2"
)

// ObserveFunc is called once per API operation with the final HTTP status
// (0 when no answer was received) and the duration including retries.
type ObserveFunc func(op string, code int, d time.Duration)

// Options configure a Client or MetadataClient.
type Options struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:8440.
	Endpoint string
	// Token is sent as a bearer token. It never appears in errors or logs.
	Token string
	// RequestTimeout bounds one HTTP attempt (default 30s).
	RequestTimeout time.Duration
	// RetryMax is the number of retries after the first attempt (default 8;
	// negative disables retries).
	RetryMax int
	// RetryWaitMin/RetryWaitMax bound the exponential backoff (defaults
	// 100ms and 5s). A Retry-After header takes precedence.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter caps how long a Retry-After answer makes the client
	// wait before its next attempt (default 30s).
	MaxRetryAfter time.Duration
	// UserAgent is sent on every request.
	UserAgent string
	// Observe, if set, receives one call per operation (for metrics).
	Observe ObserveFunc
	// HTTPClient overrides the underlying client (its Timeout is kept).
	HTTPClient *http.Client
}

// transport is the plumbing shared by the control and metadata clients:
// auth, JSON, retries with backoff honouring Retry-After, typed errors.
type transport struct {
	base      *url.URL
	token     string
	userAgent string
	observe   ObserveFunc
	http      *retryablehttp.Client
}

func newTransport(o Options) (*transport, error) {
	if o.Endpoint == "" {
		return nil, errors.New("example api: endpoint is required")
	}
	base, err := url.Parse(strings.TrimRight(o.Endpoint, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("example api: invalid endpoint %q: want a URL such as http://127.0.0.1:8440", o.Endpoint)
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("example api: invalid endpoint %q: scheme must be http or https", o.Endpoint)
	}
	if o.Token == "" {
		return nil, errors.New("example api: token is required")
	}
	rc := retryablehttp.NewClient()
	if o.HTTPClient != nil {
		rc.HTTPClient = o.HTTPClient
	}
	rc.HTTPClient.Timeout = 30 * time.Second
	if o.RequestTimeout > 0 {
		rc.HTTPClient.Timeout = o.RequestTimeout
	}
	rc.RetryMax = 8
	if o.RetryMax != 0 {
		rc.RetryMax = max(o.RetryMax, 0)
	}
	rc.RetryWaitMin, rc.RetryWaitMax = 100*time.Millisecond, 5*time.Second
	if o.RetryWaitMin > 0 {
		rc.RetryWaitMin = o.RetryWaitMin
	}
	if o.RetryWaitMax > 0 {
		rc.RetryWaitMax = o.RetryWaitMax
	}
	// The default policy retries connection errors, 429 and 5xx (but not
	// 501); the backoff honours Retry-After up to MaxRetryAfter.
	maxRA := 30 * time.Second
	if o.MaxRetryAfter > 0 {
		maxRA = o.MaxRetryAfter
	}
	rc.Backoff = func(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
		if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
				return minDuration(time.Duration(s)*time.Second, maxRA)
			}
		}
		return retryablehttp.LinearJitterBackoff(min, max, attempt, resp)
	}
	rc.CheckRetry = retryablehttp.DefaultRetryPolicy
	// Hand the last response back after the final retry so it becomes a
	// typed error instead of an opaque "giving up".
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.Logger = klogLogger{}
	ua := o.UserAgent
	if ua == "" {
		ua = "exampleapi-go"
	}
	return &transport{base: base, token: o.Token, userAgent: ua, observe: o.Observe, http: rc}, nil
}

// request is one API call.
type request struct {
	op      string
	method  string
	path    string
	query   url.Values
	ifMatch int64 // 0: unconditional
	idemKey bool  // send an Idempotency-Key (creates)
	in      any
	out     any
}

// do performs r and decodes a 2xx body into r.out; other answers become
// *APIError.
func (t *transport) do(ctx context.Context, r request) (err error) {
	start := time.Now()
	code := 0
	defer func() {
		if t.observe != nil {
			t.observe(r.op, code, time.Since(start))
		}
	}()
	u := *t.base
	u.Path += r.path
	u.RawQuery = r.query.Encode()
	var body any
	if r.in != nil {
		b, err := json.Marshal(r.in)
		if err != nil {
			return fmt.Errorf("example api %s: encode request: %w", r.op, err)
		}
		body = b
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return fmt.Errorf("example api %s: %w", r.op, err)
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", t.userAgent)
	if r.in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.ifMatch > 0 {
		req.Header.Set("If-Match", strconv.Quote(strconv.FormatInt(r.ifMatch, 10)))
	}
	if r.idemKey {
		// One key per logical create, reused by every retry, so a create
		// whose answer was lost is not made twice.
		req.Header.Set("Idempotency-Key", newIdempotencyKey())
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return fmt.Errorf("example api %s: %w", r.op, scrub(err, t.token))
	}
	defer resp.Body.Close()
	code = resp.StatusCode
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("example api %s: read answer: %w", r.op, err)
	}
	if resp.StatusCode >= 300 {
		return decodeError(r.op, resp, data)
	}
	if r.out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, r.out); err != nil {
			return fmt.Errorf("example api %s: decode answer: %w", r.op, err)
		}
	}
	return nil
}

func decodeError(op string, resp *http.Response, data []byte) error {
	e := &APIError{Op: op, StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	var er ErrorResponse
	if json.Unmarshal(data, &er) == nil && er.Error.Code != "" {
		e.Code, e.Message, e.Field = er.Error.Code, er.Error.Message, er.Error.Field
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// scrub removes the token from transport errors, in case a URL or proxy
// error ever echoes it.
func scrub(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "[redacted]"))
}

func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// listAll walks every page of a listing.
func listAll[T any](ctx context.Context, t *transport, op, path string, q url.Values) ([]T, error) {
	if q == nil {
		q = url.Values{}
	}
	var all []T
	for {
		var page ListResponse[T]
		if err := t.do(ctx, request{op: op, method: http.MethodGet, path: path, query: q, out: &page}); err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextPageToken == "" {
			return all, nil
		}
		q.Set("page_token", page.NextPageToken)
	}
}

// klogLogger routes retryablehttp's messages to klog at high verbosity.
// retryablehttp logs method and URL only, never headers.
type klogLogger struct{}

func (klogLogger) Error(msg string, kv ...any) { klog.V(2).InfoS("example api: "+msg, kv...) }
func (klogLogger) Info(msg string, kv ...any)  { klog.V(4).InfoS("example api: "+msg, kv...) }
func (klogLogger) Debug(msg string, kv ...any) { klog.V(6).InfoS("example api: "+msg, kv...) }
func (klogLogger) Warn(msg string, kv ...any)  { klog.V(2).InfoS("example api: "+msg, kv...) }

// call performs r and returns its decoded answer, or nil and the error.
func call[T any](ctx context.Context, t *transport, r request) (*T, error) {
	var out T
	r.out = &out
	if err := t.do(ctx, r); err != nil {
		return nil, err
	}
	return &out, nil
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}
