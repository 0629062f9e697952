package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// maxBodyBytes bounds request bodies; real requests are a few KiB.
const maxBodyBytes = 1 << 20

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, invalid("", "request body is larger than %d bytes", maxBodyBytes)
	case err != nil:
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return body, nil
}

// decodeJSON decodes a request body strictly: unknown fields and trailing
// data are errors, reported with the offending field where known.
func decodeJSON(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("", "request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return invalid(typeErr.Field, "expected a JSON %s, got %s", typeErr.Type, typeErr.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return invalid(field, "unknown field")
		}
		return invalid("", "invalid JSON body: %v", err)
	}
	if dec.More() {
		return invalid("", "invalid JSON body: unexpected data after the JSON object")
	}
	return nil
}

// parseInstanceFilter reads ?name=&zone=&region=&tag=k=v&tag=k.
func parseInstanceFilter(q url.Values) (instanceFilter, error) {
	f := instanceFilter{name: q.Get("name"), zone: q.Get("zone"), region: q.Get("region")}
	if n := len(q["tag"]); n > exampleapi.MaxTags {
		return f, invalid("tag", "has %d tag filters (at most %d)", n, exampleapi.MaxTags)
	}
	for _, t := range q["tag"] {
		k, v, hasValue := strings.Cut(t, "=")
		if k == "" {
			return f, invalid("tag", "%q is not a tag filter (accepted: key=value or key)", t)
		}
		if f.tags == nil {
			f.tags = map[string]*string{}
		}
		f.tags[k] = nil
		if hasValue {
			f.tags[k] = &v
		}
	}
	return f, nil
}
