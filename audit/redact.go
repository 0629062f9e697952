package audit

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces secret values.
const Redacted = "[redacted]"

// scrubber replaces secret values, also in the forms they take when
// quoted into an error message: JSON-escaped and URL-encoded.
type scrubber struct {
	values []string
	r      *strings.Replacer
}

func (s *scrubber) add(values ...string) {
	for _, v := range values {
		if v == "" {
			continue
		}
		s.values = append(s.values, v)
		if q, _ := json.Marshal(v); len(q) > 2 {
			s.values = append(s.values, string(q[1:len(q)-1]))
		}
		s.values = append(s.values, url.QueryEscape(v), url.PathEscape(v))
	}
	slices.Sort(s.values)
	s.values = slices.Compact(s.values)
	// Longest first: a secret containing another goes whole.
	slices.SortStableFunc(s.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(s.values))
	for _, v := range s.values {
		pairs = append(pairs, v, Redacted)
	}
	s.r = strings.NewReplacer(pairs...)
}

func (s *scrubber) string(v string) string {
	if s.r == nil {
		return v
	}
	return s.r.Replace(v)
}

// entry is e with every string scrubbed, Details keys included.
func (s *scrubber) entry(e Entry) Entry {
	if s.r == nil {
		return e
	}
	for _, f := range []*string{&e.Action, &e.Object, &e.Workspace, &e.PlanID, &e.Policy, &e.Outcome, &e.Summary, &e.Error, &e.Actor} {
		*f = s.string(*f)
	}
	if e.Details != nil {
		d := make(map[string]string, len(e.Details))
		for k, v := range e.Details {
			d[s.string(k)] = s.string(v)
		}
		e.Details = d
	}
	return e
}
