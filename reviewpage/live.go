package reviewpage

import (
	"fmt"
	"net/http"
	"time"
)

// serveLive pushes a line to the page at every change of the records
// (server-sent events); the page then fetches itself again.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	heartbeat := time.NewTicker(25 * time.Second)
	defer heartbeat.Stop()
	for n := 1; ; n++ {
		changed := s.cache.wait()
		select {
		case <-r.Context().Done():
			return
		case <-heartbeat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-changed:
			fmt.Fprintf(w, "data: %d\n\n", n)
		}
		flusher.Flush()
	}
}
