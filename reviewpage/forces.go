package reviewpage

import (
	"regexp"
	"strings"
)

// Terraform's plan text marks what forces a replacement: the record keeps
// that text (terraform show), and the JSON plan stream the controller
// reads names no attribute paths, so the page reads the marks from the
// text, as a reviewer would.
var (
	// "  # module.lb.example_load_balancer.this must be replaced"
	changeHeader = regexp.MustCompile(`^\s*# (\S+) (?:must|will) be `)
	// "      ~ internal = false -> true # forces replacement"
	forcingLine = regexp.MustCompile(`^\s*(?:[-+~]|-/\+|\+/-)\s+("[^"]*"|[A-Za-z0-9_.-]+)\s.*# forces replacement\s*$`)
)

// forcedBy maps each resource address of a plan's text to the attributes
// that force its replacement, in their order.
func forcedBy(text string) map[string][]string {
	out := map[string][]string{}
	addr := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if m := changeHeader.FindStringSubmatch(line); m != nil {
			addr = m[1]
			continue
		}
		if m := forcingLine.FindStringSubmatch(line); m != nil && addr != "" {
			out[addr] = append(out[addr], strings.Trim(m[1], `"`))
		}
	}
	return out
}
