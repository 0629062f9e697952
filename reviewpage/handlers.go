package reviewpage

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/example/cloud-provider-example/records"
)

func (s *Server) serveQueue(w http.ResponseWriter, r *http.Request) {
	all := s.cache.all()
	var locked, drifted []*records.Record
	for _, rec := range byObject(all) {
		if rec.Lock != nil {
			locked = append(locked, rec)
		}
		if rec.Drift != nil && rec.Drift.Detected {
			drifted = append(drifted, rec)
		}
	}
	s.render(w, r, "queue", http.StatusOK, Page{Title: "Plans awaiting approval", Live: true, Data: map[string]any{
		"Queue": Queue(all), "Locked": locked, "Drifted": drifted, "Records": len(all),
	}})
}

func (s *Server) serveObjects(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "objects", http.StatusOK, Page{Title: "Objects", Live: true, Data: byObject(s.cache.all())})
}

// record is the record the request's ws names, or a page saying why not.
func (s *Server) record(w http.ResponseWriter, r *http.Request) *records.Record {
	ws := r.URL.Query().Get("ws")
	rec := s.cache.get(ws)
	if rec == nil {
		s.fail(w, r, http.StatusNotFound, "No such record", fmt.Sprintf("No plan record of workspace %q: the object may have been deleted.", ws))
	}
	return rec
}

func (s *Server) serveObject(w http.ResponseWriter, r *http.Request) {
	rec := s.record(w, r)
	if rec == nil {
		return
	}
	data := map[string]any{"Record": rec, "Address": addressOf(rec)}
	events, err := s.eventsOf(r.Context(), rec)
	if err != nil {
		data["EventsError"] = err.Error()
	}
	reviews, err := s.reviewsOf(r.Context(), rec.Object)
	if err != nil {
		data["ReviewsError"] = err.Error()
	}
	trail := append(events, reviews...)
	sortTrail(trail)
	data["Trail"] = trail
	s.render(w, r, "object", http.StatusOK, Page{Title: describe(rec.Object), Live: true, Data: data})
}

// plan is the record and plan the request names, or a page saying why not.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) (*records.Record, *records.Plan) {
	rec := s.record(w, r)
	if rec == nil {
		return nil, nil
	}
	id := r.URL.Query().Get("id")
	p := rec.Find(id)
	if p == nil {
		s.fail(w, r, http.StatusNotFound, "No such plan", fmt.Sprintf("%s has no recorded plan %q: a newer plan may have replaced it (the record keeps the last ones).", describe(rec.Object), id))
	}
	return rec, p
}

func (s *Server) servePlan(w http.ResponseWriter, r *http.Request) {
	rec, p := s.plan(w, r)
	if p == nil {
		return
	}
	text, err := s.cfg.Store.PlanText(r.Context(), rec.Workspace, p.ID)
	events, eerr := s.eventsOf(r.Context(), rec)
	v := newPlanView(rec, p, text, s.cfg.User, events)
	if err != nil {
		v.TextError = err.Error()
	}
	data := map[string]any{"View": v}
	if eerr != nil {
		data["EventsError"] = eerr.Error()
	}
	s.render(w, r, "plan", http.StatusOK, Page{Title: p.ID + " of " + describe(rec.Object), Live: true, Data: data})
}

// serveConfirm asks, naming the plan (or lock) and what it changes.
func (s *Server) serveConfirm(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Query().Get("action") {
	case "approve":
		rec, p := s.plan(w, r)
		if p == nil {
			return
		}
		text, _ := s.cfg.Store.PlanText(r.Context(), rec.Workspace, p.ID)
		s.render(w, r, "confirm", http.StatusOK, Page{Title: "Approve " + p.ID, Data: map[string]any{
			"Action": "approve", "View": newPlanView(rec, p, text, s.cfg.User, nil)}})
	case "unlock":
		rec := s.record(w, r)
		if rec == nil {
			return
		}
		if rec.Lock == nil {
			s.fail(w, r, http.StatusConflict, "No lock", describe(rec.Object)+" has no recorded state lock: nothing to unlock.")
			return
		}
		s.render(w, r, "confirm", http.StatusOK, Page{Title: "Force open lock " + rec.Lock.ID, Data: map[string]any{
			"Action": "unlock", "Record": rec}})
	case "release":
		rec := s.record(w, r)
		if rec == nil {
			return
		}
		a := addressOf(rec)
		if a == nil || a.IP == "" {
			s.fail(w, r, http.StatusConflict, "Nothing to release", describe(rec.Object)+" is no reserved address the controller applied: nothing to release.")
			return
		}
		s.render(w, r, "confirm", http.StatusOK, Page{Title: "Release " + a.IP, Data: map[string]any{
			"Action": "release", "Record": rec, "Address": a}})
	default:
		s.fail(w, r, http.StatusBadRequest, "Unknown action", "The page asked for an action it does not know.")
	}
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	ws, id := r.PostFormValue("ws"), r.PostFormValue("id")
	msg, err := s.cfg.Actions.Approve(r.Context(), ws, id, strings.TrimSpace(r.PostFormValue("comment")))
	s.after(w, r, "/plan?"+url.Values{"ws": {ws}, "id": {id}}.Encode(), "Not approved", msg, err)
}

func (s *Server) unlock(w http.ResponseWriter, r *http.Request) {
	ws := r.PostFormValue("ws")
	msg, err := s.cfg.Actions.Unlock(r.Context(), ws, r.PostFormValue("lock"), strings.TrimSpace(r.PostFormValue("comment")))
	s.after(w, r, "/object?"+url.Values{"ws": {ws}}.Encode(), "Not unlocked", msg, err)
}

func (s *Server) release(w http.ResponseWriter, r *http.Request) {
	ws := r.PostFormValue("ws")
	msg, err := s.cfg.Actions.Release(r.Context(), ws, r.PostFormValue("ip"), strings.TrimSpace(r.PostFormValue("comment")))
	s.after(w, r, "/object?"+url.Values{"ws": {ws}}.Encode(), "Not released", msg, err)
}

// after sends the browser back to the page it acted from, with the
// outcome as that page's note (POST, then redirect, then GET).
func (s *Server) after(w http.ResponseWriter, r *http.Request, back, refused, msg string, err error) {
	n := note{Text: msg}
	if err != nil {
		n = note{Refused: true, Text: refused + ": " + err.Error()}
	}
	http.Redirect(w, r, back+"&note="+s.keep(n), http.StatusSeeOther)
}
