package netapi

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// events is /events: the master event bus as server-sent events. The
// token may come in the query string (?token= or ?salt_token=).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if tok == "" {
		tok = r.URL.Query().Get("salt_token")
	}
	if tok != "" {
		r.Header.Set("X-Auth-Token", tok)
	}
	if _, err := s.authenticate(r); err != nil {
		if he, ok := err.(*httpError); ok {
			writeErrorPage(w, he)
			return
		}
		writeErrorPage(w, &httpError{code: 500})
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeErrorPage(w, &httpError{code: 500})
		return
	}
	ev, err := s.client.Subscribe(r.Context(), nil, 4096)
	if err != nil {
		writeErrorPage(w, &httpError{code: 503, msg: "Salt Master is not available."})
		return
	}
	defer ev.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream;charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 400\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-ev.C():
			if !ok {
				return
			}
			b, err := json.Marshal(map[string]any{"tag": e.Tag, "data": jsonable(e.Data)})
			if err != nil {
				continue
			}
			if _, err := fmt.Fprintf(w, "tag: %s\ndata: %s\n\n", e.Tag, b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
