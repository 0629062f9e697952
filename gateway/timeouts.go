package gateway

import (
	"fmt"
	"regexp"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// An HTTPRoute rule's timeouts and retry, as the cloud rule's (in
// milliseconds); the cloud's own check (lbmodel.Rule.Validate) refuses
// what it cannot hold, such as a timeout past an hour or a 4xx to retry.

// defaultRetryAttempts are the tries after the first of a retry that
// names no attempts (implementation-specific in the Gateway API).
const defaultRetryAttempts = 1

// durationRE is a Gateway API Duration (GEP-2257), a strict subset of
// what time.ParseDuration reads.
var durationRE = regexp.MustCompile(`^([0-9]{1,5}(h|m|s|ms)){1,4}$`)

// withTiming is base with rule's timeouts and retry. A redirect forwards
// nothing to wait for or send again: it has neither.
func withTiming(base lbmodel.Rule, rule gatewayv1.HTTPRouteRule) lbmodel.Rule {
	if base.Redirect != nil {
		return base
	}
	if t := rule.Timeouts; t != nil {
		out := lbmodel.Timeouts{RequestMS: milliseconds(t.Request), BackendRequestMS: milliseconds(t.BackendRequest)}
		if out != (lbmodel.Timeouts{}) {
			base.Timeouts = &out
		}
	}
	if rt := rule.Retry; rt != nil {
		out := &lbmodel.Retry{Attempts: defaultRetryAttempts, BackoffMS: milliseconds(rt.Backoff)}
		if rt.Attempts != nil {
			out.Attempts = *rt.Attempts
		}
		for _, c := range rt.Codes {
			out.StatusCodes = append(out.StatusCodes, int(c))
		}
		base.Retry = out
	}
	return base
}

// milliseconds is d in milliseconds: 0 (none) for "0s" or no d. A
// duration that does not parse is unsupportedTiming's.
func milliseconds(d *gatewayv1.Duration) int {
	if d == nil {
		return 0
	}
	t, err := time.ParseDuration(string(*d))
	if err != nil {
		return 0
	}
	return int(t.Milliseconds())
}

// unsupportedTiming names the first duration of rule (at spec.rules[i];
// its timeouts', retry's or session's) that is no Gateway API Duration
// ("" for none): the API server's schema refuses them, so only an object
// it did not check has one.
func unsupportedTiming(rule gatewayv1.HTTPRouteRule, at string) string {
	check := func(field string, d *gatewayv1.Duration) string {
		if d == nil || durationRE.MatchString(string(*d)) {
			return ""
		}
		return fmt.Sprintf("%s.%s: %q is not a Gateway API duration (such as 500ms, 10s or 1h30m)", at, field, *d)
	}
	var out []string
	if t := rule.Timeouts; t != nil {
		out = append(out, check("timeouts.request", t.Request), check("timeouts.backendRequest", t.BackendRequest))
	}
	if rt := rule.Retry; rt != nil {
		out = append(out, check("retry.backoff", rt.Backoff))
	}
	if sp := rule.SessionPersistence; sp != nil {
		out = append(out, check("sessionPersistence.absoluteTimeout", sp.AbsoluteTimeout))
	}
	for _, why := range out {
		if why != "" {
			return why
		}
	}
	return ""
}
