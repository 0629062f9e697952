package review

import "github.com/example/cloud-provider-example/termsafe"

// Inert is err with its text made inert (termsafe), for errors the service
// controller puts in events and logs whatever text a tenant got into
// them. The chain is kept: a RetryError is still one.
func Inert(err error) error {
	if err == nil {
		return nil
	}
	return inertError{err}
}

type inertError struct{ err error }

func (e inertError) Error() string { return termsafe.Text(e.err.Error()) }
func (e inertError) Unwrap() error { return e.err }
