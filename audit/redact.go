package audit

import "github.com/example/cloud-provider-example/redact"

// Redacted replaces secret values.
const Redacted = redact.Marker

// scrubber replaces secret values in every form they take when quoted
// into an error message, and connection-string passwords (package redact).
type scrubber struct{ s *redact.Scrubber }

func newScrubber() *scrubber { return &scrubber{s: redact.New()} }

func (s *scrubber) add(values ...string) { s.s.Add(values...) }

func (s *scrubber) set(source string, values ...string) { s.s.Set(source, values...) }

func (s *scrubber) string(v string) string { return s.s.String(v) }

// entry is e with every string scrubbed, Details keys included.
func (s *scrubber) entry(e Entry) Entry {
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
