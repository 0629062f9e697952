package exampleapi

import "fmt"

// checkTimeoutsAndRetry checks rule r's timeouts and retry, if any: they
// bound and repeat what the rule forwards, so a rule that redirects or
// answers itself takes neither.
func checkTimeoutsAndRetry(r Rule) error {
	for _, f := range []struct {
		name string
		set  bool
	}{{"timeouts", r.Timeouts != nil}, {"retry", r.Retry != nil}} {
		switch {
		case f.set && r.Redirect != nil:
			return ruleError(f.name, "is exclusive with redirect: a rule that redirects forwards nothing to wait for")
		case f.set && r.FixedResponse != nil:
			return ruleError(f.name, "is exclusive with fixed_response: a rule that answers the request itself forwards nothing to wait for")
		}
	}
	if t := r.Timeouts; t != nil {
		if err := checkDurationMS("timeouts.request_ms", t.RequestMS, MinTimeoutMS, MaxTimeoutMS); err != nil {
			return err
		}
		if err := checkDurationMS("timeouts.backend_request_ms", t.BackendRequestMS, MinTimeoutMS, MaxTimeoutMS); err != nil {
			return err
		}
		if t.RequestMS != 0 && t.BackendRequestMS > t.RequestMS {
			return ruleError("timeouts.backend_request_ms", "%d is longer than request_ms (%d): the request's timeout covers each of its tries",
				t.BackendRequestMS, t.RequestMS)
		}
	}
	if rt := r.Retry; rt != nil {
		if rt.Attempts < 1 || rt.Attempts > MaxRetryAttempts {
			return ruleError("retry.attempts", "%d is out of range (accepted: 1-%d tries after the first)", rt.Attempts, MaxRetryAttempts)
		}
		seen := map[int]int{}
		for k, c := range rt.StatusCodes {
			g := fmt.Sprintf("retry.status_codes[%d]", k)
			if !RetryCodes.Contains(c) {
				return ruleError(g, "%d is not a status code to retry (accepted: %s, a server's errors)", c, RetryCodes)
			}
			if j, dup := seen[c]; dup {
				return ruleError(g, "%d is also retry.status_codes[%d]", c, j)
			}
			seen[c] = k
		}
		return checkDurationMS("retry.backoff_ms", rt.BackoffMS, 1, MaxRetryBackoffMS)
	}
	return nil
}

// checkDurationMS checks a duration in milliseconds (field f): 0 (none)
// or min-max.
func checkDurationMS(f string, ms, min, max int) error {
	if ms != 0 && (ms < min || ms > max) {
		return ruleError(f, "%d ms is out of range (accepted: %d-%d ms, or 0 for none)", ms, min, max)
	}
	return nil
}
