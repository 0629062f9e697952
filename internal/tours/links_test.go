package tours

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// mdLink is a markdown link's target: [text](target) or [text](target "title").
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// mdCode is what markdown shows as code, where a link is not one.
	mdFence = regexp.MustCompile("(?s)```.*?```")
	mdSpan  = regexp.MustCompile("`[^`\n]*`")
)

// TestRelativeLinks: every relative link of the repository's markdown
// (README.md, docs/ with its ADRs, deploy/...) names a file or directory
// that exists, so a record that points at code or at another record is
// not left pointing at nothing when the code moves. The ADR template's
// placeholders (NNNN) are not links.
func TestRelativeLinks(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := mdSpan.ReplaceAllString(mdFence.ReplaceAllString(string(b), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, ":") || strings.Contains(target, "NNNN") {
				continue // an anchor of the page, a URL, a template's placeholder
			}
			checked++
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d relative links; the docs have hundreds: is the link pattern wrong?", checked)
	}
}
