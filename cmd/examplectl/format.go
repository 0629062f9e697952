package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/example/cloud-provider-example/termsafe"
)

// now is the clock ages are measured with; tests pin it.
var now = time.Now

// age is kubectl's short age of t ("5m", "3d"), or - for no time.
func age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now().Sub(t)
	if d < 0 {
		d = 0
	}
	return duration.HumanDuration(d)
}

// stamp is t in UTC, to the second, or - for no time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// orDash is s, or - when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// firstLine is s's first line, cut to max runes, for a table cell; the
// full text is in -o json.
func firstLine(s string, max int) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > max {
		line, more = string(r[:max]), true
	}
	if more {
		line += " ..."
	}
	return line
}

// newTable is a kubectl-style table writer.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

// newFields is a table of "label: value" lines whose values start in the
// same column whichever labels are there.
func newFields(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, len("saved plan:")+3, 8, 3, ' ', 0)
}

// row writes cells tab-separated, each on one line with its control
// characters escaped (termsafe.Line): whatever a cell holds, it can neither
// drive the terminal nor break the table.
func row(w io.Writer, cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = termsafe.Line(c)
	}
	fmt.Fprintln(w, strings.Join(safe, "\t"))
}

// outputFlag adds -o: table (default) or json, and wide if allowed.
func outputFlag(cmd *cobra.Command, p *string, wide bool) {
	usage := "output format: json (default: a table)"
	if wide {
		usage = "output format: json, or wide for a table with more columns (default: a table)"
	}
	cmd.Flags().StringVarP(p, "output", "o", "", usage)
}

func checkOutput(format string, wide bool) error {
	switch {
	case format == "", format == "table", format == "json", wide && format == "wide":
		return nil
	case wide:
		return fmt.Errorf("unknown output format %q: want json or wide, or nothing for a table", format)
	}
	return fmt.Errorf("unknown output format %q: want json, or nothing for a table", format)
}

// writeJSON writes v indented, with what encoding/json leaves raw in
// strings (DEL, C1 and bidi controls) escaped as JSON escapes
// (termsafe.JSON): the same document, inert on a terminal.
func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(termsafe.JSON(data), '\n'))
	return err
}
