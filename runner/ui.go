package runner

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"
	"strings"
)

// uiMessage is one line of terraform's machine-readable UI (-json), the
// fields the runner uses. Planned changes carry no attribute values, so
// nothing sensitive passes through here.
type uiMessage struct {
	Level      string        `json:"@level"`
	Message    string        `json:"@message"`
	Type       string        `json:"type"`
	Diagnostic *uiDiagnostic `json:"diagnostic"`
	Change     *struct {
		Resource struct {
			Addr         string `json:"addr"`
			ResourceType string `json:"resource_type"`
		} `json:"resource"`
		Action    string `json:"action"`
		Reason    string `json:"reason"`
		Importing *struct {
			ID string `json:"id"`
		} `json:"importing"`
	} `json:"change"`
	Changes *struct {
		Add       int    `json:"add"`
		Change    int    `json:"change"`
		Import    int    `json:"import"`
		Remove    int    `json:"remove"`
		Operation string `json:"operation"`
	} `json:"changes"`
	Outputs map[string]struct {
		Sensitive bool            `json:"sensitive"`
		Value     json.RawMessage `json:"value"`
	} `json:"outputs"`
}

type uiDiagnostic struct {
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Detail   string `json:"detail"`
	Address  string `json:"address"`
}

func (d uiDiagnostic) String() string {
	s := d.Summary
	if d.Address != "" {
		s = d.Address + ": " + s
	}
	if d.Detail != "" {
		s += ": " + strings.Join(strings.Fields(d.Detail), " ")
	}
	return s
}

// uiStream collects what the runner needs from a -json command's output.
type uiStream struct {
	pw   *io.PipeWriter
	done chan struct{}

	errors   []string
	warnings []string
	planned  []ResourceChange
	drift    []ResourceChange
	summary  *uiMessage
	outputs  map[string]json.RawMessage
	redacted []string
}

func newUIStream() *uiStream {
	pr, pw := io.Pipe()
	s := &uiStream{pw: pw, done: make(chan struct{}), outputs: map[string]json.RawMessage{}}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var m uiMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			s.add(&m)
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	return s
}

// Writer is where terraform-exec writes the JSON stream.
func (s *uiStream) Writer() io.Writer { return s.pw }

// Close waits until every line was read.
func (s *uiStream) Close() {
	_ = s.pw.Close()
	<-s.done
}

func (s *uiStream) add(m *uiMessage) {
	switch m.Type {
	case "diagnostic":
		if m.Diagnostic == nil {
			return
		}
		if m.Diagnostic.Severity == "error" {
			s.errors = append(s.errors, m.Diagnostic.String())
		} else {
			s.warnings = append(s.warnings, m.Diagnostic.String())
		}
	case "planned_change", "resource_drift":
		if m.Change == nil {
			return
		}
		rc := ResourceChange{Address: m.Change.Resource.Addr, Type: m.Change.Resource.ResourceType, Action: m.Change.Action, Reason: m.Change.Reason,
			Importing: m.Change.Importing != nil}
		if m.Type == "planned_change" {
			s.planned = append(s.planned, rc)
		} else {
			s.drift = append(s.drift, rc)
		}
	case "change_summary":
		s.summary = m
	case "outputs":
		for k, o := range m.Outputs {
			if o.Sensitive {
				s.redacted = append(s.redacted, k)
				continue
			}
			s.outputs[k] = o.Value
		}
	}
}

// planSummary is what a plan's stream counted, with its planned changes
// sorted by address; saved and speculative plans read it alike. Drift is
// left to the caller (a speculative plan reports none).
func (s *uiStream) planSummary() PlanSummary {
	sum := PlanSummary{Resources: s.planned}
	if m := s.summary; m != nil && m.Changes != nil {
		sum.Add, sum.Change, sum.Import, sum.Remove = m.Changes.Add, m.Changes.Change, m.Changes.Import, m.Changes.Remove
	}
	for _, r := range sum.Resources {
		if r.Action == "remove" {
			sum.Forget++ // Terraform's change_summary does not count them
		}
	}
	sort.Slice(sum.Resources, func(i, j int) bool { return sum.Resources[i].Address < sum.Resources[j].Address })
	return sum
}
