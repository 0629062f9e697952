package reviewpage

import (
	"maps"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// DiffLine is one line of a unified diff, with its kind for styling.
type DiffLine struct {
	Kind string // file, hunk, add, del, ctx
	Text string
}

// hclDiff is the unified diff (three lines of context) of every file
// between the applied rendering and the planned one, by file name.
func hclDiff(applied, planned map[string]string) []DiffLine {
	names := slices.Sorted(maps.Keys(mergeKeys(applied, planned)))
	var out []DiffLine
	for _, name := range names {
		a, b := applied[name], planned[name]
		if a == b {
			continue
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(a), B: difflib.SplitLines(b),
			FromFile: "applied/" + name, ToFile: "planned/" + name, Context: 3,
		})
		if err != nil {
			continue // difflib fails only on its writer
		}
		for line := range strings.Lines(text) {
			line = strings.TrimRight(line, "\n")
			kind := "ctx"
			switch {
			case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
				kind = "file"
			case strings.HasPrefix(line, "@@"):
				kind = "hunk"
			case strings.HasPrefix(line, "+"):
				kind = "add"
			case strings.HasPrefix(line, "-"):
				kind = "del"
			}
			out = append(out, DiffLine{Kind: kind, Text: line})
		}
	}
	return out
}
