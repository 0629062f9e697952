package reviewpage

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/klog/v2"
)

// pages are the parsed templates, one per page, each with the layout.
type pages struct{ byName map[string]*template.Template }

var funcs = template.FuncMap{
	"age": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return duration.HumanDuration(max(time.Since(t), 0)) + " ago"
	},
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	},
	"describe": describe,
	"changes":  changesOf,
	"plans":    sortedPlans,
	"latest":   latestPlan,
	"confirmForm": func(form, action, ws, field, value, button, cancel string) confirmForm {
		return confirmForm{Form: form, Action: action, Workspace: ws, Field: field, Value: value, Button: button, Cancel: cancel}
	},
}

// confirmForm is a confirmation's form: it posts action for workspace with
// field=value (the plan or lock it acts on), and cancels to Cancel.
type confirmForm struct {
	Form, Action, Workspace, Field, Value, Button, Cancel string
}

func parsePages() (*pages, error) {
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range []string{"queue", "objects", "object", "plan", "confirm"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("review page template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// Page is what the layout reads of every page.
type Page struct {
	Title string
	User  string
	// Queue counts the plans awaiting approval (the header's badge).
	Queue int
	// Live: the page follows changes (not a confirmation).
	Live bool
	Note *note
	// Form is the form token.
	Form string
	Data any
}

// render writes page name; a template error is the server's, logged.
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, status int, pg Page) {
	pg.User, pg.Form, pg.Queue = s.cfg.User, s.guard.formToken(), s.cache.queued()
	if id := r.URL.Query().Get("note"); id != "" {
		pg.Note = s.noteOf(id)
	}
	var b bytes.Buffer
	if err := s.pages.byName[name].Execute(&b, pg); err != nil {
		klog.ErrorS(err, "cannot render review page", "page", name)
		http.Error(w, "examplectl review: cannot render the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// fail renders an error as the page's own message.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	s.render(w, r, "confirm", status, Page{Title: title, Note: &note{Refused: true, Text: msg}})
}
