// Package syncbuf is a buffer that goroutines may write while another
// reads it: a server's request log or klog's flushes in a test, what a
// provider server logged before it failed to serve.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex; the zero value is ready and
// keeps everything.
type Buffer struct {
	// Max, when positive, keeps only the last Max bytes written: a tail
	// of a log that may run long.
	Max int

	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if over := s.b.Len() - s.Max; s.Max > 0 && over > 0 {
		s.b.Next(over)
	}
	return n, err
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
