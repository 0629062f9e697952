package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Without Max a Buffer keeps everything; with it, the last Max bytes,
// whatever the sizes of the writes and however many writers there are.
func TestBuffer(t *testing.T) {
	var all Buffer
	tail := &Buffer{Max: 8}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprint(&all, "ab")
				fmt.Fprint(tail, "ab")
			}
		})
	}
	wg.Wait()
	if got := all.String(); got != strings.Repeat("ab", 400) {
		t.Errorf("kept %d bytes, want 800", len(got))
	}
	if got := tail.String(); got != "abababab" {
		t.Errorf("tail %q, want the last 8 bytes", got)
	}
	fmt.Fprint(tail, "0123456789")
	if got := tail.String(); got != "23456789" {
		t.Errorf("after a write longer than Max: %q, want %q", got, "23456789")
	}
}
