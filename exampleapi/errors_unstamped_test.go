package exampleapi

import (
	"errors"
	"fmt"
	"testing"
)

// One failure met at two tries reads the same without its request ids,
// wrapped or joined; other text is kept.
func TestUnstamped(t *testing.T) {
	at := func(id string) error {
		return &APIError{Op: "GET /v1/addresses", StatusCode: 503, Message: "down", RequestID: id}
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{at("r-1"), "example api GET /v1/addresses: 503 down"},
		{fmt.Errorf("read address shop/a: %w", at("r-2")), "read address shop/a: example api GET /v1/addresses: 503 down"},
		{errors.Join(fmt.Errorf("one: %w", at("r-3")), at("r-4")), "one: example api GET /v1/addresses: 503 down\nexample api GET /v1/addresses: 503 down"},
		{errors.New("the Gateways are unread (request for x)"), "the Gateways are unread (request for x)"},
		{at(""), "example api GET /v1/addresses: 503 down"},
	} {
		if got := Unstamped(c.err); got != c.want {
			t.Errorf("Unstamped(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
